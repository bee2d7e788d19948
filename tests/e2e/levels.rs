//! The ladder: the Rust bot's levels grow stronger (a small league of levels), and
//! `hus rate` lands within the shipped ratings of the random mover and of level 5.
//! Every bot is seeded and every level searches to a fixed depth, so these verdicts do
//! not depend on the machine's speed (the levels' time caps are far above what their
//! depths take, and the move time is generous).

use std::process::Command;

use serde_json::Value;

use crate::common::*;
use crate::sample_bots::alphabeta;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// A league of levels 1, 3, 5 and 7, two rounds of 8-game sets from the shipped book:
/// each level beats the one two below it clearly, in 16 games.
#[test]
fn level_n_plus_2_beats_level_n_in_a_league() {
    let dir = LogDir::new();
    let bot = alphabeta();
    let mut file = format!(
        "games = 8\nmove_time = \"10s\"\nready_time = \"30s\"\nrounds = 2\nseed = 3\nconcurrency = 2\nopenings = {:?}\n",
        root().join("openings/hus-8.txt").display().to_string()
    );
    for n in [1, 3, 5, 7] {
        file.push_str(&format!(
            "\n[[bot]]\nname = \"level-{n}\"\ncommand = \"'{bot}' --level {n} --seed {n}\"\n"
        ));
    }
    let path = dir.path().join("levels.toml");
    std::fs::write(&path, file).expect("write the league");
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["league", &path.display().to_string(), "--format", "json"])
        .output()
        .expect("hus league runs");
    assert!(out.status.success(), "hus league: {}", text(&out.stderr));
    let s: Value = serde_json::from_slice(&out.stdout).expect("JSON standings");
    assert_eq!(s["games_played"], 6 * 16);
    // Games won by `winner` against `loser`, whoever moved first.
    let won = |winner: &str, loser: &str| -> u64 {
        let pairs = s["pairs"].as_array().expect("pairs");
        pairs
            .iter()
            .map(|p| {
                if p["first"] == winner && p["second"] == loser {
                    p["first_won"].as_u64().expect("count")
                } else if p["first"] == loser && p["second"] == winner {
                    p["second_won"].as_u64().expect("count")
                } else {
                    0
                }
            })
            .sum()
    };
    for n in [1, 3, 5] {
        let (weak, strong) = (format!("level-{n}"), format!("level-{}", n + 2));
        let (w, l) = (won(&strong, &weak), won(&weak, &strong));
        assert_eq!(
            w + l,
            16,
            "{strong} against {weak}: no draws in these games"
        );
        assert!(w >= 12, "{strong} won only {w} of 16 against {weak}");
    }
    let ranked: Vec<&str> = s["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .map(|b| b["name"].as_str().expect("name"))
        .collect();
    assert_eq!(ranked, ["level-7", "level-5", "level-3", "level-1"]);
}

/// `hus rate BOT --json` with a fixed seed.
fn rate(bot: &str, seed: &str) -> Value {
    let logs = LogDir::new();
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["rate", bot, "--json", "--seed", seed, "--move-time", "10s"])
        .args(["--ready-time", "30s", "--ladder-bot", &alphabeta()])
        .arg("--log-dir")
        .arg(logs.path())
        .output()
        .expect("hus rate runs");
    assert!(out.status.success(), "hus rate: {}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).expect("JSON summary");
    assert_eq!(summary["games"], 64);
    assert_eq!(summary["faults"], 0);
    // Every set's log is complete and verified by hus replay.
    let sets = summary["sets"].as_array().expect("sets");
    assert_eq!(sets.len(), 8);
    for set in sets {
        let log = set["log"].as_str().expect("log");
        let replay = hus(&["replay", log]);
        assert_eq!(
            replay.status.code(),
            Some(0),
            "{log}: {}",
            text(&replay.stdout)
        );
    }
    summary
}

/// The shipped rating of a rung: (value, low, high).
fn shipped(name: &str) -> (f64, f64, f64) {
    let ladder = ::ladder::Ladder::shipped().expect("the shipped ladder");
    let bot = ::ladder::RungBot::from_name(name).expect("a rung's name");
    let rung = ladder.rung(bot).expect("on the ladder");
    (rung.rating, rung.low, rung.high)
}

fn interval(summary: &Value) -> (f64, f64, f64) {
    let r = &summary["rating"];
    let get = |k: &str| r[k].as_f64().expect("a number");
    (get("value"), get("low"), get("high"))
}

#[test]
fn rate_puts_the_random_mover_at_0() {
    let summary = rate(&hus_random(5), "3");
    let (value, low, high) = interval(&summary);
    let (anchor, _, _) = shipped("random");
    assert_eq!(anchor, 0.0);
    assert!(low <= anchor && anchor <= high, "{value} [{low}, {high}]");
    // It played the bottom of the ladder, not level 10.
    let opponents: Vec<&str> = summary["sets"]
        .as_array()
        .expect("sets")
        .iter()
        .map(|s| s["opponent"].as_str().expect("name"))
        .collect();
    assert!(opponents.contains(&"random"), "{opponents:?}");
    assert!(!opponents.contains(&"level-10"), "{opponents:?}");
}

#[test]
fn rate_puts_level_5_within_its_interval() {
    let bot = format!("'{}' --level 5 --seed 99", alphabeta());
    let summary = rate(&bot, "3");
    let (value, low, high) = interval(&summary);
    let (ladder_value, ladder_low, ladder_high) = shipped("level-5");
    assert!(
        ladder_low <= value && value <= ladder_high,
        "rated {value}, shipped [{ladder_low}, {ladder_high}]"
    );
    assert!(
        low <= ladder_value && ladder_value <= high,
        "shipped {ladder_value}, rated [{low}, {high}]"
    );
}

#[test]
fn rate_refuses_bad_arguments() {
    for (args, says) in [
        (
            &["rate", "x", "--games", "10"][..],
            "--games must be a multiple",
        ),
        (
            &["rate", "x", "--set-games", "3"],
            "--set-games must be an even",
        ),
        (&["rate", "x", "--move-time", "100ms"], "at least 1s"),
        (&["rate", "x", "--only", "level-11"], "no bot \"level-11\""),
        (
            &["rate", "x", "--ladder-bot", "/nonexistent/alphabeta-bot"],
            "cargo build --release -p alphabeta-bot",
        ),
    ] {
        let out = hus(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let list = hus(&["rate", "--list"]);
    assert!(list.status.success());
    let list = text(&list.stdout);
    assert!(
        list.contains("level-10") && list.contains("(the anchor)"),
        "{list}"
    );
}
