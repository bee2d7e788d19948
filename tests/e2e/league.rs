//! `hus league` and `hus standings`: a league of the sample bots, resume after SIGKILL
//! and SIGTERM with the same final standings as an uninterrupted run, edits of the file
//! between runs, refused files and a refused second runner.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::sample_bots::alphabeta;

fn hus_bin() -> &'static str {
    env!("CARGO_BIN_EXE_hus")
}

/// A deterministic bot that sleeps `delay_ms` before each move.
fn paced(seed: u32, delay_ms: u32) -> String {
    format!(
        "python3 {} {seed} {delay_ms}",
        root().join("tests/bots/paced.py").display()
    )
}

/// The built-in random mover with a seed: deterministic and instant.
fn hus_random(seed: u32) -> String {
    format!("{} random-bot --seed {seed}", hus_bin())
}

/// A league file's text: `head` (top-level keys), then one [[bot]] per (name, command).
fn league_text(head: &str, bots: &[(&str, String)]) -> String {
    let mut text = format!("{head}\n");
    for (name, command) in bots {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{command}\"\n"
        ));
    }
    text
}

/// Writes `L.toml` into `dir` and returns its path.
fn write_league(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("L.toml");
    std::fs::write(&path, text).expect("write league file");
    path
}

fn league(file: &Path, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "league".to_string(),
        file.display().to_string(),
        "--dir".into(),
        dir.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Command::new(hus_bin())
        .args(&args)
        .output()
        .expect("hus league runs")
}

