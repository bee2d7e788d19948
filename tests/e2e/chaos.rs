//! The chaos run, short: tests/bench/chaos.py (the benchmark's own driver, so the test
//! and the documented run share one code path) with PostgreSQL, `hus serve` and three
//! `hus worker`s on a league of 24 sets of deterministic paced bots, and each fault
//! exactly once: a worker killed with SIGKILL, a worker stopped with SIGSTOP past its
//! lease, PostgreSQL stopped as by a crash and started again, the server killed with
//! SIGKILL. Then every scheduled set is done exactly once, every log verifies, each
//! set was played move for move as on one machine, and the standings are the logs'
//! and the one machine's.
//!
//! The verdict does not depend on timing: the faults are counted, not timed
//! (`--each-once`), and every check holds whatever a fault hits (a set mid-game, a
//! result mid-commit, nothing at all). Where the faults land decides only which of
//! two equal verdicts applies: a store holding only the file's schedule has the one
//! machine's whole standings; sets the server chose past the schedule (when none was
//! pending any more) are compared with the one machine set by set instead. HANG
//! guards against a hang; it is no verdict.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::root;

/// How long the whole run may take before the test calls it hung (about a minute and
/// a half on a loaded 2-core machine; the script bounds its own waits below this).
const HANG: Duration = Duration::from_secs(480);

#[test]
fn chaos_with_every_fault_once_loses_and_doubles_nothing() {
    let err = tempfile::NamedTempFile::new().expect("a temporary file");
    let mut child = Command::new("python3")
        .arg(root().join("tests/bench/chaos.py"))
        .args(["--hus", env!("CARGO_BIN_EXE_hus")])
        .args([
            "--seed", "2", "--bots", "4", "--rounds", "4", "--games", "4",
        ])
        .args(["--delay-ms", "30", "--lease", "4", "--gap", "1-3"])
        // Each once, the server first: its set's 30 s lease runs out during the others.
        .args(["--each-once", "--faults"])
        .arg("server-kill,worker-stop,pg-restart,worker-kill")
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(err.reopen().expect("reopen"))
        // Its own process group, which the guard below signals whole (`python3` may be
        // a wrapper whose child runs the script).
        .process_group(0)
        .spawn()
        .expect("python3 runs tests/bench/chaos.py");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > HANG {
            // SIGTERM: the script stops what it started and removes its cluster.
            // SAFETY: kill(2) on the process group of our own child, not yet reaped.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGTERM);
            }
            let _ = child.wait();
            panic!(
                "the chaos run still ran after {HANG:?}:\n{}",
                std::fs::read_to_string(err.path()).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut out)
        .expect("read stdout");
    let stderr = std::fs::read_to_string(err.path()).unwrap_or_default();
    assert!(status.success(), "chaos.py: {status}\n{out}\n{stderr}");
    let f: Value = serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {out}\n{stderr}"));

    let done = f["sets_done"].as_u64().expect("sets_done");
    let past = f["sets_past_schedule"]
        .as_u64()
        .expect("sets_past_schedule");
    // 4 bots, 4 rounds: 24 sets, every one done; sets past the schedule on top.
    assert_eq!(f["sets_scheduled"], 24, "{f}\n{stderr}");
    assert_eq!(done, 24 + past, "{f}\n{stderr}");
    assert_eq!(f["lost"], 0, "{f}\n{stderr}");
    assert_eq!(f["counted_twice"], 0, "{f}\n{stderr}");
    // Every result stored is counted (one per done set) or a duplicate kept aside.
    assert_eq!(
        f["results"].as_u64(),
        f["duplicates"].as_u64().map(|d| d + done),
        "{f}\n{stderr}"
    );
    assert_eq!(f["logs_verified"], done, "{f}\n{stderr}");
    assert_eq!(f["sets_as_one_machine"], done, "{f}\n{stderr}");
    assert_eq!(f["standings_as_logs"], true, "{f}\n{stderr}");
    let whole = if past == 0 { json!(true) } else { Value::Null };
    assert_eq!(f["standings_as_one_machine"], whole, "{f}\n{stderr}");
    assert_eq!(
        f["faults"],
        json!({"worker-kill": 1, "worker-stop": 1, "pg-restart": 1, "server-kill": 1}),
        "{f}\n{stderr}"
    );
    assert_eq!(f["unexpected_exits"], 0, "{f}\n{stderr}");
    assert_eq!(f["scratch_left"], 0, "{f}\n{stderr}");
    // 4 games a set.
    assert_eq!(f["games"], 4 * done, "{f}\n{stderr}");
}
