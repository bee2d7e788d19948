//! `hus play` driven through a pseudo-terminal, as a person drives it: moves typed,
//! the screen read, whole games against the random mover, bad input, Ctrl-D, Ctrl-C
//! and `q`; every log then verified by `hus replay`.
//!
//! No verdict depends on time: the person's seat has no time limit, the bot a minute a
//! move, and each wait for the screen only fails the test after two minutes of nothing
//! (a hung `hus play`), however loaded the machine.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// How long to wait for text that should come: only a hung process takes this long.
const PATIENCE: Duration = Duration::from_secs(120);

/// `hus play` on the slave side of a pseudo-terminal (its controlling terminal, so
/// that Ctrl-C is a SIGINT and Ctrl-D an end of input, as at a real one).
struct Pty {
    child: Child,
    master: File,
    /// Everything written on the terminal so far (carriage returns dropped), and
    /// whether the terminal is closed (the process and its children are gone).
    screen: Arc<(Mutex<(String, bool)>, Condvar)>,
    /// How much of `screen` the test has read.
    read: usize,
}

impl Pty {
    fn spawn(args: &[&str], dir: &Path) -> Pty {
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let slave = File::from(pty.slave);
        let stdio = || Stdio::from(slave.try_clone().expect("dup the slave"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_hus"));
        command
            .arg("play")
            .args(args)
            .current_dir(dir)
            .env_remove("NO_COLOR")
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("hus play starts");
        // Only the child holds the slave now: the master reads EIO when it is gone.
        drop(command);
        drop(slave);
        let master = File::from(pty.master);
        let mut reader = master.try_clone().expect("dup the master");
        let screen = Arc::new((Mutex::new((String::new(), false)), Condvar::new()));
        let shared = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = reader.read(&mut buf).unwrap_or(0);
                let (lock, cvar) = &*shared;
                let mut s = lock.lock().expect("screen lock");
                if n == 0 {
                    s.1 = true;
                    cvar.notify_all();
                    return;
                }
                s.0.push_str(&String::from_utf8_lossy(&buf[..n]).replace('\r', ""));
                cvar.notify_all();
            }
        });
        Pty {
            child,
            master,
            screen,
            read: 0,
        }
    }

    /// Waits for the first of `texts` after what was read so far; returns which one
    /// and everything up to and including it (which counts as read).
    fn expect_any(&mut self, texts: &[&str]) -> (usize, String) {
        let (lock, cvar) = &*self.screen;
        let deadline = Instant::now() + PATIENCE;
        let mut s = lock.lock().expect("screen lock");
        loop {
            let fresh = &s.0[self.read..];
            let found = texts
                .iter()
                .enumerate()
                .filter_map(|(i, t)| fresh.find(t).map(|at| (at + t.len(), i)))
                .min();
            if let Some((end, i)) = found {
                let seen = fresh[..end].to_string();
                self.read += end;
                return (i, seen);
            }
            let now = Instant::now();
            assert!(
                !s.1 && now < deadline,
                "never saw any of {texts:?}; the screen after what was read:\n{fresh}"
            );
            s = cvar.wait_timeout(s, deadline - now).expect("screen lock").0;
        }
    }

    fn expect(&mut self, text: &str) -> String {
        self.expect_any(&[text]).1
    }

    fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).expect("type");
        self.master.flush().expect("type");
    }

    /// Waits for the process to exit, and for the terminal to close; its exit status.
    fn finish(&mut self) -> (Option<i32>, String) {
        let status = self.child.wait().expect("hus play ends");
        let (lock, cvar) = &*self.screen;
        let deadline = Instant::now() + PATIENCE;
        let mut s = lock.lock().expect("screen lock");
        while !s.1 && Instant::now() < deadline {
            s = cvar
                .wait_timeout(s, Duration::from_millis(100))
                .expect("screen lock")
                .0;
        }
        let rest = s.0[self.read..].to_string();
        self.read = s.0.len();
        (status.code(), rest)
    }
}

/// The legal pits of the last prompt in `seen`: `your move (pits 4, 5, 6): `.
fn prompt_pits(seen: &str) -> Vec<u32> {
    let at = seen.rfind("your move (pits ").expect("a prompt") + "your move (pits ".len();
    let list = &seen[at..];
    let list = &list[..list.find(')').expect("the prompt's end")];
    list.split(", ")
        .map(|p| p.parse().expect("a pit number"))
        .collect()
}

/// The one log of `dir`.
fn the_log(dir: &Path) -> PathBuf {
    file_ending(&dir.join("hus-logs"), ".jsonl")
}

/// `hus replay LOG`: its exit status and the line that starts with `verified:`.
fn replay_verdict(log: &Path) -> (Option<i32>, String) {
    let out = hus(&["replay", &log.display().to_string()]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("verified:"))
        .unwrap_or_else(|| panic!("no verified line:\n{stdout}"))
        .to_string();
    (out.status.code(), line)
}