fn spawn_league(file: &Path, dir: &Path) -> Child {
    Command::new(hus_bin())
        .args(["league", &file.display().to_string(), "--dir"])
        .arg(dir)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus league starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `hus standings DIR --format json`.
fn standings(dir: &Path) -> Value {
    let out = Command::new(hus_bin())
        .args(["standings", &dir.display().to_string(), "--format", "json"])
        .output()
        .expect("hus standings runs");
    assert!(out.status.success(), "hus standings: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("standings are JSON")
}

/// The standings without what depends on the machine's speed (time per move).
fn comparable(mut v: Value) -> Value {
    if let Some(bots) = v["bots"].as_array_mut() {
        for b in bots {
            if let Some(o) = b.as_object_mut() {
                o.remove("mean_move_ms");
            }
        }
    }
    v
}

/// How many logs `dir/logs` holds: finished sets' (compressed), running or interrupted
/// ones' (plain).
fn all_logs(dir: &Path) -> usize {
    logs(dir, ".jsonl").len() + logs(dir, ".jsonl.zst").len()
}

/// The logs in `dir/logs` whose names end with `suffix`, sorted.
fn logs(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir.join("logs"))
        .expect("logs directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

/// The finished sets' logs: compressed once the set is finished (`STEM.jsonl.zst`).
fn complete_logs(dir: &Path) -> Vec<PathBuf> {
    logs(dir, ".jsonl.zst")
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains(".partial-"))
        .collect()
}

fn replay_status(log: &Path) -> Option<i32> {
    hus(&["replay", log.to_str().expect("utf-8 path")])
        .status
        .code()
}

/// Every complete log is a whole set, checked with the engine and by `hus replay`; and
/// the store holds exactly one finished set per log, with the same points.
fn check_logs_against_standings(dir: &Path, s: &Value, sets: usize, games_per_set: u64) {
    let complete = complete_logs(dir);
    assert_eq!(
        complete.len(),
        sets,
        "one complete log per set: {complete:?}"
    );
    let mut points: std::collections::BTreeMap<String, u64> = Default::default();
    for log in &complete {
        let records = read_log(log);
        verify_log(&records);
        assert_eq!(replay_status(log), Some(0), "hus replay {}", log.display());
        let end = records.last().expect("records");
        assert_eq!(end["type"], "set-end", "{}", log.display());
        assert_eq!(end["games_played"].as_u64(), Some(games_per_set));
        // r1-A-vs-B.jsonl.zst: the seats' names are in the file name.
        let name = log
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let stem = name.trim_end_matches(".jsonl.zst").to_string();
        let (_, pair) = stem.split_once('-').expect("round prefix");
        let (a, b) = pair.split_once("-vs-").expect("A-vs-B");
        *points.entry(a.to_string()).or_default() += end["points"][0].as_u64().expect("points");
        *points.entry(b.to_string()).or_default() += end["points"][1].as_u64().expect("points");
    }
    assert_eq!(s["progress"]["sets_done"].as_u64(), Some(sets as u64));
    assert_eq!(
        s["games_played"].as_u64(),
        Some(sets as u64 * games_per_set)
    );
    for bot in s["bots"].as_array().expect("bots") {
        let name = bot["name"].as_str().expect("name");
        assert_eq!(
            bot["points"].as_u64(),
            Some(points.get(name).copied().unwrap_or(0)),
            "{name}: standings against the logs"
        );
    }
}

#[test]
fn a_league_of_the_sample_bots_at_concurrency_2() {
    let tmp = LogDir::new();
    let bots = [
        ("alphabeta", format!("{} --depth 2", alphabeta())),
        (
            "greedy",
            format!(
                "python3 {}",
                root().join("sample-bots/python/greedy_bot.py").display()
            ),
        ),
        (
            "random",
            format!(
                "python3 {} 5",
                root().join("sample-bots/python/random_bot.py").display()
            ),
        ),
        ("hus-random", hus_random(3)),
    ];
    // Generous time: healthy bots never come near it, even on a loaded machine.
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 2\nmove_time = \"5s\"\nseed = 11\nconcurrency = 2",
            &bots,
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON standings");
    let s = standings(&dir);
    assert_eq!(comparable(printed), comparable(s.clone()));
    check_logs_against_standings(&dir, &s, 6, 2);
    assert_eq!(s["progress"]["sets_scheduled"], 6);
    assert_eq!(s["league"]["seed"], 11);
    for bot in s["bots"].as_array().expect("bots") {
        assert_eq!(bot["games"]["played"], 6, "{bot}");
        assert_eq!(bot["sets"]["played"], 3, "{bot}");
        assert_eq!(bot["faults"]["total"], 0, "{bot}");
        assert!(bot["rating"]["value"].is_f64(), "{bot}");
    }
    // Ranked by rating; the pool's average is 1500.
    let ratings: Vec<f64> = s["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .map(|b| b["rating"]["value"].as_f64().expect("rating"))
        .collect();
    assert!(ratings.windows(2).all(|w| w[0] >= w[1]), "{ratings:?}");
    assert!((ratings.iter().sum::<f64>() / 4.0 - 1500.0).abs() < 1e-6);
    assert_eq!(s["ratings"]["pairs"].as_array().map(Vec::len), Some(6));
    // Non-terminal stderr: one plain line per finished set.
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with('[')).count(),
        6,
        "{stderr}"
    );

    // A set of the league is exactly the set `hus match` plays with the same seed.
    let log = dir.join("logs/r1-alphabeta-vs-hus-random.jsonl");
    let records = read_log(&log);
    let seed = records[0]["seed"].as_u64().expect("seed").to_string();
    let again = play(
        &bots[0].1,
        &bots[3].1,
        &["--games", "2", "--move-time", "5s", "--seed", &seed],
    );
    let end = records.last().expect("set-end");
    assert_eq!(again.summary["points"], end["points"]);
    let moves = |r: &[Value]| -> Vec<u64> {
        of_type(r, "move")
            .iter()
            .map(|m| m["pit"].as_u64().expect("pit"))
            .collect()
    };
    assert_eq!(moves(&again.records), moves(&records));

    // Other formats of the same table.
    let csv = Command::new(hus_bin())
        .args(["standings", &dir.display().to_string(), "--format", "csv"])
        .output()
        .expect("runs");
    let csv = text(&csv.stdout);
    assert!(
        csv.starts_with("rank,name,active,rating,rating_low,rating_high,points,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 5, "{csv}");
}

/// The league the interruption tests play: six sets of three games between four
/// deterministic bots that take 10 ms per move, two at a time.
fn paced_league() -> String {
    league_text(
        "games = 3\nmove_time = \"5s\"\nseed = 2024\nconcurrency = 2",
        &[
            ("p1", paced(1, 10)),
            ("p2", paced(2, 10)),
            ("p3", paced(3, 10)),
            ("p4", paced(4, 10)),
        ],
    )
}

/// The standings of the paced league played without interruption (once per test run).
fn uninterrupted() -> &'static Value {
    static RESULT: OnceLock<Value> = OnceLock::new();
    RESULT.get_or_init(|| {
        let tmp = LogDir::new();
        let file = write_league(tmp.path(), &paced_league());
        let dir = tmp.path().join("league");
        let out = league(&file, &dir, &["--quiet"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let s = standings(&dir);
        check_logs_against_standings(&dir, &s, 6, 3);
        assert!(logs(&dir, ".jsonl")
            .iter()
            .all(|p| !p.to_string_lossy().contains("partial")));
        comparable(s)
    })
}

/// Starts the paced league and waits until some sets are done and others are being
/// played (with their logs begun).
fn start_and_wait_part_way(file: &Path, dir: &Path) -> Child {
    let mut child = spawn_league(file, dir);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the league ended before it was interrupted: {status:?}");
        }
        if dir.join("league.sqlite").exists() {
            let s = standings(dir);
            let done = s["progress"]["sets_done"].as_u64().unwrap_or(0);
            let running = s["progress"]["sets_running"].as_u64().unwrap_or(0);
            if done >= 2 && running >= 1 {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the league made no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The running sets have had time to start their logs, and most likely to play some
    // moves.
    std::thread::sleep(Duration::from_millis(300));
    child
}

/// A partial log is what `hus replay` calls `status` (3: cut short, 0: aborted): it
/// starts with its header, written before the set's bots start, however early the set
/// was cut off.
fn check_partial(log: &Path, status: Option<i32>) {
    let records = read_log(log);
    assert_eq!(
        records.first().map(|r| r["type"].clone()),
        Some("header".into())
    );
    assert_eq!(replay_status(log), status, "hus replay {}", log.display());
}

#[test]
fn a_league_killed_with_sigkill_resumes_to_the_same_standings() {
    let expected = uninterrupted();
    // The sets cut off by SIGKILL have logs without set-end or aborted.
    let tmp = LogDir::new().cut_ok();
    let file = write_league(tmp.path(), &paced_league());
    let dir = tmp.path().join("league");
    let mut child = start_and_wait_part_way(&file, &dir);
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");

    // The store still shows the sets that were being played as running.
    let killed = standings(&dir);
    let running = killed["progress"]["sets_running"]
        .as_u64()
        .expect("running");
    let done_before = killed["progress"]["sets_done"].as_u64().expect("done");
    assert!(running >= 1 && done_before >= 2, "{}", killed["progress"]);
    let logs_before = all_logs(&dir) as u64;
    // A log per finished set and per running set that has begun its log.
    assert!(
        (done_before + 1..=done_before + running).contains(&logs_before),
        "{logs_before} logs"
    );

    let out = league(&file, &dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr
            .matches("was interrupted; it will be played again from its start")
            .count() as u64,
        running,
        "{stderr}"
    );
    let s = standings(&dir);
    check_logs_against_standings(&dir, &s, 6, 3);
    assert_eq!(&comparable(s), expected);

    // Each interrupted set's log was kept, renamed, and is a consistent but incomplete
    // log (its referee was killed: no set-end, no aborted line).
    let partial = logs(&dir, ".partial-1.jsonl");
    assert_eq!(
        partial.len() as u64,
        logs_before - done_before,
        "{partial:?}"
    );
    for log in &partial {
        check_partial(log, Some(3));
        let stem = log.to_string_lossy().replace(".partial-1.jsonl", "");
        assert!(
            PathBuf::from(format!("{stem}.jsonl.zst")).exists(),
            "{stem} played again"
        );
        assert!(PathBuf::from(format!("{stem}.partial-1.a.stderr")).exists());
    }
    assert_eq!(all_logs(&dir), 6 + partial.len());
}

#[test]
fn a_league_stopped_with_sigterm_resumes_to_the_same_standings() {
    let expected = uninterrupted();
    let tmp = LogDir::new();
    let file = write_league(tmp.path(), &paced_league());
    let dir = tmp.path().join("league");
    let child = start_and_wait_part_way(&file, &dir);
    // SAFETY: a signal to our own child, which has not been reaped yet.
    let sent = unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(sent, 0, "SIGTERM");
    let out = child.wait_with_output().expect("reaped");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("hus league: stopped by SIGTERM; finished sets are kept, and the same command continues the league"),
        "{stderr}"
    );

    // Stopped cleanly: nothing is left running, and each cut-off set's log was renamed
    // and ends with `aborted` (a complete log for `hus replay`).
    let stopped = standings(&dir);
    assert_eq!(stopped["progress"]["sets_running"], 0);
    let partial = logs(&dir, ".partial-1.jsonl");
    assert!(!partial.is_empty());
    for log in &partial {
        let records = read_log(log);
        assert_eq!(
            records.last().map(|r| r["type"].clone()),
            Some("aborted".into())
        );
        assert_eq!(
            records.last().map(|r| r["reason"].clone()),
            Some("stopped by SIGTERM".into())
        );
        check_partial(log, Some(0));
    }
    assert_eq!(
        stderr
            .matches("was stopped; its partial log is kept as")
            .count(),
        0,
        "--quiet hides it"
    );

    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = standings(&dir);
    check_logs_against_standings(&dir, &s, 6, 3);
    assert_eq!(&comparable(s), expected);
    assert_eq!(all_logs(&dir), 6 + partial.len());
}

#[test]
fn a_bot_added_gets_its_sets_and_a_bot_removed_keeps_its_results() {
    let tmp = LogDir::new();
    let head = "games = 2\nmove_time = \"5s\"\nseed = 7";
    let abc = [
        ("a", hus_random(1)),
        ("b", hus_random(2)),
        ("c", hus_random(3)),
    ];
    let file = write_league(tmp.path(), &league_text(head, &abc));
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The lines that say what changed among the bots: none at the first run.
    let changes = |stderr: &[u8]| -> Vec<String> {
        text(stderr)
            .lines()
            .filter(|l| l.contains(" is new in ") || l.contains(" is no longer in "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(changes(&out.stderr), Vec::<String>::new());
    let first = standings(&dir);
    check_logs_against_standings(&dir, &first, 3, 2);
    let old_logs: Vec<(PathBuf, Vec<u8>)> = complete_logs(&dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read");
            (p, bytes)
        })
        .collect();

    // d joins: its three sets are played, nothing else.
    let abcd = [
        ("a", hus_random(1)),
        ("b", hus_random(2)),
        ("c", hus_random(3)),
        ("d", hus_random(4)),
    ];
    write_league(tmp.path(), &league_text(head, &abcd));
    let out = league(&file, &dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        changes(&out.stderr),
        [format!(
            "hus league: d is new in {}: its sets join the schedule",
            file.display()
        )]
    );
    let second = standings(&dir);
    check_logs_against_standings(&dir, &second, 6, 2);
    for (path, bytes) in &old_logs {
        assert_eq!(
            &std::fs::read(path).expect("read"),
            bytes,
            "{} untouched",
            path.display()
        );
    }
    let new_logs: Vec<String> = complete_logs(&dir)
        .iter()
        .filter(|p| !old_logs.iter().any(|(q, _)| q == *p))
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        new_logs,
        [
            "r1-a-vs-d.jsonl.zst",
            "r1-b-vs-d.jsonl.zst",
            "r1-c-vs-d.jsonl.zst"
        ]
    );
    // The sets of a, b, c kept their results.
    let figures = |s: &Value, name: &str| -> Value {
        s["pairs"]
            .as_array()
            .expect("pairs")
            .iter()
            .filter(|p| {
                p["first"] != "d"
                    && p["second"] != "d"
                    && (p["first"] == name || p["second"] == name)
            })
            .cloned()
            .collect()
    };
    assert_eq!(figures(&first, "a"), figures(&second, "a"));

    // a leaves: nothing is played; its finished sets still count.
    let bcd = [
        ("b", hus_random(2)),
        ("c", hus_random(3)),
        ("d", hus_random(4)),
    ];
    write_league(tmp.path(), &league_text(head, &bcd));
    let out = league(&file, &dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        changes(&out.stderr),
        [format!(
            "hus league: a is no longer in {}: its finished sets still count, it plays no more",
            file.display()
        )]
    );
    let third = standings(&dir);
    assert_eq!(complete_logs(&dir).len(), 6);
    assert_eq!(third["progress"]["sets_scheduled"], 3);
    assert_eq!(third["progress"]["sets_done"], 3);
    assert_eq!(third["progress"]["sets_done_elsewhere"], 3);
    assert_eq!(third["games_played"], 12);
    let a = |s: &Value| -> Value {
        let mut bot = s["bots"]
            .as_array()
            .expect("bots")
            .iter()
            .find(|b| b["name"] == "a")
            .cloned()
            .expect("a is in the table");
        if let Some(o) = bot.as_object_mut() {
            o.remove("rank");
            o.remove("active");
        }
        bot
    };
    assert_eq!(a(&third), a(&second));
    let a_row = third["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .find(|b| b["name"] == "a")
        .cloned()
        .expect("a");
    assert_eq!(a_row["active"], false);
}

#[test]
fn a_change_that_makes_results_incomparable_is_refused() {
    let tmp = LogDir::new();
    let bots = [("a", hus_random(1)), ("b", hus_random(2))];
    let file = write_league(
        tmp.path(),
        &league_text("games = 1\nmove_time = \"5s\"\nseed = 3", &bots),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let refused = |head: &str, line: Option<u32>, now: &str, before: &str| {
        write_league(tmp.path(), &league_text(head, &bots));
        let out = league(&file, &dir, &["--quiet"]);
        let place = match line {
            Some(n) => format!("{} line {n}", file.display()),
            None => file.display().to_string(),
        };
        assert_eq!(out.status.code(), Some(2), "{head}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: {place}: {now}, but the league in {} was played with {before}; results \
                 under other settings cannot be compared: restore {before}, or start a new \
                 league in another directory (--dir)\n",
                dir.display()
            ),
            "{head}"
        );
    };
    refused(
        "games = 2\nmove_time = \"5s\"\nseed = 3",
        Some(1),
        "games = 2",
        "games = 1",
    );
    refused(
        "games = 1\nmove_time = \"500ms\"\nseed = 3",
        Some(2),
        "move_time = \"500ms\"",
        "move_time = \"5s\"",
    );
    refused(
        "games = 1\nclock = \"5s+1s\"\nseed = 3",
        Some(2),
        "clock = \"5s+1s\"",
        "move_time = \"5s\"",
    );
    refused(
        "games = 1\nmove_time = \"5s\"\nseed = 3\nwidth = 9",
        Some(4),
        "width = 9",
        "width = 8",
    );
    refused(
        "games = 1\nmove_time = \"5s\"\nseed = 3\nrules = \"rulebook\"",
        Some(4),
        "rules = \"rulebook\"",
        "rules = \"hus\"",
    );
    refused(
        "games = 1\nmove_time = \"5s\"\nseed = 4",
        Some(3),
        "seed = 4",
        "seed = 3",
    );
    // A default counts as a value: leaving games out means games = 7.
    refused(
        "move_time = \"5s\"\nseed = 3",
        None,
        "games = 7",
        "games = 1",
    );
    // Equal values written another way are the same setting; the seed may be left out
    // once stored.
    write_league(
        tmp.path(),
        &league_text("games = 1\nmove_time = \"5000ms\"", &bots),
    );
    let out = league(&file, &dir, &["--format", "json", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(s["league"]["seed"], 3);
    assert_eq!(s["progress"]["sets_done"], 1);
}

#[test]
fn a_second_runner_on_the_same_directory_is_refused() {
    let tmp = LogDir::new().cut_ok();
    // Slow bots: the first league is certainly still running when the second starts.
    let bots = [("a", paced(1, 200)), ("b", paced(2, 200))];
    let file = write_league(
        tmp.path(),
        &league_text("games = 5\nmove_time = \"5s\"\nseed = 1", &bots),
    );
    let dir = tmp.path().join("league");
    let mut first = spawn_league(&file, &dir);
    let lock = dir.join("league.lock");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.ends_with('\n')) {
        assert!(
            Instant::now() < deadline,
            "the first league never took its lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = league(&file, &dir, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let expected_start = format!(
        "error: {} is in use by another hus league (pid {} on host ",
        dir.display(),
        first.id()
    );
    assert!(stderr.starts_with(&expected_start), "{stderr}");
    assert!(
        stderr.contains(&format!(": hus league {} --dir {} --quiet); wait for it to finish or stop it (Ctrl-C), then run this command again", file.display(), dir.display())),
        "{stderr}"
    );
    first.kill().expect("kill");
    first.wait().expect("reaped");
    // A killed runner's lock file is not a lock.
    let mut second = spawn_league(&file, &dir);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&lock)
        .is_ok_and(|t| t.contains(&format!("pid {} ", second.id())))
    {
        // Gone without taking the lock: say why, rather than wait out the deadline.
        if let Ok(Some(status)) = second.try_wait() {
            let mut said = String::new();
            if let Some(mut err) = second.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut err, &mut said);
            }
            panic!(
                "the second league ended ({status}) without the lock ({}): {said}",
                std::fs::read_to_string(&lock).unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "the second league never took the lock: {}",
            std::fs::read_to_string(&lock).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    second.kill().expect("kill");
    second.wait().expect("reaped");
}

#[test]
fn a_bad_league_file_is_refused_with_its_line() {
    let tmp = LogDir::new();
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 3\nconcurency = 2",
            &[("a", hus_random(1)), ("b", hus_random(2))],
        ),
    );
    let out = league(&file, &tmp.path().join("league"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {} line 2: unknown field `concurency`, expected one of `rules`, `width`, \
             `games`, `move_time`, `clock`, `ready_time`, `format`, `challengers`, `rounds`, \
             `concurrency`, `seed`, `openings`, `anchor`, `anchor_rating`, `lag_cap`, `store`, `gate`, `bot`, `team`\n",
            file.display()
        )
    );
    assert!(!tmp.path().join("league").exists(), "nothing is created");
    let out = hus(&["standings", &tmp.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {0} holds no league (no {0}/league.sqlite); give the directory `hus league` used\n",
            tmp.path().display()
        )
    );
}

#[test]
fn a_bot_that_cannot_start_stops_the_league_and_its_set_stays_to_play() {
    let tmp = LogDir::new();
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 1\nmove_time = \"5s\"\nseed = 1\nconcurrency = 1",
            &[
                ("a", hus_random(1)),
                ("b", "no-such-bot-program-anywhere".to_string()),
            ],
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    // The whole line: the cause said once (it was said twice, the error's message and
    // its source both holding it).
    assert_eq!(
        text(&out.stderr),
        "error: the set round 1, a vs b could not be played: cannot start bot B \
         (\"no-such-bot-program-anywhere\"): No such file or directory (os error 2) (is the \
         program installed and on PATH? A script needs its interpreter: \"python3 my_bot.py\")\n"
    );
    let s = standings(&dir);
    assert_eq!(s["progress"]["sets_done"], 0);
    assert_eq!(s["progress"]["sets_running"], 0);
    assert_eq!(s["progress"]["sets_pending"], 1);
}

#[test]
fn a_generated_seed_is_stored_and_kept_and_too_much_concurrency_is_warned_of() {
    let tmp = LogDir::new();
    let bots = [("a", hus_random(1)), ("b", hus_random(2))];
    let file = write_league(
        tmp.path(),
        &league_text("games = 1\nmove_time = \"5s\"\nconcurrency = 1024", &bots),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let seed = standings(&dir)["league"]["seed"].as_u64().expect("a seed");
    assert!(
        stderr.contains(&format!(
            "hus league: the file gives no seed; this league's seed is {seed} (kept in {})",
            dir.join("league.sqlite").display()
        )),
        "{stderr}"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        stderr.contains(&format!(
            "warning: concurrency 1024 exceeds the {cores} cores of this machine: bots will wait for a core, and may lose on time"
        )),
        "{stderr}"
    );
    // The next run uses the stored seed and says nothing about it.
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("gives no seed"));
    assert_eq!(standings(&dir)["league"]["seed"].as_u64(), Some(seed));
}

#[test]
fn a_gauntlet_plays_its_challengers_against_the_others_only() {
    let tmp = LogDir::new();
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 1\nmove_time = \"5s\"\nseed = 5\nformat = \"gauntlet\"\nchallengers = [\"new\"]\nrounds = 2",
            &[
                ("old", hus_random(1)),
                ("new", hus_random(2)),
                ("base", hus_random(3)),
            ],
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let names: Vec<String> = complete_logs(&dir)
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "r1-new-vs-base.jsonl.zst",
            "r1-new-vs-old.jsonl.zst",
            "r2-base-vs-new.jsonl.zst",
            "r2-old-vs-new.jsonl.zst"
        ]
    );
    // Quiet bots: a finished set keeps its log alone, no empty stderr file beside it.
    let mut all: Vec<String> = std::fs::read_dir(dir.join("logs"))
        .expect("logs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    all.sort();
    assert_eq!(all, names);
    check_logs_against_standings(&dir, &standings(&dir), 4, 1);
}

/// The nice value of a process or thread, from its `stat` file.
fn nice_of(stat: &Path) -> Option<i64> {
    let text = std::fs::read_to_string(stat).ok()?;
    // Fields after the command name (which may hold spaces) start with the state, the
    // third field; the nice value is the nineteenth.
    let after = &text[text.rfind(')')? + 2..];
    after.split_whitespace().nth(16)?.parse().ok()
}

fn parent_of(stat: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(stat).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Regression: the referee's priority was raised on the main thread only, after the
/// runtime's worker threads (which play the sets) had started at the bots' priority.
#[test]
fn every_thread_of_the_league_runs_at_its_priority_and_the_bots_at_theirs() {
    let tmp = LogDir::new().cut_ok();
    let bots = [("a", paced(1, 100)), ("b", paced(2, 100))];
    let file = write_league(
        tmp.path(),
        &league_text("games = 5\nmove_time = \"5s\"\nseed = 1", &bots),
    );
    let dir = tmp.path().join("league");
    let mut child = spawn_league(&file, &dir);
    let pid = child.id();
    let ours = nice_of(Path::new("/proc/self/stat")).expect("own nice value");
    let deadline = Instant::now() + Duration::from_secs(60);
    let bot_pids = loop {
        let found: Vec<u32> = std::fs::read_dir("/proc")
            .expect("/proc")
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|p| parent_of(&PathBuf::from(format!("/proc/{p}/stat"))) == Some(pid))
            // The bots once they run their program (python3): not the referee's other
            // child, its guardian (lifetime.rs), nor a bot between fork and exec, which
            // still has the referee's priority until its own is set just before exec.
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.starts_with("python3"))
            })
            .collect();
        if found.len() == 2 {
            break found;
        }
        assert!(Instant::now() < deadline, "the bots never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let threads: Vec<i64> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("threads")
        .flatten()
        .filter_map(|t| nice_of(&t.path().join("stat")))
        .collect();
    let bot_nice: Vec<Option<i64>> = bot_pids
        .iter()
        .map(|p| nice_of(&PathBuf::from(format!("/proc/{p}/stat"))))
        .collect();
    child.kill().expect("kill");
    child.wait().expect("reaped");
    assert!(threads.len() >= 2, "{threads:?}");
    // Raised by 5 where the system allows it (root, CAP_SYS_NICE), else unchanged; the
    // same for every thread.
    assert!(
        threads[0] == ours - 5 || threads[0] == ours,
        "{threads:?}, ours {ours}"
    );
    assert!(threads.iter().all(|&n| n == threads[0]), "{threads:?}");
    assert_eq!(bot_nice, [Some(ours), Some(ours)]);
}

/// The installation of `python3`, when it lives outside /usr: what a sandboxed Python
/// bot must be shown (`sandbox_ro`).
fn python_install() -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", "command -v python3"])
        .output()
        .expect("sh runs");
    let python = PathBuf::from(text(&out.stdout).trim());
    if python.starts_with("/usr") || python.starts_with("/bin") {
        return None;
    }
    let dir = python.parent()?;
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("bin" | "shims") => dir.parent().map(Path::to_path_buf),
        _ => Some(dir.to_path_buf()),
    }
}

#[test]
fn a_sandboxed_bot_of_a_league_cannot_see_the_league() {
    // Outside /tmp, which the sandbox replaces by its own.
    let tmp = LogDir::new_in(env!("CARGO_TARGET_TMPDIR"));
    let root = std::fs::canonicalize(tmp.path()).expect("canonical");
    std::fs::create_dir_all(root.join("bots/hostile")).expect("mkdir");
    std::fs::copy(
        crate::common::root().join("tests/bots/hostile.py"),
        root.join("bots/hostile/hostile.py"),
    )
    .expect("copy the hostile bot");
    let db = root.join("league/league.sqlite");
    // As root the bot runs as nobody, who must reach its directory, and cannot reach a
    // Python under /root: it uses the system's.
    crate::sandbox::let_sandbox_user_in(&root.join("bots/hostile"));
    let as_root = crate::sandbox::running_as_root();
    let (python, ro) = match python_install().filter(|_| !as_root) {
        Some(p) => ("python3", format!("sandbox_ro = [\"{}\"]\n", p.display())),
        None if as_root => ("/usr/bin/python3", String::new()),
        None => ("python3", String::new()),
    };
    let text_of_file = format!(
        "games = 1\nmove_time = \"5s\"\nready_time = \"30s\"\nseed = 1\n\n\
         [[bot]]\nname = \"hostile\"\ncommand = \"{python} bots/hostile/hostile.py league {}\"\nsandbox = true\n{ro}\n\
         [[bot]]\nname = \"rnd\"\ncommand = \"{}\"\n",
        db.display(),
        hus_random(1)
    );
    let file = write_league(&root, &text_of_file);
    let dir = root.join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = standings(&dir);
    assert_eq!(s["games_played"], 1);
    // Compressed once the set finished (`.a.stderr.zst`).
    let stderr = read_set_log(&dir.join("logs/r1-hostile-vs-rnd.a.stderr"));
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("hostile: "))
        .collect();
    assert_eq!(
        lines,
        [
            format!("list {}: ['hostile']", root.join("bots").display()),
            format!("list {}: ['bots']", root.display()),
            format!(
                "read {0}: failed: FileNotFoundError: [Errno 2] No such file or directory: '{0}'",
                db.display()
            ),
        ]
    );
}

// ---- openings -----------------------------------------------------------------------

/// A book of five openings, three with player 1 to move.
const LEAGUE_BOOK: &str = "# a small book\n\
    moves 7\n\
    moves 7 4\n\
    moves 6  # player 1 to move\n\
    moves 5\n\
    moves 6 5\n";

/// The paced league with `openings = "book.txt"`, and the book beside the file.
fn paced_league_with_openings(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("book.txt"), LEAGUE_BOOK).expect("write the book");
    write_league(
        dir,
        &paced_league().replacen("games = 3\n", "games = 3\nopenings = \"book.txt\"\n", 1),
    )
}

