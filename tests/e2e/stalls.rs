//! A frozen referee never costs a bot (issue 34, part 7): `hus match` stopped with
//! SIGSTOP while it waits for a move, for three times the move's time, resumes without
//! a time-out, and the move's `stall_ms` records the stop.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common::*;

/// The state letter of `/proc/PID/stat` (`T`: stopped), if the process is there.
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// Bot A, at its third turn, waits 300 ms, stops its referee (its parent) with SIGSTOP
/// and writes its move as soon as the referee is stopped; the test lets it resume 3 s
/// later. The move time is 1 s: charged the stop, the move would be a time-out by
/// more than 2 s. The verdict does not hang on speed: the stop is seen as at least the
/// 3 s the test waits, less the 100 ms wake-up tick, so the move is charged at most
/// its 300 ms and that tick, and it is read within a moment of the resume, 0.5 s before
/// even the shortest credited deadline.
#[test]
fn a_referee_stopped_mid_move_longer_than_the_move_time_charges_no_time_out() {
    let dir = LogDir::new();
    let stop = Duration::from_secs(3);
    let mut referee = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "match",
            &format!("{} --on 3", misbehave("stop-referee 0.3")),
        ])
        .arg(hus_random(1))
        .args(["--json", "--games", "1", "--seed", "1", "--move-time", "1s"])
        .args(["--ready-time", "30s", "--log-dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus match starts");
    let pid = referee.id();
    // Bounded: the bots' start-up on a loaded machine, then two moves.
    let give_up = Instant::now() + Duration::from_secs(60);
    while state(pid) != Some('T') {
        if let Ok(Some(status)) = referee.try_wait() {
            panic!("hus match ended before its bot stopped it: {status:?}");
        }
        assert!(
            Instant::now() < give_up,
            "the bot never stopped its referee"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(stop);
    assert_eq!(state(pid), Some('T'), "still stopped after {stop:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGCONT,
    )
    .expect("SIGCONT");
    let output = referee.wait_with_output().expect("hus match ends");
    assert!(
        output.status.success(),
        "hus match failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Value = serde_json::from_slice(&output.stdout).expect("the JSON summary");
    let records = read_log(std::path::Path::new(
        summary["log"].as_str().expect("log path"),
    ));
    verify_log(&records);
    assert_eq!(of_type(&records, "fault"), Vec::<&Value>::new());
    // Bot A's third move is the one it stopped the referee for: a stall of the whole
    // stop, less at most the 100 ms tick, all of it in the move's time.
    let moves_of_a: Vec<&Value> = of_type(&records, "move")
        .into_iter()
        .filter(|m| m["bot"] == 0)
        .collect();
    let stopped = moves_of_a[2];
    let ms = stopped["ms"].as_f64().expect("ms");
    let stall = stopped["stall_ms"]
        .as_f64()
        .unwrap_or_else(|| panic!("no stall_ms: {moves_of_a:?}"));
    let waited = stop.as_secs_f64() * 1000.0;
    assert!(stall >= waited - 100.0, "{stopped}");
    assert!(stall <= ms, "{stopped}");
    assert!(ms - stall < 1000.0, "{stopped}");
    // Only the stopped move saw a stop of that size (a busy machine may make other
    // small stalls, never seconds).
    let long_stalls = of_type(&records, "move")
        .iter()
        .filter(|m| m["stall_ms"].as_f64().is_some_and(|s| s >= 1000.0))
        .count();
    assert_eq!(long_stalls, 1);
    assert_eq!(summary["games_played"], 1);
}
