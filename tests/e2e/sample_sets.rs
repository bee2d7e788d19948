use crate::common::*;

#[test]
fn greedy_beats_random_and_the_log_replays() {
    let p = play(&greedy_bot(), &random_bot(), &["--seed", "11"]);
    let s = &p.summary;
    assert_eq!(s["games_played"], 7);
    assert_eq!(s["seed"], 11);
    let points = [
        s["points"][0].as_u64().expect("points"),
        s["points"][1].as_u64().expect("points"),
    ];
    assert!(
        points[0] > points[1],
        "greedy should outscore random: {points:?}"
    );
    assert_eq!(s["bots"][0]["name"], "python-greedy");
    assert_eq!(s["bots"][1]["name"], "python-random");
    assert_eq!(s["bots"][0]["faults"], 0);
    assert_eq!(s["bots"][1]["faults"], 0);
    assert_eq!(of_type(&p.records, "game-end").len(), 7);
    let header = &named_header(&p.records);
    assert_eq!(header["seed"], 11);
    assert_eq!(header["bots"][0]["name"], "python-greedy");
    assert_eq!(header["rules"]["preset"], "hus");
    // Both bots exited by themselves after bye.
    let shutdowns = of_type(&p.records, "shutdown");
    assert_eq!(shutdowns.len(), 2);
    for s in shutdowns {
        assert_eq!(s["stopped_by"], "itself");
        assert_eq!(s["status"], "exit status 0");
        assert_eq!(s["leaked"], false);
    }
    assert!(p
        .log
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.contains("-11-greedy_bot-vs-random_bot")));
}

#[test]
fn the_same_seed_draws_the_same_lots() {
    let firsts = |seed: &str| -> Vec<u64> {
        let p = play(
            &random_bot(),
            &random_bot(),
            &["--seed", seed, "--games", "9"],
        );
        of_type(&p.records, "game-start")
            .iter()
            .map(|g| g["first"].as_u64().expect("first"))
            .collect()
    };
    let a = firsts("42");
    assert_eq!(a, firsts("42"));
    assert!(
        a.contains(&0) && a.contains(&1),
        "lots should vary over 9 games: {a:?}"
    );
}

#[test]
fn every_preset_and_some_widths_play_to_the_end() {
    for (preset, width) in [
        ("rulebook", "8"),
        ("mancala-world", "8"),
        ("hus", "12"),
        ("mancala-world", "16"),
        ("rulebook", "9"),
    ] {
        let p = play(
            &greedy_bot(),
            &random_bot(),
            &[
                "--rules", preset, "--width", width, "--games", "2", "--seed", "3",
            ],
        );
        assert_eq!(p.summary["games_played"], 2, "{preset} {width}");
        assert_eq!(p.records[0]["rules"]["preset"], preset);
        assert_eq!(p.records[0]["rules"]["width"].to_string(), width);
        let total_faults: u64 = (0..2)
            .map(|b| p.summary["bots"][b]["faults"].as_u64().expect("faults"))
            .sum();
        assert_eq!(total_faults, 0, "{preset} {width}");
    }
}

#[test]
fn a_chess_clock_counts_down() {
    let p = play(
        &random_bot(),
        &random_bot(),
        &["--clock", "5s+100ms", "--games", "1", "--seed", "5"],
    );
    assert_eq!(p.records[0]["time"]["mode"], "clock");
    assert_eq!(p.records[0]["time"]["base_ms"], 5000);
    assert_eq!(p.records[0]["time"]["increment_ms"], 100);
    assert_eq!(p.summary["games_played"], 1);
}

#[test]
fn the_console_reports_each_game_and_the_table() {
    let dir = LogDir::new();
    let log_dir = dir.path().to_str().expect("utf-8");
    let out = hus(&[
        "match",
        &greedy_bot(),
        &random_bot(),
        "--games",
        "3",
        "--seed",
        "9",
        "--log-dir",
        log_dir,
        GENEROUS[0],
        GENEROUS[1],
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let game_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("game ")).collect();
    assert_eq!(game_lines.len(), 3, "{text}");
    assert!(
        game_lines[0].contains(" began; ") && game_lines[0].contains(" plies"),
        "{text}"
    );
    assert!(
        text.contains("mean ms") && text.contains("max ms"),
        "{text}"
    );
    assert!(text.contains("seed 9"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("log: ")), "{text}");
    let quiet = hus(&[
        "match",
        &random_bot(),
        &random_bot(),
        "--games",
        "1",
        "--quiet",
        "--log-dir",
        log_dir,
    ]);
    assert!(quiet.status.success());
    assert!(quiet.stdout.is_empty());
}

#[test]
fn early_stop_ends_the_set_once_it_is_decided() {
    // Bot A faults in every game; under mancala-world a game is worth at most 1 point,
    // so after 4 games (4-0 with 3 left) nothing can change who wins.
    let p = play(
        &misbehave("exit 1"),
        &random_bot(),
        &["--rules", "mancala-world", "--early-stop", "--seed", "4"],
    );
    assert_eq!(p.summary["games_played"], 4);
    assert_eq!(p.summary["points"], serde_json::json!([0, 4]));
    assert_eq!(p.records[0]["early_stop"], true);
    let without = play(
        &misbehave("exit 1"),
        &random_bot(),
        &["--rules", "mancala-world", "--seed", "4"],
    );
    assert_eq!(without.summary["games_played"], 7);
}

#[test]
fn a_relative_bot_path_is_the_referees_directory_even_with_bot_dir() {
    let dir = LogDir::new();
    let elsewhere = LogDir::new();
    let script = dir.path().join("bot.sh");
    let random = root().join("sample-bots/python/random_bot.py");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nexec python3 {}\n", random.display()),
    )
    .expect("write");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hus"))
        .current_dir(dir.path())
        .args([
            "match",
            "./bot.sh",
            "./bot.sh",
            "--games",
            "1",
            "--quiet",
            "--bot-dir",
        ])
        .arg(elsewhere.path())
        .args(GENEROUS)
        .arg("--log-dir")
        .arg(elsewhere.path())
        .output()
        .expect("hus runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_closed_stdout_neither_panics_nor_stops_the_set() {
    use std::io::{BufRead, BufReader};
    let dir = LogDir::new();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "match",
            &random_bot(),
            &random_bot(),
            "--games",
            "3",
            "--log-dir",
        ])
        .arg(dir.path())
        .args(GENEROUS)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("hus starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("a first line");
    // The reader is dropped here: `hus match ... | head -1`.
    let out = child.wait_with_output().expect("hus ends");
    assert!(first.starts_with("hus: hus at width 8"), "{first}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    let records = read_log(&file_ending(dir.path(), ".jsonl"));
    verify_log(&records);
    assert_eq!(
        records.last().map(|r| r["type"].clone()),
        Some(serde_json::json!("set-end"))
    );
}