/// Every complete log of a league with [`LEAGUE_BOOK`]: its header lists the openings
/// the set's seed picks from the book, and its games go in pairs from them.
fn check_openings_of_logs(dir: &Path, book_dir: &Path) {
    let rules = engine::Rules::default();
    let book = referee::read_openings(&book_dir.join("book.txt"), rules).expect("the book");
    for log in complete_logs(dir) {
        let records = read_log(&log);
        let seed = records[0]["seed"].as_u64().expect("seed");
        let expected: Vec<String> = referee::openings_for_set(&book, seed, 3)
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(
            records[0]["openings"],
            serde_json::json!(expected),
            "{}",
            log.display()
        );
        let starts = of_type(&records, "game-start");
        assert_eq!(starts.len(), 3);
        assert_eq!(starts[0]["position"], expected[0].as_str());
        assert_eq!(starts[1]["position"], expected[0].as_str());
        assert_eq!(starts[2]["position"], expected[1].as_str());
        assert_ne!(starts[0]["first"], starts[1]["first"], "{}", log.display());
    }
}

/// The paced league with openings, played without interruption (once per test run).
fn uninterrupted_with_openings() -> &'static Value {
    static RESULT: OnceLock<Value> = OnceLock::new();
    RESULT.get_or_init(|| {
        let tmp = LogDir::new();
        let file = paced_league_with_openings(tmp.path());
        let dir = tmp.path().join("league");
        let out = league(&file, &dir, &["--quiet"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let s = standings(&dir);
        check_logs_against_standings(&dir, &s, 6, 3);
        check_openings_of_logs(&dir, tmp.path());
        comparable(s)
    })
}

#[test]
fn a_league_with_openings_killed_with_sigkill_resumes_to_the_same_standings() {
    let expected = uninterrupted_with_openings();
    // The openings change the games: the table differs from that of the same league
    // without them (the same bots and seed).
    assert_ne!(expected["bots"], uninterrupted()["bots"]);
    let tmp = LogDir::new().cut_ok();
    let file = paced_league_with_openings(tmp.path());
    let dir = tmp.path().join("league");
    let mut child = start_and_wait_part_way(&file, &dir);
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let killed = standings(&dir);
    assert!(
        killed["progress"]["sets_running"].as_u64() >= Some(1),
        "{}",
        killed["progress"]
    );
    let out = league(&file, &dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = standings(&dir);
    check_logs_against_standings(&dir, &s, 6, 3);
    check_openings_of_logs(&dir, tmp.path());
    assert_eq!(&comparable(s), expected);
}

#[test]
fn the_openings_of_a_league_cannot_change_between_runs() {
    let tmp = LogDir::new();
    let bots = [("a", hus_random(1)), ("b", hus_random(2))];
    let head = "games = 2\nmove_time = \"5s\"\nseed = 3\nopenings = \"book.txt\"";
    std::fs::write(tmp.path().join("book.txt"), LEAGUE_BOOK).expect("write");
    let file = write_league(tmp.path(), &league_text(head, &bots));
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let hash = |book: &str| {
        let p = tmp.path().join("hash-me.txt");
        std::fs::write(&p, book).expect("write");
        let book = referee::read_openings(&p, engine::Rules::default()).expect("valid");
        league::Openings {
            written: String::new(),
            path: p,
            book,
        }
        .hash()
    };
    let before = format!(
        "openings = \"book.txt\" (5 openings, content hash {})",
        hash(LEAGUE_BOOK)
    );
    let refused = |head: &str, line: Option<u32>, now: &str| {
        write_league(tmp.path(), &league_text(head, &bots));
        let out = league(&file, &dir, &["--quiet"]);
        let place = match line {
            Some(n) => format!("{} line {n}", file.display()),
            None => file.display().to_string(),
        };
        assert_eq!(out.status.code(), Some(2), "{head}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: {place}: {now}, but the league in {} was played with {before}; results \
                 under other settings cannot be compared: restore {before}, or start a new \
                 league in another directory (--dir)\n",
                dir.display()
            ),
            "{head}"
        );
    };
    // The book's openings changed (one line less).
    let shorter = LEAGUE_BOOK.replace("moves 5\n", "");
    std::fs::write(tmp.path().join("book.txt"), &shorter).expect("write");
    refused(
        head,
        Some(4),
        &format!(
            "openings = \"book.txt\" (4 openings, content hash {})",
            hash(&shorter)
        ),
    );
    // The same openings in another file: the path is part of the setting.
    std::fs::write(tmp.path().join("book.txt"), LEAGUE_BOOK).expect("write");
    std::fs::write(tmp.path().join("other.txt"), LEAGUE_BOOK).expect("write");
    refused(
        &head.replace("book.txt", "other.txt"),
        Some(4),
        &format!(
            "openings = \"other.txt\" (5 openings, content hash {})",
            hash(LEAGUE_BOOK)
        ),
    );
    // No openings any more.
    refused(
        &head.replace("\nopenings = \"book.txt\"", ""),
        None,
        "no openings",
    );
    // Comments and layout may change: the same openings.
    std::fs::write(
        tmp.path().join("book.txt"),
        format!("# edited\n\n{LEAGUE_BOOK}   \n# the end\n"),
    )
    .expect("write");
    write_league(tmp.path(), &league_text(head, &bots));
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // A bad book is refused before anything, naming the league file's key and the
    // book's line.
    std::fs::write(tmp.path().join("book.txt"), "moves 7\nmoves 7 0\n").expect("write");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {} line 4: openings: {}: line 2: moves: pit 0 cannot be played at ply 1: pit 0 holds 0 seeds, a move needs at least 2\n",
            file.display(),
            tmp.path().join("book.txt").display()
        )
    );
}

