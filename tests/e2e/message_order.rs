//! The order of the messages a healthy bot receives, whatever its opponent does: `game`
//! precedes every `result` (PROTOCOL.md, "Message order"). The healthy bot is B,
//! `tests/bots/recorder.py`, which writes down every line it receives; A misbehaves.

use serde_json::Value;

use crate::common::*;

/// Plays a set of A against the recorder and returns what the recorder received, and
/// the set.
fn received(a: &str, extra: &[&str]) -> (Vec<Value>, Played) {
    let dir = LogDir::new();
    // The recorder's messages, one JSON object a line: not a log.
    let file = dir.broken("received.jsonl");
    let recorder = format!(
        "{} {}",
        bot("tests/bots/recorder.py"),
        file.to_str().expect("utf-8 path")
    );
    let p = play(a, &recorder, extra);
    let messages = std::fs::read_to_string(&file)
        .expect("the recorder wrote its file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line received is JSON"))
        .collect();
    (messages, p)
}

/// `hello`, `game 1`, `turn 1`, `result 1`, ..., `bye`.
fn kinds(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            let kind = m["type"].as_str().expect("type");
            match m["game"].as_u64() {
                Some(game) => format!("{kind} {game}"),
                None => kind.to_string(),
            }
        })
        .collect()
}

/// What bot B must have received in this set, from its log: `hello`, then for each game
/// `game`, one `turn` per move of B, `result`; then `bye`. B answers every turn, so its
/// turns are its moves.
fn expected(records: &[Value]) -> Vec<String> {
    let mut out = vec!["hello".to_string()];
    for end in of_type(records, "game-end") {
        let game = end["game"].as_u64().expect("game");
        out.push(format!("game {game}"));
        let turns = records
            .iter()
            .filter(|r| r["type"] == "move" && r["game"] == game && r["bot"] == 1)
            .count();
        out.extend(std::iter::repeat_n(format!("turn {game}"), turns));
        out.push(format!("result {game}"));
    }
    out.push("bye".to_string());
    out
}

/// The opponent of the recorder never starts: every game is lost by it before a move,
/// and the recorder hears `game` then `result` for each.
fn opponent_never_starts(mode: &str, reason: &str, extra: &[&str]) {
    let mut args = vec!["--games", "2", "--seed", "1"];
    args.extend_from_slice(extra);
    let (messages, p) = received(&misbehave(mode), &args);
    assert_eq!(
        kinds(&messages),
        ["hello", "game 1", "result 1", "game 2", "result 2", "bye"],
        "{mode}"
    );
    assert_eq!(kinds(&messages), expected(&p.records), "{mode}");
    for result in messages.iter().filter(|m| m["type"] == "result") {
        assert_eq!(result["reason"], reason, "{mode}: {result}");
        assert_eq!(result["fault_by"], "opponent", "{mode}: {result}");
        assert_eq!(result["outcome"], "win", "{mode}: {result}");
        assert_eq!(result["plies"], 0, "{mode}: {result}");
    }
    assert_eq!(p.summary["bots"][0]["faults"], 2, "{mode}");
    assert_eq!(p.summary["bots"][1]["faults"], 0, "{mode}");
}

#[test]
fn game_then_result_when_the_opponent_never_answers_hello() {
    // It never answers: 5 s of allowance are only the recorder's, to start Python.
    opponent_never_starts("no-hello", "start-up", &["--ready-time", "5s"]);
}

#[test]
fn game_then_result_when_the_opponent_exits_at_start_up() {
    opponent_never_starts("die-before-ready", "crash", &[]);
}

#[test]
fn game_turns_result_when_the_opponent_crashes_mid_set() {
    // A crashes on its third turn in each of its processes: in every game, after two
    // moves; it is restarted before the next game.
    let (messages, p) = received(
        &misbehave("kill-self --on 3"),
        &["--games", "3", "--seed", "1"],
    );
    let got = kinds(&messages);
    assert_eq!(got, expected(&p.records));
    assert_eq!(of_type(&p.records, "restart").len(), 2);
    let results: Vec<&Value> = messages.iter().filter(|m| m["type"] == "result").collect();
    assert_eq!(results.len(), 3);
    for result in results {
        assert_eq!(result["reason"], "crash", "{result}");
        assert_eq!(result["fault_by"], "opponent", "{result}");
    }
    // Turns came in every game: the crash was mid-game.
    for game in 1..=3 {
        assert!(got.contains(&format!("turn {game}")), "{got:?}");
    }
}
