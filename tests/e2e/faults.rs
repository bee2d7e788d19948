//! Each fault: the misbehaving bot is A, the opponent the built-in random mover; one
//! game. Seed 1 makes A move first, so A's fault on its first turn comes before the
//! opponent has anything to answer: no verdict here hangs on the healthy side's speed,
//! and the allowances are generous (`GENEROUS`) except where time is what is tested.

use crate::common::*;

/// Plays one game with A misbehaving in `mode` and returns A's single fault record.
fn fault_of(mode: &str, extra: &[&str]) -> (serde_json::Value, Played) {
    let mut args = vec!["--games", "1", "--seed", "1"];
    args.extend_from_slice(extra);
    let p = play(&misbehave(mode), &hus_random(1), &args);
    let faults = of_type(&p.records, "fault");
    assert_eq!(faults.len(), 1, "{mode}: {faults:?}");
    let f = faults[0].clone();
    assert_eq!(f["bot"], 0, "{mode}");
    let end = &of_type(&p.records, "game-end")[0];
    assert_eq!(end["winner"], 1, "{mode}: the opponent wins");
    if !extra.contains(&"rulebook") {
        assert_eq!(end["points"], serde_json::json!([0, 1]), "{mode}");
    }
    assert_eq!(end["reason"], f["kind"], "{mode}");
    assert_eq!(end["faulted"], serde_json::json!([0]));
    // The fault names the position the bot was to move in.
    let pos: Result<engine::Position, _> = f["position"].as_str().expect("position").parse();
    assert!(pos.is_ok(), "{mode}: {}", f["position"]);
    (f, p)
}

fn check(mode: &str, kind: &str, detail: &str, line: Option<&str>) {
    check_with(mode, &[], kind, detail, line);
}

fn check_with(mode: &str, extra: &[&str], kind: &str, detail: &str, line: Option<&str>) {
    let (f, _) = fault_of(mode, extra);
    assert_eq!(f["kind"], kind, "{mode}: {f}");
    let d = f["detail"].as_str().expect("detail");
    assert!(
        d.contains(detail),
        "{mode}: detail {d:?} should contain {detail:?}"
    );
    if let Some(l) = line {
        assert_eq!(f["line"].as_str(), Some(l), "{mode}");
    }
}

#[test]
fn time_out() {
    // It never answers: any deadline is missed, by any margin.
    check_with(
        "never-answer",
        &["--move-time", "500ms"],
        "time-out",
        "no move within 500 ms",
        None,
    );
}

#[test]
fn exit_and_crash() {
    check("exit 0", "crash", "closed its stdout (exit status 0)", None);
    check("exit 3", "crash", "exit status 3", None);
    check("kill-self", "crash", "killed by signal 9 (SIGKILL)", None);
}

#[test]
fn closed_stdout_while_running() {
    check(
        "close-stdout",
        "crash",
        "closed its stdout (still running)",
        None,
    );
}

#[test]
fn stall_at_start_up() {
    // It never answers hello, so the allowance only has to be long enough for the
    // healthy opponent, which gets the same one: 5 s for a Rust program to start.
    let (f, _) = fault_of("no-hello", &["--ready-time", "5s"]);
    assert_eq!(f["kind"], "start-up");
    assert_eq!(
        f["detail"],
        "no ready within the start-up allowance of 5000 ms"
    );
    assert_eq!(f["ply"], 0);
    let (f, _) = fault_of("die-before-ready", &[]);
    assert_eq!(f["kind"], "crash");
    assert!(
        f["detail"]
            .as_str()
            .is_some_and(|d| d.contains("exit status 3")),
        "{f}"
    );
    let (f, _) = fault_of("move-before-ready", &[]);
    assert_eq!(f["kind"], "wrong-message");
}

#[test]
fn malformed_lines() {
    check(
        "garbage",
        "malformed",
        "",
        Some("thinking... pit 4 looks good"),
    );
    check("array", "malformed", "array", Some("[1,2,3]"));
    check("invalid-utf8", "malformed", "UTF-8", None);
}

#[test]
fn wrong_messages() {
    check(
        "wrong-type",
        "wrong-message",
        "sent ready when a move was asked for",
        None,
    );
    check("unknown-type", "wrong-message", "resign", None);
}

#[test]
fn invalid_pits() {
    check("no-pit", "invalid-pit", "", Some(r#"{"type": "move"}"#));
    check("pit-string", "invalid-pit", "a string", None);
    check("pit-float", "invalid-pit", "4.5", None);
    check("pit-negative", "invalid-pit", "-1", None);
    check("huge-number", "invalid-pit", "1e999", None);
    check("big-int", "invalid-pit", "99999999999999999999", None);
}

#[test]
fn illegal_moves() {
    check(
        "pit-out-of-range",
        "illegal-move",
        "pit 16 does not exist (pits are 0 to 15)",
        None,
    );
    check(
        "pit-too-few",
        "illegal-move",
        "a move needs at least 2",
        None,
    );
}

#[test]
fn a_faulting_bot_is_restarted_for_the_next_game() {
    let p = play(
        &misbehave("exit 1"),
        &hus_random(1),
        &["--games", "3", "--seed", "2"],
    );
    // It faults on its first turn in every game, and is restarted before games 2 and 3.
    assert_eq!(of_type(&p.records, "fault").len(), 3);
    let restarts: Vec<u64> = of_type(&p.records, "restart")
        .iter()
        .map(|r| r["game"].as_u64().expect("game"))
        .collect();
    assert_eq!(restarts, [2, 3]);
    assert_eq!(
        of_type(&p.records, "ready")
            .iter()
            .filter(|r| r["bot"] == 0)
            .count(),
        3
    );
    assert_eq!(p.summary["bots"][0]["faults"], 3);
    assert_eq!(p.summary["points"], serde_json::json!([0, 3]));
}

#[test]
fn rulebook_faults_give_every_seed_to_the_opponent() {
    let (_, p) = fault_of("garbage", &["--rules", "rulebook"]);
    let end = &of_type(&p.records, "game-end")[0];
    assert_eq!(end["points"], serde_json::json!([0, 48]));
}