/// Every file of a league's directory with its length, recursively, sorted; not the
/// lock, which each runner rewrites.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("readable directory").flatten() {
            let path = entry.path();
            let meta = entry.metadata().expect("metadata");
            if meta.is_dir() {
                todo.push(path);
            } else if !path.ends_with("league.lock") {
                found.push((path, meta.len()));
            }
        }
    }
    found.sort();
    found
}

/// A store missing, of 0 bytes, or without its settings, beside the logs of finished sets:
/// refused before anything is written (it was taken for a new league, which drew a new
/// seed and set every finished log aside as `*.partial-*`).
#[test]
fn a_store_that_lost_its_league_beside_played_logs_is_refused() {
    let tmp = LogDir::new();
    let bots = [("a", hus_random(1)), ("b", hus_random(2))];
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 1\nrounds = 2\nmove_time = \"5s\"\nconcurrency = 1",
            &bots,
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(complete_logs(&dir).len(), 2);
    let store = dir.join("league.sqlite");
    let played = std::fs::read(&store).expect("the store");
    let refused = |what: &str| {
        let before = listing(&dir);
        let out = league(&file, &dir, &["--quiet"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: the league store {store} {what}, but {logs} holds the logs of 2 sets \
                 played in this directory: the store that recorded them is lost. Restore \
                 {store} from a backup, or move {logs} away to start a new league in this \
                 directory; nothing was changed\n",
                store = store.display(),
                logs = dir.join("logs").display(),
            )
        );
        assert_eq!(listing(&dir), before, "nothing renamed, nothing created");
        // `hus serve` opens the directory's store the same way.
        let out = hus(&[
            "serve",
            file.to_str().expect("utf-8"),
            "--dir",
            dir.to_str().expect("utf-8"),
            "--listen",
            "127.0.0.1:0",
            "--quiet",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).starts_with(&format!(
                "error: the league store {} {what}, but ",
                store.display()
            )),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(listing(&dir), before, "nothing renamed, nothing created");
    };
    std::fs::write(&store, b"").expect("truncate the store");
    refused("is empty (0 bytes)");
    // A store without its settings (its rows deleted).
    std::fs::write(&store, &played).expect("restore the store");
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1])\n\
             c.execute('DELETE FROM settings')\n\
             c.commit()\n\
             c.close()\n",
        )
        .arg(&store)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    refused("holds no league settings");
    // A store deleted: refused without creating one.
    std::fs::remove_file(&store).expect("delete the store");
    refused("is missing");
    // Restored, the league is whole again: nothing was lost.
    std::fs::write(&store, &played).expect("restore the store");
    let s = standings(&dir);
    assert_eq!(s["progress"]["sets_done"], 2);
    assert!(logs(&dir, ".jsonl")
        .iter()
        .all(|p| !p.to_string_lossy().contains(".partial-")));
}

