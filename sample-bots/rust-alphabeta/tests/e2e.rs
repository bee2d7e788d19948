//! End-to-end: the built binary through scripted exchanges, as the referee would run it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use engine::{Player, Position, Preset, Rules};
use protocol::{RefereeMessage, Turn};
use serde_json::{json, Value};

const BOT: &str = env!("CARGO_BIN_EXE_alphabeta-bot");

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Session {
    fn start(args: &[&str]) -> Session {
        let mut child = Command::new(BOT)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the bot starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        if !line.ends_with('\n') {
            stdin.write_all(b"\n").expect("write");
        }
        stdin.flush().expect("flush");
    }

    fn answer(&self, within: Duration) -> Value {
        let line = self.lines.recv_timeout(within).expect("an answer in time");
        assert!(line.ends_with('}'), "one JSON object per line: {line:?}");
        serde_json::from_str(&line).expect("the answer is JSON")
    }

    fn no_more_output(&self) {
        if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(100)) {
            panic!("unexpected line from the bot: {line:?}");
        }
    }

    /// Closes stdin (like the referee after `bye`) and waits up to `within` for exit.
    fn exit_status(mut self, close_stdin: bool, within: Duration) -> ExitStatus {
        if close_stdin {
            self.stdin = None;
        }
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            if start.elapsed() > within {
                let _ = self.child.kill();
                panic!("the bot did not exit within {within:?}");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

fn hello(preset: &str, width: u32, move_ms: u64) -> String {
    json!({
        "type": "hello", "protocol": 1, "referee": "hus 0.1.0",
        "rules": {
            "preset": preset, "width": width, "sowing": "clockwise",
            "capture": "front-run", "captured_sown_from": "landing", "scoring": "wins",
            "double_win": true, "min_seeds_to_move": 2, "max_sown_per_move": 3000,
            "no_capture_limit": 200, "repetition": true, "seeds_per_player": 24,
            "a_field_from_the_future": [1, 2]
        },
        "time": {"mode": "per-move", "move_ms": move_ms, "ready_ms": 10000},
        "games": 1, "line_limit": 65536
    })
    .to_string()
}

fn pits(pos: &Position, player: Player) -> Vec<u32> {
    pos.pits(player).into_iter().map(u32::from).collect()
}

/// The turn for player 0 in `pos`.
fn turn(pos: &Position, ply: u32, last: Option<u32>, time_ms: u64) -> (String, Vec<u32>) {
    let legal: Vec<u32> = pos.legal_moves().map(|p| p as u32).collect();
    let turn = Turn {
        game: 1,
        ply,
        you: pits(pos, Player::Zero),
        opponent: pits(pos, Player::One),
        legal: legal.clone(),
        last,
        time_ms,
        opponent_time_ms: None,
    };
    (RefereeMessage::Turn(turn).to_line(), legal)
}

fn played_pit(answer: &Value, legal: &[u32]) -> u32 {
    assert_eq!(answer["type"], "move", "{answer}");
    let pit = answer["pit"].as_u64().expect("an integer pit") as u32;
    assert!(legal.contains(&pit), "pit {pit} is not in {legal:?}");
    pit
}

/// A game of `turns` bot moves against an opponent that plays its first legal pit,
/// then `result` and `bye`; the bot must exit by itself right after `bye`.
fn play_scripted(preset: Preset, width: u32, args: &[&str], turns: u32) -> Vec<u32> {
    // It plans a third of the time: about 2 s of margin for each answer to come back
    // on a loaded machine (stalls of 0.7 s were seen on a saturated 2-core machine).
    let time_ms = 3000;
    let rules = Rules::new(preset, width as usize).expect("valid rules");
    let mut session = Session::start(args);
    session.send(&hello(preset.name(), width, time_ms));
    let ready = session.answer(Duration::from_secs(5));
    assert_eq!(ready["type"], "ready");
    assert!(ready["name"].is_string());

    let mut pos = Position::start(rules);
    session.send(
        &json!({"type": "game", "game": 1, "first": true,
                "you": pits(&pos, Player::Zero), "opponent": pits(&pos, Player::One)})
        .to_string(),
    );
    session.send("   ");
    session.send(r#"{"type":"chat","text":"an unknown type is ignored"}"#);
    let mut played = Vec::new();
    let mut last = None;
    for ply in 0..turns {
        if pos.legal_moves().is_empty() {
            break;
        }
        let (line, legal) = turn(&pos, 2 * ply, last, time_ms);
        session.send(&line);
        let sent = Instant::now();
        let answer = session.answer(Duration::from_secs(5));
        let took = sent.elapsed();
        assert!(
            took < Duration::from_millis(time_ms),
            "answered in {took:?}"
        );
        let pit = played_pit(&answer, &legal);
        played.push(pit);
        pos.play(pit as usize).expect("legal");
        // The opponent (player 1) replies with its first legal pit.
        let Some(reply) = pos.legal_moves().next() else {
            break;
        };
        pos.play(reply).expect("legal");
        last = Some(reply as u32);
    }
    session.no_more_output();
    session.send(
        &json!({"type": "result", "game": 1, "outcome": "draw", "reason": "no-capture-limit",
                "points": {"you": 0, "opponent": 0}, "last": last,
                "you": pits(&pos, Player::Zero), "opponent": pits(&pos, Player::One),
                "plies": 2 * turns})
        .to_string(),
    );
    session.send(r#"{"type":"bye","points":{"you":0,"opponent":0},"outcome":"draw"}"#);
    let status = session.exit_status(false, Duration::from_secs(10));
    assert!(status.success(), "{status}");
    played
}

#[test]
fn plays_legal_moves_and_exits_after_bye() {
    let played = play_scripted(Preset::Hus, 8, &[], 6);
    assert!(!played.is_empty());
}

#[test]
fn plays_every_preset_and_a_wide_board() {
    play_scripted(Preset::Rulebook, 12, &["--name", "wide"], 3);
    play_scripted(Preset::MancalaWorld, 16, &["--depth", "3"], 3);
}

#[test]
fn first_legal_answers_the_first_legal_pit() {
    let played = play_scripted(Preset::Hus, 8, &["--first-legal"], 5);
    assert_eq!(played[0], 4);
}

#[test]
fn refuses_unknown_rules_with_exit_code_2() {
    for (preset, width) in [("oware", 8), ("hus", 33), ("hus", 6)] {
        let mut session = Session::start(&[]);
        session.send(&hello(preset, width, 100));
        session.no_more_output();
        let status = session.exit_status(false, Duration::from_secs(2));
        assert_eq!(status.code(), Some(2), "{preset} {width}");
    }
}

#[test]
fn a_turn_that_disagrees_with_the_engine_gets_the_first_legal_pit() {
    let mut session = Session::start(&[]);
    session.send(&hello("hus", 8, 100));
    assert_eq!(session.answer(Duration::from_secs(5))["type"], "ready");
    // `legal` lists pit 3, which holds one seed: the engine disagrees.
    let odd = json!({"type": "turn", "game": 1, "ply": 0, "you": [0,0,0,1,2,2,2,2,2,2,2,2,2,2,2,2],
                     "opponent": [0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2], "legal": [3, 4],
                     "last": null, "time_ms": 100});
    session.send(&odd.to_string());
    assert_eq!(session.answer(Duration::from_secs(2))["pit"], 3);
    // A turn with a field of the wrong type cannot be decoded, but is still answered.
    let broken = json!({"type": "turn", "legal": [5, 6], "time_ms": "soon"});
    session.send(&broken.to_string());
    assert_eq!(session.answer(Duration::from_secs(2))["pit"], 5);
    // End of stdin without bye: the bot exits too.
    let status = session.exit_status(true, Duration::from_secs(2));
    assert!(status.success(), "{status}");
}