/// A whole game against the random mover, typed move by move (the lowest legal pit
/// each time), to its end; the log is a `hus match` log that `hus replay` verifies,
/// and it holds exactly the moves typed.
#[test]
fn a_whole_game_against_the_random_mover_typed_in_a_terminal_is_logged_and_verified() {
    let dir = LogDir::new();
    let mut pty = Pty::spawn(
        &[
            "random",
            "--seed",
            "11",
            "--move-time",
            "60s",
            "--color",
            "never",
            "--name",
            "ada",
        ],
        dir.path(),
    );
    let opening = pty.expect("game 1: you begin\n");
    assert!(
        opening.contains(
            "hus play: ada against random, 1 game of hus rules at width 8; you have no time limit"
        ),
        "{opening}"
    );
    let mut typed = Vec::new();
    let mut seen_boards = 0;
    loop {
        let (which, seen) = pty.expect_any(&["): ", "set over: "]);
        if which == 1 {
            break;
        }
        assert!(
            seen.contains("P0 front"),
            "a board before each prompt:\n{seen}"
        );
        seen_boards += 1;
        let pits = prompt_pits(&seen);
        let pit = pits[0];
        typed.push(pit);
        pty.send(&format!("{pit}\n"));
        // The move is described as `hus replay` describes it.
        pty.expect(&format!("you play pit {pit}: "));
    }
    let (code, rest) = pty.finish();
    assert_eq!(code, Some(0), "{rest}");
    assert!(typed.len() >= 5 && seen_boards == typed.len(), "{typed:?}");

    let log = the_log(dir.path());
    let name = log
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .to_string();
    assert!(
        name.ends_with("-11-ada-vs-random.jsonl") || name.ends_with("-11-random-vs-ada.jsonl"),
        "{name}"
    );
    let records = read_log(&log);
    verify_log(&records);
    let header = &of_type(&records, "header")[0];
    let person = header["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .position(|b| b["command"] == "person")
        .expect("the person's side");
    assert_eq!(header["bots"][person]["name"], "ada");
    assert_eq!(header["bots"][person]["time"]["move_ms"], 604_800_000);
    assert_eq!(
        header["bots"][1 - person]["command"],
        "hus random-bot --seed 11"
    );
    assert_eq!(header["bots"][1 - person].get("time"), None);
    assert_eq!(header["time"]["move_ms"], 60_000);
    // --first me: the person begins.
    assert_eq!(of_type(&records, "game-start")[0]["first"], person);
    let mine: Vec<u64> = of_type(&records, "move")
        .iter()
        .filter(|m| m["bot"] == person)
        .map(|m| m["pit"].as_u64().expect("a pit"))
        .collect();
    assert_eq!(
        mine,
        typed.iter().map(|&p| u64::from(p)).collect::<Vec<_>>()
    );
    let ready: Vec<&Value> = of_type(&records, "ready");
    assert!(ready
        .iter()
        .any(|r| r["bot"] == person && r["peer"] == "terminal"));
    let end = &of_type(&records, "set-end")[0];
    let points = &end["points"];
    // The set's end on the screen agrees with the log.
    let shown = format!(
        "{}, points {}-{}",
        match end["winner"].as_u64() {
            Some(w) if w as usize == person => "you win the set".to_string(),
            Some(_) => "random wins the set".to_string(),
            None => "the set is drawn".to_string(),
        },
        points[person],
        points[1 - person]
    );
    assert!(rest.contains(&shown), "{shown:?} not in:\n{rest}");
    let moves = of_type(&records, "move").len();
    assert_eq!(
        replay_verdict(&log),
        (Some(0), format!("verified: 1 game, {moves} moves"))
    );
}

/// Bad input costs nothing: each gets its message and the prompt again; then Ctrl-D
/// ends the set, the log ending with `aborted`.
#[test]
fn bad_input_is_explained_and_ctrl_d_stops_the_set_with_an_aborted_log() {
    let dir = LogDir::new();
    let mut pty = Pty::spawn(
        &["random", "--seed", "3", "--color", "never", "--first", "me"],
        dir.path(),
    );
    let legal = "4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15";
    pty.expect(&format!("your move (pits {legal}): "));
    for (typed, message) in [
        (
            "3",
            format!("pit 3 holds 0 seeds (a move needs at least 2): type one of {legal}"),
        ),
        (
            "abc",
            format!("\"abc\" is not a pit number: type one of {legal}"),
        ),
        (
            "-1",
            format!("\"-1\" is not a pit number: type one of {legal}"),
        ),
        (
            "16",
            format!("there is no pit 16 (your pits are 0 to 15): type one of {legal}"),
        ),
    ] {
        pty.send(&format!("{typed}\n"));
        pty.expect(&format!("{typed}\n{message}\nyour move (pits {legal}): "));
    }
    // A legal move still counts after all that.
    pty.send("4\n");
    pty.expect("you play pit 4: ");
    pty.expect("your move (pits ");
    pty.send("\x04");
    let (code, rest) = pty.finish();
    assert_eq!(code, Some(130), "{rest}");
    let log = the_log(dir.path());
    assert!(
        rest.contains(&format!(
            "hus play: stopped by the end of the input; no game was finished; the log hus-logs/{} holds the first game up to the stop",
            log.file_name().expect("a name").to_string_lossy()
        )),
        "{rest}"
    );
    let records = read_log(&log);
    let last = records.last().expect("records");
    assert_eq!(
        (&last["type"], &last["reason"]),
        (
            &Value::from("aborted"),
            &Value::from("stopped by the end of the input")
        )
    );
    // One move each was played, and verified.
    assert_eq!(
        replay_verdict(&log),
        (
            Some(0),
            "verified: 0 games, 2 moves; game 1 has no game-end (2 of its moves verified); the set was aborted (stopped by the end of the input)".to_string()
        )
    );
}

/// Ctrl-C at the prompt is a SIGINT: the set stops as `hus match` stops, and `q` stops
/// it too; both logs end with `aborted` and verify.
#[test]
fn ctrl_c_and_q_stop_the_set_with_an_aborted_log() {
    for (key, reason) in [
        ("\x03", "stopped by SIGINT"),
        ("q\n", "stopped by the person (q)"),
    ] {
        let dir = LogDir::new();
        let mut pty = Pty::spawn(
            &[
                "random", "--seed", "4", "--color", "never", "--first", "bot",
            ],
            dir.path(),
        );
        // The bot begins: its move is described, then it is the person's turn.
        pty.expect("game 1: random begins\n");
        pty.expect("random plays pit ");
        // The person is player 1: the board is drawn from their seat, their rows at
        // the bottom.
        let seen = pty.expect("your move (pits ");
        assert!(
            seen.ends_with("P1 pit       15   14   13   12   11   10    9    8\n          player 1: you  <- to move\nyour move (pits "),
            "{seen}"
        );
        pty.send(key);
        let (code, rest) = pty.finish();
        assert_eq!(code, Some(130), "{rest}");
        assert!(rest.contains(&format!("hus play: {reason}; ")), "{rest}");
        let log = the_log(dir.path());
        let records = read_log(&log);
        let last = records.last().expect("records");
        assert_eq!(last["type"], "aborted");
        assert_eq!(last["reason"], reason);
        assert_eq!(
            replay_verdict(&log),
            (
                Some(0),
                format!("verified: 0 games, 1 move; game 1 has no game-end (1 of its moves verified); the set was aborted ({reason})")
            )
        );
    }
}

/// With `--my-time`, a person who does not move in time loses the game by time-out,
/// as a bot does, and sits down again for the next game (the referee asks the seat for
/// a new link, as it restarts a bot). The margin is the person's own deadline: the test
/// types nothing in game 1.
#[test]
fn out_of_my_time_the_game_is_lost_and_the_next_is_played_on_a_new_seat() {
    let dir = LogDir::new();
    let mut pty = Pty::spawn(
        &[
            "random",
            "--seed",
            "6",
            "--color",
            "never",
            "--first",
            "me",
            "--games",
            "2",
            "--my-time",
            "2s",
        ],
        dir.path(),
    );
    pty.expect("game 1: you begin\n");
    pty.expect("your move within 2 s (pits ");
    pty.expect("hus play: no move within 2 s: the game is lost by time-out\n");
    pty.expect("hus play: the referee closed your seat after a fault (you sit down again if there is a next game)\n");
    pty.expect("game 2: ");
    pty.expect("your move within 2 s (pits ");
    pty.send("q\n");
    let (code, rest) = pty.finish();
    assert_eq!(code, Some(130), "{rest}");
    let log = the_log(dir.path());
    let records = read_log(&log);
    let header = &of_type(&records, "header")[0];
    let person = if header["bots"][0]["command"] == "person" {
        0
    } else {
        1
    };
    assert_eq!(
        header["bots"][person]["time"],
        serde_json::json!({"mode": "per-move", "move_ms": 2000, "ready_ms": 10000})
    );
    let faults: Vec<(u64, u64, String, String)> = of_type(&records, "fault")
        .iter()
        .map(|f| {
            (
                f["game"].as_u64().expect("game"),
                f["bot"].as_u64().expect("bot"),
                f["kind"].as_str().expect("kind").to_string(),
                f["detail"].as_str().expect("detail").to_string(),
            )
        })
        .collect();
    assert_eq!(
        faults,
        [(
            1,
            person as u64,
            "time-out".to_string(),
            "no move within 2000 ms".to_string()
        )]
    );
    let restarts: Vec<(u64, u64)> = of_type(&records, "restart")
        .iter()
        .map(|r| {
            (
                r["bot"].as_u64().expect("bot"),
                r["game"].as_u64().expect("game"),
            )
        })
        .collect();
    assert_eq!(restarts, [(person as u64, 2)]);
    let (code, line) = replay_verdict(&log);
    assert_eq!(code, Some(0));
    assert!(
        line.starts_with("verified: 1 game, ")
            && line.ends_with("the set was aborted (stopped by the person (q))"),
        "{line}"
    );
}