/// A full disk under the logs stops `hus league` with the reason, and the set stays to
/// play; once there is room, the same command plays it as the same set (id 1, its
/// second attempt), and nothing else. The logs' directory is a small tmpfs, filled up,
/// in a mount namespace of the league's own (`unshare --mount`).
#[test]
fn a_full_disk_stops_the_league_and_the_same_set_is_played_once_there_is_room() {
    let tmp = LogDir::new();
    let bots = [("a", hus_random(1)), ("b", hus_random(2))];
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 1\nmove_time = \"5s\"\nseed = 1\nconcurrency = 1",
            &bots,
        ),
    );
    let dir = tmp.path().join("league");
    let kept = tmp.path().join("kept");
    for d in [dir.join("logs"), kept.clone()] {
        std::fs::create_dir_all(&d).expect("mkdir");
    }
    let script = r#"
mount -t tmpfs -o size=256k tmpfs "$1/logs" || exit 97
dd if=/dev/zero of="$1/logs/filler" bs=4k 2>/dev/null
"$2" league "$3" --dir "$1" --quiet --min-free-space 0
status=$?
rm -f "$1/logs/filler"
cp -a "$1/logs/." "$4/"
exit $status
"#;
    let out = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(&dir)
        .arg(hus_bin())
        .arg(&file)
        .arg(&kept)
        .output()
        .expect("unshare runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: the set round 1, a vs b could not be played: cannot write to the log {}: \
             No space left on device (os error 28)\n",
            dir.join("logs/r1-a-vs-b.jsonl").display()
        )
    );
    assert_eq!(
        store_sets(&dir),
        [(1, 1, "a".into(), "b".into(), "pending".into(), 1)]
    );
    // Room again (the tmpfs is gone): the same set, and nothing else.
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        store_sets(&dir),
        [(1, 1, "a".into(), "b".into(), "done".into(), 2)]
    );
    assert_eq!(complete_logs(&dir), [dir.join("logs/r1-a-vs-b.jsonl.zst")]);
}

