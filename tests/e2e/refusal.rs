//! A bot that refuses a preset it does not know, exactly as PROTOCOL.md ("Refusing a
//! set") tells it to: the bot is the document's own Python example, and the referee's
//! records are the document's, in a match and in a league.

use std::process::Command;

use serde_json::Value;

use crate::common::*;
use crate::doc_support::*;

/// The section of PROTOCOL.md that says how a bot refuses.
fn refusing() -> String {
    section(&doc("PROTOCOL.md"), "### Refusing a set").to_string()
}

/// The refusing bot of the section, written to `dir`, as a command line.
fn documented_bot(dir: &std::path::Path) -> String {
    let text = refusing();
    let blocks = code_blocks(&text);
    let (_, _, script) = blocks
        .iter()
        .find(|(lang, _, _)| lang == "python")
        .expect("a Python example in \"Refusing a set\"");
    let path = dir.join("my_bot.py");
    std::fs::write(&path, script).expect("write the documented bot");
    format!("python3 {}", path.display())
}

/// The fault record the section shows.
fn documented_fault() -> Value {
    let text = refusing();
    let blocks = code_blocks(&text);
    let (_, _, json) = blocks
        .iter()
        .find(|(lang, _, _)| lang == "json")
        .expect("a JSON record in \"Refusing a set\"");
    serde_json::from_str(json.trim()).expect("the documented record is JSON")
}

#[test]
fn a_bot_that_refuses_the_preset_gets_the_documented_record() {
    let dir = LogDir::new();
    let bot = documented_bot(dir.path());
    // `play` expects exit status 0 (a refusal is a result) and has `hus replay` verify
    // the log (exit 0).
    let set = play(
        &bot,
        &hus_random(1),
        &["--rules", "rulebook", "--games", "3", "--seed", "1"],
    );
    let mut documented = documented_fault();
    // The detail names the bot's stderr file by its path, the document's as `hus
    // match` names it with the default log directory: here, the test's.
    let header = &set.records[0];
    let stderr_name = header["bots"][0]["stderr"].as_str().expect("stderr file");
    let stderr_path = set.log.parent().expect("log dir").join(stderr_name);
    let detail = documented["detail"].as_str().expect("detail").to_string();
    let (before, rest) = detail
        .split_once("last line of its stderr (")
        .expect("the documented detail quotes the stderr");
    let (_, after) = rest.split_once("): ").expect("the path, then the line");
    documented["detail"] = format!(
        "{before}last line of its stderr ({}): {after}",
        stderr_path.display()
    )
    .into();
    let faults = of_type(&set.records, "fault");
    assert_eq!(faults.len(), 3, "one fault a game: {faults:?}");
    for (game, fault) in (1..).zip(&faults) {
        let mut expected = documented.clone();
        expected["game"] = game.into();
        // The time from the bot's start to its exit is measured, not documented.
        assert!(fault["ms"].is_number(), "{fault}");
        expected["ms"] = fault["ms"].clone();
        assert_eq!(**fault, expected, "game {game}");
    }
    // Per game: restart (from the second), game-start, fault, shutdown, game-end.
    let kinds: Vec<&str> = set
        .records
        .iter()
        .map(|r| r["type"].as_str().expect("type"))
        .filter(|t| !matches!(*t, "header" | "ready"))
        .collect();
    let mut expected = Vec::new();
    for game in 1..=3 {
        if game > 1 {
            expected.push("restart");
        }
        expected.extend(["game-start", "fault", "shutdown", "game-end"]);
    }
    expected.extend(["shutdown", "set-end"]);
    assert_eq!(kinds, expected);
    for shutdown in of_type(&set.records, "shutdown")
        .into_iter()
        .filter(|s| s["bot"] == 0)
    {
        assert_eq!(shutdown["stopped_by"], "itself", "{shutdown}");
        assert_eq!(shutdown["status"], "exit status 1", "{shutdown}");
    }
    for end in of_type(&set.records, "game-end") {
        assert_eq!(end["reason"], "crash", "{end}");
        assert_eq!(end["plies"], 0, "{end}");
        assert_eq!(end["winner"], 1, "{end}");
        assert_eq!(end["points"], serde_json::json!([0, 48]), "{end}");
    }
    // The summary: 0 points, every game lost, as many faults.
    let refuser = &set.summary["bots"][0];
    assert_eq!(refuser["points"], 0);
    assert_eq!(refuser["losses"], 3);
    assert_eq!(refuser["faults"], 3);
    // The reason is in the bot's stderr file, named in the header.
    let stderr = std::fs::read_to_string(&stderr_path).expect("the stderr file");
    assert_eq!(
        stderr,
        "my_bot: I play only hus, not rulebook\n".repeat(3),
        "{}",
        stderr_path.display()
    );
}

#[test]
fn a_league_counts_a_refusing_bots_games_as_crash_faults() {
    let dir = LogDir::new();
    let bot = documented_bot(dir.path());
    let file = dir.path().join("L.toml");
    let text = format!(
        "rules = \"rulebook\"\ngames = 2\nrounds = 1\nseed = 1\nready_time = \"30s\"\n\n\
         [[bot]]\nname = \"refuser\"\ncommand = \"{bot}\"\n\n\
         [[bot]]\nname = \"rnd\"\ncommand = \"{}\"\n",
        hus_random(1)
    );
    std::fs::write(&file, text).expect("write the league file");
    let league_dir = dir.path().join("L");
    let hus = env!("CARGO_BIN_EXE_hus");
    let out = Command::new(hus)
        .arg("league")
        .arg(&file)
        .arg("--dir")
        .arg(&league_dir)
        .args(["--quiet", "--format", "json"])
        .output()
        .expect("hus league runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let standings: Value = serde_json::from_slice(&out.stdout).expect("JSON standings");
    let refuser = standings["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .find(|b| b["name"] == "refuser")
        .expect("the refusing bot");
    assert_eq!(
        refuser["faults"],
        serde_json::json!({"total": 2, "by_kind": {"crash": 2}})
    );
    assert_eq!(
        refuser["games"],
        serde_json::json!({"played": 2, "won": 0, "drawn": 0, "lost": 2})
    );
    assert_eq!(refuser["points"], 0);
    // The set's log verifies.
    let logs: Vec<_> = std::fs::read_dir(league_dir.join("logs"))
        .expect("the league's logs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let replay = crate::common::hus(&["replay", logs[0].to_str().expect("utf-8")]);
    assert_eq!(replay.status.code(), Some(0));
}
