//! The sample bots never fault: many seeds, every preset, several widths.

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
    static BUILT: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();
    let (_, command) = BUILT.get_or_init(|| {
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

/// Plays `bot` against the Python random bot under each preset and a few widths and
/// seeds, and asserts that neither side ever faulted.
fn never_faults(bot: &str, move_time: &str, seeds: &[&str]) {
    let opponent = random_bot();
    let mut games = 0;
    for (i, seed) in seeds.iter().enumerate() {
        let preset = ["hus", "rulebook", "mancala-world"][i % 3];
        let width = ["8", "11", "16", "8", "9"][i % 5];
        let p = play(
            bot,
            &opponent,
            &[
                "--rules",
                preset,
                "--width",
                width,
                "--games",
                "3",
                "--seed",
                seed,
                "--move-time",
                move_time,
            ],
        );
        for b in 0..2 {
            assert_eq!(
                p.summary["bots"][b]["faults"], 0,
                "{bot} {preset} {width} seed {seed}: {}",
                p.summary["faults"]
            );
        }
        games += p.summary["games_played"].as_u64().expect("games");
    }
    assert_eq!(games, 3 * seeds.len() as u64);
}

const SEEDS: [&str; 6] = ["1", "2", "3", "4", "5", "6"];

#[test]
fn python_random_bot_never_faults() {
    never_faults(&random_bot(), "1s", &SEEDS);
}

#[test]
fn python_greedy_bot_never_faults() {
    never_faults(&greedy_bot(), "1s", &SEEDS);
}

#[test]
fn javascript_random_bot_never_faults() {
    never_faults(&js_bot(), "1s", &SEEDS);
}

#[test]
fn java_random_bot_never_faults() {
    never_faults(&java_bot(), "1s", &SEEDS);
}

#[test]
fn rust_alphabeta_bot_never_faults() {
    // It plans to use a third of its time; 300 ms leaves room for a loaded test machine.
    never_faults(&alphabeta(), "300ms", &SEEDS);
}

#[test]
fn rust_alphabeta_beats_python_greedy_at_100ms() {
    let p = play(
        &alphabeta(),
        &greedy_bot(),
        &["--move-time", "100ms", "--seed", "2026"],
    );
    let wins = p.summary["bots"][0]["wins"].as_u64().expect("wins");
    assert!(
        wins >= 6,
        "alphabeta won only {wins} of 7: {}",
        p.summary["games"]
    );
    assert_eq!(p.summary["winner"], 0);
}