/// `hus prune DIR --keep-logs N` deletes the logs of all but the N latest finished
/// sets and changes no result; it is refused while the directory is in use.
#[test]
fn prune_deletes_old_logs_and_keeps_every_result() {
    let tmp = LogDir::new();
    let bots = [
        ("a", hus_random(1)),
        ("b", hus_random(2)),
        ("c", hus_random(3)),
    ];
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 2\nrounds = 2\nmove_time = \"5s\"\nconcurrency = 1",
            &bots,
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let before = standings(&dir);
    let logs_before = complete_logs(&dir);
    assert_eq!(logs_before.len(), 6);
    // The order the sets finished in (one at a time: the order of their ids).
    let numbered: Vec<String> = store_sets(&dir)
        .into_iter()
        .map(|(_, round, a, b, _, _)| format!("r{round}-{a}-vs-{b}"))
        .collect();
    assert_eq!(numbered.len(), 6);
    // In use: refused, nothing deleted.
    {
        let _held = league::DirLock::acquire(&dir).expect("the lock");
        let out = hus(&["prune", &dir.display().to_string(), "--keep-logs", "2"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("is in use by another hus league"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(complete_logs(&dir), logs_before);
    }
    let out = hus(&["prune", &dir.display().to_string(), "--keep-logs", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.starts_with("hus prune: 4 of 6 finished sets had their logs deleted now (4 files, "),
        "{said}"
    );
    assert!(
        said.trim_end()
            .ends_with("the logs of the last 2 are kept; every result stays"),
        "{said}"
    );
    assert_eq!(standings(&dir), before);
    // Which logs: those of the last two sets to finish.
    let kept: Vec<String> = complete_logs(&dir)
        .iter()
        .map(|p| {
            p.file_name()
                .expect("name")
                .to_string_lossy()
                .trim_end_matches(".jsonl.zst")
                .to_string()
        })
        .collect();
    let mut latest = numbered[4..].to_vec();
    latest.sort();
    assert_eq!(kept, latest);
    // Again: nothing more to delete.
    let out = hus(&["prune", &dir.display().to_string(), "--keep-logs", "2"]);
    assert!(
        text(&out.stdout).starts_with("hus prune: 0 of 6 finished sets"),
        "{}",
        text(&out.stdout)
    );
    // A league that continues keeps its results.
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(standings(&dir)["games_played"], before["games_played"]);
}

/// `hus prune DIR --archive` puts the logs of each whole 64 finished sets into one
/// archive (`logs/archive/sets-000000001-000000064.tar.zst`) and deletes their files;
/// the archive gives back every log byte for byte (`hus replay ARCHIVE --unpack`),
/// verifies log by log (`hus replay ARCHIVE`), reads one set (`--set`), and goes with
/// its sets' logs when they are pruned. The standings never change.
#[test]
fn prune_archives_logs_that_unpack_to_the_same_bytes() {
    let tmp = LogDir::new();
    let bots = [
        ("a", hus_random(1)),
        ("b", hus_random(2)),
        ("c", hus_random(3)),
    ];
    // 22 rounds of the three pairs: 66 sets, one archive of 64 and two left over.
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 2\nrounds = 22\nmove_time = \"5s\"\nconcurrency = 2",
            &bots,
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let before = standings(&dir);
    let originals: std::collections::BTreeMap<String, String> = complete_logs(&dir)
        .iter()
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy();
            let stem = name.trim_end_matches(".jsonl.zst").to_string();
            (stem, read_set_log(&p.with_extension("")))
        })
        .collect();
    assert_eq!(originals.len(), 66);
    let d = dir.display().to_string();
    let out = hus(&["prune", &d, "--archive"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim_end(),
        "hus prune: 64 logs archived in 1 file under logs/archive (64 log files deleted); \
         the last 2 finished sets' logs wait for a whole 64"
    );
    let archive = dir.join("logs/archive/sets-000000001-000000064.tar.zst");
    assert!(archive.is_file());
    assert_eq!(complete_logs(&dir).len(), 2);
    assert_eq!(standings(&dir), before);
    // Every log back, byte for byte.
    let unpacked = tmp.path().join("unpacked");
    std::fs::create_dir(&unpacked).expect("mkdir");
    let a = archive.display().to_string();
    let out = hus(&["replay", &a, "--unpack", &unpacked.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 64, "{lines:?}");
    let mut archived = 0;
    for (stem, original) in &originals {
        let path = unpacked.join(format!("{stem}.jsonl"));
        if path.exists() {
            archived += 1;
            assert_eq!(
                &std::fs::read_to_string(&path).expect("read"),
                original,
                "{stem}"
            );
            assert!(
                lines.contains(&format!("{stem}: verified: 2 games, {} moves", {
                    original.matches(r#""type":"move""#).count()
                })),
                "{stem}: {lines:?}"
            );
            assert!(!dir.join(format!("logs/{stem}.jsonl.zst")).exists());
        } else {
            assert!(
                dir.join(format!("logs/{stem}.jsonl.zst")).exists(),
                "{stem}"
            );
        }
    }
    assert_eq!(archived, 64);
    // One set of it, as a log would be read; a set it does not hold.
    let (stem, original) = originals
        .iter()
        .find(|(s, _)| unpacked.join(format!("{s}.jsonl")).exists())
        .expect("an archived set");
    let out = hus(&["replay", &a, "--set", stem, "--game", "2", "--ply", "0"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let start = original
        .lines()
        .filter(|l| l.contains(r#""type":"game-start""#))
        .nth(1)
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .expect("game 2's start");
    assert!(
        text(&out.stdout).contains(start["position"].as_str().expect("position")),
        "{}",
        text(&out.stdout)
    );
    let out = hus(&["replay", &a, "--set", "r99-x-vs-y"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("holds no log of a set \"r99-x-vs-y\""),
        "{}",
        text(&out.stderr)
    );
    // An archive cut short: an error, never a panic.
    let bytes = std::fs::read(&archive).expect("read");
    let cut = tmp.broken("cut.tar.zst");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let out = hus(&["replay", &cut.display().to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("cannot read"),
        "{}",
        text(&out.stderr)
    );
    // Again: nothing more to archive.
    let out = hus(&["prune", &d, "--archive"]);
    assert!(
        text(&out.stdout).starts_with("hus prune: 0 logs archived in 0 files"),
        "{}",
        text(&out.stdout)
    );
    // Pruned past the archive's last set: the archive goes with its logs.
    let out = hus(&["prune", &d, "--keep-logs", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .starts_with("hus prune: 65 of 66 finished sets had their logs deleted now (2 files, "),
        "{}",
        text(&out.stdout)
    );
    assert!(!archive.exists());
    assert_eq!(complete_logs(&dir).len(), 1);
    assert_eq!(standings(&dir), before);
}

/// `hus prune --archive` with `logs/archive` a link to another directory (issue 33): no
/// archive, nor its temporary file, is written where it points, no log is deleted, and
/// the error names the link; `hus prune --keep-logs` deletes no archive there either.
/// Once the link is gone, the logs are archived.
#[test]
fn prune_writes_no_archive_through_a_linked_archive_directory() {
    let tmp = LogDir::new();
    let bots = [
        ("a", hus_random(1)),
        ("b", hus_random(2)),
        ("c", hus_random(3)),
    ];
    // 22 rounds of the three pairs: 66 sets, one whole 64.
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 1\nrounds = 22\nmove_time = \"5s\"\nconcurrency = 2",
            &bots,
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    let link = dir.join("logs/archive");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    let refused = format!(
        "{} is a symbolic link: hus never follows a link where it writes files (remove it)",
        link.display()
    );
    let d = dir.display().to_string();
    let out = hus(&["prune", &d, "--archive"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stderr).trim_end(),
        format!(
            "error: cannot archive logs in {}: {refused}",
            link.join("sets-000000001-000000064.tar.zst").display()
        )
    );
    assert_eq!(std::fs::read_dir(&outside).expect("read").count(), 0);
    assert_eq!(complete_logs(&dir).len(), 66);
    // An archive's name where the link points is not deleted by pruning.
    let planted = outside.join("sets-000000001-000000064.tar.zst");
    std::fs::write(&planted, "not hus's").expect("write");
    let out = hus(&["prune", &d, "--keep-logs", "66"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stderr).trim_end(),
        format!(
            "error: cannot delete pruned archives {}: {refused}",
            link.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&planted).expect("read"),
        "not hus's"
    );
    std::fs::remove_file(&link).expect("remove the link");
    let out = hus(&["prune", &d, "--archive"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("hus prune: 64 logs archived in 1 file under logs/archive"),
        "{}",
        text(&out.stdout)
    );
    assert!(dir
        .join("logs/archive/sets-000000001-000000064.tar.zst")
        .is_file());
    assert_eq!(std::fs::read_dir(&outside).expect("read").count(), 1);
    // Not a log: the test directory's check of every log would refuse it.
    std::fs::remove_file(&planted).expect("remove");
}

/// A small memory file system of its own (tmpfs), unmounted when dropped: a disk that a
/// test can fill and empty. Root only.
pub(crate) struct SmallDisk {
    pub(crate) path: PathBuf,
    _dir: LogDir,
}

impl SmallDisk {
    /// A tmpfs of `mib` MiB.
    pub(crate) fn new(mib: u32) -> SmallDisk {
        let dir = LogDir::new();
        let path = dir.path().join("disk");
        std::fs::create_dir(&path).expect("mkdir");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(&path)
            .status()
            .expect("mount runs");
        assert!(status.success(), "mount -t tmpfs failed");
        SmallDisk { path, _dir: dir }
    }

    /// Fills it with a file of `mib` MiB.
    pub(crate) fn fill(&self, mib: usize) -> PathBuf {
        let filler = self.path.join("filler");
        std::fs::write(&filler, vec![0u8; mib << 20]).expect("write the filler");
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// Below its free-space floor a league starts no set and says why, once; once there is
/// room again it says so and plays every set.
#[test]
fn a_league_below_its_free_space_floor_waits_and_goes_on_once_there_is_room() {
    if !crate::sandbox::running_as_root() {
        // Mounting a small file system to fill takes root.
        return;
    }
    let disk = SmallDisk::new(48);
    let filler = disk.fill(40);
    let bots = [
        ("a", hus_random(1)),
        ("b", hus_random(2)),
        ("c", hus_random(3)),
    ];
    let file = write_league(
        &disk.path,
        &league_text(
            "games = 2\nmove_time = \"5s\"\nconcurrency = 1\nseed = 7",
            &bots,
        ),
    );
    let dir = disk.path.join("league");
    let mut child = Command::new(hus_bin())
        .args(["league", &file.display().to_string(), "--dir"])
        .arg(&dir)
        .args(["--quiet", "--min-free-space", "16M"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus league starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Not a verdict on time: the wait ends at the line (a minute only if it never comes).
    let paused = lines
        .recv_timeout(Duration::from_secs(60))
        .expect("the league says it is paused");
    let prefix = "hus league: paused: only ";
    let suffix = format!(
        " free on the file system of {}, below the floor of 16 MiB (--min-free-space): no new \
         set starts until there is more",
        dir.display()
    );
    assert!(
        paused.starts_with(prefix) && paused.ends_with(&suffix),
        "{paused}"
    );
    // Paused before its first set: nothing played, nothing running.
    let s = standings(&dir);
    assert_eq!(s["progress"]["sets_done"], 0, "{s}");
    assert_eq!(s["progress"]["sets_running"], 0, "{s}");
    std::fs::remove_file(&filler).expect("remove the filler");
    let status = child.wait().expect("hus league ends");
    let rest: Vec<String> = lines.try_iter().collect();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert!(
        rest[0].starts_with("hus league: ") && rest[0].ends_with(" free again: sets start again"),
        "{rest:?}"
    );
    let s = standings(&dir);
    assert_eq!(s["progress"]["sets_done"], 3, "{s}");
    assert_eq!(s["progress"]["sets_pending"], 0, "{s}");
}

/// A bot that writes 2 MiB on stderr and crashes at every game (restarted each time),
/// in a league at concurrency 2: each set keeps 1 MiB of its stderr, whatever the
/// restarts, and keeps it compressed.
#[test]
fn a_stderr_flood_restarted_every_game_keeps_one_mib_a_set_compressed() {
    const CAP: usize = 1 << 20;
    let tmp = LogDir::new();
    let flood = format!(
        "python3 {} stderr-exit {}",
        root().join("tests/bots/misbehave.py").display(),
        2 * CAP
    );
    let bots = [
        ("flood", flood),
        ("r1", hus_random(1)),
        ("r2", hus_random(2)),
    ];
    let file = write_league(
        tmp.path(),
        &league_text(
            "games = 7\nmove_time = \"10s\"\nready_time = \"30s\"\nconcurrency = 2\nseed = 3",
            &bots,
        ),
    );
    let dir = tmp.path().join("league");
    let out = league(&file, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let logs = dir.join("logs");
    let mut floods = 0;
    for entry in std::fs::read_dir(&logs).expect("logs").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".stderr"), "left plain: {name}");
        if !name.ends_with(".stderr.zst") {
            continue;
        }
        let mut text = Vec::new();
        std::io::Read::read_to_end(
            &mut referee::open_log(&entry.path()).expect("open"),
            &mut text,
        )
        .expect("gunzip");
        // The flood's 1 MiB of 'e's, then its processes' notes (two lines each).
        assert!(text.len() > CAP, "{name}: {} bytes", text.len());
        assert!(text[..CAP].iter().all(|&b| b == b'e'), "{name}");
        let notes = &text[CAP..];
        assert!(notes.starts_with(b"\n[hus: stderr cut here"), "{name}");
        let cuts = String::from_utf8_lossy(notes)
            .matches("[hus: stderr cut here")
            .count();
        assert!((1..=7).contains(&cuts), "{name}: {cuts} cut notes");
        assert!(
            notes.len() <= 7 * 200,
            "{name}: {} bytes of notes",
            notes.len()
        );
        assert!(entry.metadata().expect("size").len() < 64 * 1024, "{name}");
        floods += 1;
    }
    // The flood plays two sets of the three, its stderr compressed in each.
    assert_eq!(floods, 2);
}
