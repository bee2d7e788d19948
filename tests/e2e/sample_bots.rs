//! The sample bots never fault: many seeds, every preset, several widths. What is tested
//! is that they follow the protocol and the rules, so they get allowances no healthy
//! bot misses on a loaded machine (`GENEROUS`); the Rust bot's own time keeping is
//! tested with a wide margin, and its strength at a fixed depth.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::common::*;

/// The release build of the Rust sample bot (built once per test run).
pub fn alphabeta() -> String {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let path = BUILT.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "-q", "-p", "alphabeta-bot"])
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building alphabeta-bot failed");
        root().join("target/release/alphabeta-bot")
    });
    path.display().to_string()
}

/// The Java random bot, compiled once into a temporary directory.
fn java_bot() -> String {
    // The compiled class: not logs.
    static BUILT: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();
    let (_, command) = BUILT.get_or_init(|| {
        // Not logs: a class file.
        let dir = tempfile::tempdir().expect("temp dir");
        let status = Command::new("javac")
            .arg("-d")
            .arg(dir.path())
            .arg(root().join("sample-bots/java/RandomBot.java"))
            .status()
            .expect("javac is installed (tests/setup.sh installs it)");
        assert!(status.success(), "javac failed");
        let command = format!("java -cp {} RandomBot", dir.path().display());
        (dir, command)
    });
    command.clone()
}

fn js_bot() -> String {
    format!(
        "node {}",
        root().join("sample-bots/js/random_bot.js").display()
    )
}

/// Plays `bot` against `opponent` under each preset and a few widths and seeds, and
/// asserts that neither side ever faulted.
fn never_faults(bot: &str, opponent: &str, extra: &[&str], seeds: &[&str]) {
    let mut games = 0;
    for (i, seed) in seeds.iter().enumerate() {
        let preset = ["hus", "rulebook", "mancala-world"][i % 3];
        let width = ["8", "11", "16", "8", "9"][i % 5];
        let mut args = vec![
            "--rules", preset, "--width", width, "--games", "3", "--seed", seed,
        ];
        args.extend_from_slice(extra);
        let p = play(bot, opponent, &args);
        for b in 0..2 {
            assert_eq!(
                p.summary["bots"][b]["faults"], 0,
                "{bot} {preset} {width} seed {seed}: {}",
                p.summary["faults"]
            );
        }
        games += p.summary["games_played"].as_u64().expect("games");
    }
    // The last --games wins, as for `hus match`.
    let per_set: u64 = extra
        .iter()
        .rposition(|a| *a == "--games")
        .map_or(3, |i| extra[i + 1].parse().expect("a number of games"));
    assert_eq!(games, per_set * seeds.len() as u64);
}

const SEEDS: [&str; 6] = ["1", "2", "3", "4", "5", "6"];

#[test]
fn python_random_bot_never_faults() {
    never_faults(&random_bot(), &hus_random(1), &[], &SEEDS);
}

#[test]
fn python_greedy_bot_never_faults() {
    never_faults(&greedy_bot(), &random_bot(), &[], &SEEDS);
}

#[test]
fn javascript_random_bot_never_faults() {
    never_faults(&js_bot(), &random_bot(), &[], &SEEDS);
}

#[test]
fn java_random_bot_never_faults() {
    never_faults(&java_bot(), &random_bot(), &[], &SEEDS);
}

#[test]
fn rust_alphabeta_bot_never_faults() {
    // A fixed depth: the rules and the protocol, whatever the machine's load.
    never_faults(
        &format!("{} --depth 4", alphabeta()),
        &random_bot(),
        &[],
        &SEEDS,
    );
}

#[test]
fn rust_alphabeta_keeps_to_its_time() {
    // By time, as it plays by default: it plans a third of the 3 s per move, so each
    // answer has about 2 s of margin (stalls of 0.7 s were seen on a saturated 2-core
    // machine), and nothing it waits for is slow to start.
    never_faults(
        &alphabeta(),
        &hus_random(2),
        &["--move-time", "3s", "--games", "1"],
        &["7"],
    );
}

#[test]
fn rust_alphabeta_at_depth_6_beats_python_greedy() {
    // At a fixed depth its strength does not depend on the machine's speed (at 100 ms a
    // move on a loaded machine it searches less deep).
    let p = play(
        &format!("{} --depth 6", alphabeta()),
        &greedy_bot(),
        &["--seed", "2026"],
    );
    let wins = p.summary["bots"][0]["wins"].as_u64().expect("wins");
    assert!(
        wins >= 6,
        "alphabeta won only {wins} of 7: {}",
        p.summary["games"]
    );
    assert_eq!(p.summary["winner"], 0);
}
