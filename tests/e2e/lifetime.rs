//! How long bots live: no bot outlives a referee killed with SIGKILL (with and without
//! the sandbox, `hus match` and `hus league`), a process a bot started that left its
//! session and its pipes is reported and ended with the set (and `hus check-bot` says
//! so), and no file of a log or league directory is opened through a symbolic link.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::common::*;
use super::sandbox::{sandbox_env, sandbox_flags};
use super::untrusted::tag;

fn hus_bin() -> &'static str {
    env!("CARGO_BIN_EXE_hus")
}

/// The pids of the live processes tagged `marker` that are Python (the bot itself, not
/// the `hus` whose command line names it, nor bubblewrap).
fn python_with(marker: &str) -> Vec<u32> {
    alive_with(marker)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim().starts_with("python"))
        })
        .collect()
}

/// Waits (bounded: a start-up on a loaded machine) until `n` tagged bots run.
fn wait_for_bots(marker: &str, n: usize, referee: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while python_with(marker).len() < n {
        if let Ok(Some(status)) = referee.try_wait() {
            panic!("the referee ended before its bots ran: {status:?}");
        }
        assert!(Instant::now() < deadline, "the bots never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL to `referee` once `n` bots tagged `marker` run; then none may be left.
fn kill_and_check(mut referee: Child, marker: &str, n: usize) {
    wait_for_bots(marker, n, &mut referee);
    referee.kill().expect("SIGKILL");
    referee.wait().expect("reaped");
    // Healthy cleanup is immediate; the bound is only for a loaded machine.
    assert_eq!(survivors(marker), Vec::<u32>::new(), "survivors");
}

/// `hus match` between a bot that never answers (tagged) and the random mover, both
/// sandboxed if `sandbox`.
fn spawn_match(marker: &str, dir: &Path, sandbox: bool) -> Child {
    let bot = format!("{} --tag {marker}", misbehave("never-answer"));
    spawn_match_of(&bot, dir, sandbox)
}

/// `hus match` between `bot` and the random mover, both sandboxed if `sandbox`, set to
/// wait a minute for a move.
fn spawn_match_of(bot: &str, dir: &Path, sandbox: bool) -> Child {
    let (extra, env) = if sandbox {
        (sandbox_flags(), sandbox_env())
    } else {
        (Vec::new(), Vec::new())
    };
    Command::new(hus_bin())
        .args(["match", bot, &hus_random(1), "--log-dir"])
        .arg(dir)
        .args(["--games", "1", "--seed", "1", "--move-time", "60s"])
        .args(["--ready-time", "30s"])
        .args(extra)
        .envs(env)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hus match starts")
}

#[test]
fn a_match_killed_with_sigkill_leaves_no_bot() {
    let dir = LogDir::new().cut_ok();
    let marker = tag("kill-match");
    kill_and_check(spawn_match(&marker, dir.path(), false), &marker, 1);
}

#[test]
fn a_match_killed_with_sigkill_leaves_nothing_the_bot_started() {
    // The bot is a shell that starts a sleeper in a session of its own (its output on
    // /dev/null: no pipe of the bot's), then becomes the bot that never answers. The
    // bot dies with the referee by its parent-death signal; the sleeper, an orphan of
    // a dead subreaper, would go to init and sleep on: the guardian ends it.
    let dir = LogDir::new().cut_ok();
    let marker = tag("kill-match-orphan");
    let script = root().join("tests/bots/misbehave.py");
    let bot = format!(
        "sh -c \"setsid python3 -c 'import time; time.sleep(60)' {marker} </dev/null >/dev/null 2>&1 & \
         exec python3 {} never-answer --tag {marker}\"",
        script.display()
    );
    // The bot and its sleeper: two Python processes with the marker.
    kill_and_check(spawn_match_of(&bot, dir.path(), false), &marker, 2);
}

#[test]
fn a_sandboxed_match_killed_with_sigkill_leaves_no_bot() {
    let dir = LogDir::new().cut_ok();
    let marker = tag("kill-match-sandbox");
    kill_and_check(spawn_match(&marker, dir.path(), true), &marker, 1);
}

/// A league of two tagged bots that never answer, in `tmp/league`.
fn spawn_league(tmp: &Path, marker: &str, sandbox: bool) -> Child {
    let bot = format!("{} --tag {marker}", misbehave("never-answer"));
    let mut text = "games = 1\nmove_time = \"60s\"\nready_time = \"30s\"\nseed = 3\n".to_string();
    for name in ["a", "b"] {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{bot}\"\n"
        ));
        if sandbox {
            text.push_str("sandbox = true\n");
            // The interpreter's installation, when outside /usr (as sandbox_flags).
            let flags = sandbox_flags();
            let ro: Vec<String> = flags
                .windows(2)
                .filter(|w| w[0] == "--sandbox-ro")
                .map(|w| format!("{:?}", w[1]))
                .collect();
            text.push_str(&format!("sandbox_ro = [{}]\n", ro.join(", ")));
        }
    }
    let file = tmp.join("L.toml");
    std::fs::write(&file, text).expect("write league file");
    Command::new(hus_bin())
        .arg("league")
        .arg(&file)
        .arg("--dir")
        .arg(tmp.join("league"))
        .arg("--quiet")
        .envs(if sandbox { sandbox_env() } else { Vec::new() })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hus league starts")
}

#[test]
fn a_league_killed_with_sigkill_leaves_no_bot() {
    let tmp = LogDir::new().cut_ok();
    let marker = tag("kill-league");
    kill_and_check(spawn_league(tmp.path(), &marker, false), &marker, 2);
}

#[test]
fn a_sandboxed_league_killed_with_sigkill_leaves_no_bot() {
    let tmp = LogDir::new().cut_ok();
    let marker = tag("kill-league-sandbox");
    kill_and_check(spawn_league(tmp.path(), &marker, true), &marker, 2);
}

/// The `shutdown` record of bot A.
fn shutdown_of_a(records: &[Value]) -> Value {
    of_type(records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 0)
        .expect("bot A's shutdown")
        .clone()
}

#[test]
fn a_child_that_left_the_session_and_the_pipes_is_reported_and_ended() {
    let marker = tag("detach");
    let bot = format!("{} --tag {marker}", misbehave("detach"));
    let p = play(&bot, &hus_random(1), &["--games", "1", "--seed", "1"]);
    // The set is played to its end: the child broke no rule of the game.
    assert_eq!(of_type(&p.records, "fault").len(), 0);
    let a = shutdown_of_a(&p.records);
    assert_eq!(a["stopped_by"], "itself", "{a}");
    assert_eq!(a["leaked"], true, "{a}");
    let strays = a["strays"].as_array().expect("strays");
    assert_eq!(strays.len(), 1, "{a}");
    let pid = strays[0]["pid"].as_i64().expect("pid");
    assert_eq!(strays[0]["left_group"], true);
    let command = strays[0]["command"].as_str().expect("command");
    assert!(
        command.ends_with(&format!(" -c import time; time.sleep(30) {marker}")),
        "{command}"
    );
    assert_eq!(a["escaped"], json!([pid]));
    // Bot B (the random mover) left nothing.
    let b = of_type(&p.records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 1)
        .expect("bot B's shutdown")
        .clone();
    assert_eq!(b["strays"], json!([]));
    // Ended with the set (the child would have slept 30 s), and not left a zombie.
    assert_eq!(survivors(&marker), Vec::<u32>::new(), "survivors");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} is still there"
    );
}

#[test]
fn the_console_says_what_was_left_running() {
    let marker = tag("detach-console");
    let bot = format!("{} --tag {marker}", misbehave("detach"));
    let dir = LogDir::new();
    let log_dir = dir.path().to_str().expect("utf-8").to_string();
    let out = hus(&[
        "match",
        &bot,
        &hus_random(1),
        "--games",
        "1",
        "--seed",
        "1",
        "--log-dir",
        &log_dir,
        "--move-time",
        "10s",
        "--ready-time",
        "30s",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("a process it started"))
        .collect();
    assert_eq!(said.len(), 1, "{stdout}");
    let (before, after) = said[0]
        .split_once(" -c import time; time.sleep(30) ")
        .expect("command");
    assert!(
        before.starts_with("  A (misbehave-detach): a process it started (pid "),
        "{}",
        said[0]
    );
    assert_eq!(
        after,
        format!(
            "{marker}`, which had left its process group) was still running after it exited; hus ended it"
        )
    );
    assert_eq!(survivors(&marker), Vec::<u32>::new(), "survivors");
}

#[test]
fn check_bot_fails_a_bot_that_leaves_a_process_behind() {
    let marker = tag("detach-check");
    let bot = format!("{} --tag {marker}", misbehave("detach"));
    let out = hus(&["check-bot", &bot, "--seed", "7"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // Once in the first probe, once in the games (the bot is never restarted).
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("problem  leaves no processes behind: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(
        lines[at],
        "problem  leaves no processes behind: 2 processes it started outlived it"
    );
    for detail in &lines[at + 1..at + 3] {
        assert!(
            detail.starts_with("         a process it started (pid ")
                && detail.ends_with(&format!(
                    " -c import time; time.sleep(30) {marker}`, which had left its process group) was still running after it exited; hus ended it"
                )),
            "{detail}"
        );
    }
    assert!(!stdout.contains("ok       leaves no processes behind"));
    assert_eq!(survivors(&marker), Vec::<u32>::new(), "survivors");
}

/// The second-precise stems `hus match` may give its log in the next seconds, for the
/// seed and names of [`symlink_match`]'s bots.
fn coming_stems() -> Vec<String> {
    let start = time_now();
    (0..20)
        .map(|s| format!("{}-9-hus-vs-hus", stamp(start + s)))
        .collect()
}

fn time_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `YYYYMMDD-HHMMSS` (UTC) of a Unix time.
fn stamp(t: i64) -> String {
    let out = Command::new("date")
        .args(["-u", "-d", &format!("@{t}"), "+%Y%m%d-%H%M%S"])
        .output()
        .expect("date runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `hus match` of two random movers, seed 9, logging in `dir`.
fn symlink_match(dir: &Path) -> std::process::Output {
    hus(&[
        "match",
        &hus_random(1),
        &hus_random(2),
        "--games",
        "1",
        "--seed",
        "9",
        "--log-dir",
        dir.to_str().expect("utf-8"),
    ])
}

#[test]
fn hus_match_never_writes_through_a_link_in_its_log_directory() {
    let tmp = LogDir::new();
    let logs = tmp.path().join("logs");
    std::fs::create_dir(&logs).expect("mkdir");
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    let existing = outside.join("existing");
    std::fs::write(&existing, "kept").expect("write");
    // A dangling link where the log goes, and a link to an existing file where bot A's
    // stderr goes, for every second the command may start in.
    let stems = coming_stems();
    for stem in &stems {
        std::os::unix::fs::symlink(
            outside.join(format!("{stem}.created")),
            logs.join(format!("{stem}.jsonl")),
        )
        .expect("symlink");
    }
    let out = symlink_match(&logs);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            ".jsonl is a symbolic link: hus never follows a link where it writes files (remove it)"
        ),
        "{stderr}"
    );
    // The log's links replaced by the stderr files' links.
    for stem in &stems {
        std::fs::remove_file(logs.join(format!("{stem}.jsonl"))).expect("remove");
        std::os::unix::fs::symlink(&existing, logs.join(format!("{stem}.a.stderr")))
            .expect("symlink");
    }
    let out = symlink_match(&logs);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(".a.stderr is a symbolic link: hus never follows a link where it writes files (remove it)"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&existing).expect("read"), "kept");
    let created: Vec<PathBuf> = std::fs::read_dir(&outside)
        .expect("read dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(created, [existing]);
}

/// A league of the two built-in random movers, one set of one game, in `tmp/league`.
fn random_league(tmp: &Path) -> (PathBuf, PathBuf) {
    let text = format!(
        "games = 1\nseed = 4\n\n[[bot]]\nname = \"a\"\ncommand = {:?}\n\n[[bot]]\nname = \"b\"\ncommand = {:?}\n",
        hus_random(1),
        hus_random(2)
    );
    let file = tmp.join("L.toml");
    std::fs::write(&file, text).expect("write league file");
    (file, tmp.join("league"))
}

fn run_league(file: &Path, dir: &Path) -> std::process::Output {
    Command::new(hus_bin())
        .arg("league")
        .arg(file)
        .arg("--dir")
        .arg(dir)
        .arg("--quiet")
        .output()
        .expect("hus league runs")
}

fn sets_done(dir: &Path) -> u64 {
    let out = hus(&[
        "standings",
        dir.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    v["progress"]["sets_done"].as_u64().expect("sets_done")
}

#[test]
fn hus_league_never_writes_through_a_link_and_resumes_once_it_is_gone() {
    let tmp = LogDir::new();
    let (file, dir) = random_league(tmp.path());
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).expect("mkdir");
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    let existing = outside.join("existing");
    std::fs::write(&existing, "kept").expect("write");
    let dangling = logs.join("r1-a-vs-b.b.stderr");
    let pointing = logs.join("r1-a-vs-b.jsonl");
    std::os::unix::fs::symlink(outside.join("created"), &dangling).expect("symlink");
    std::os::unix::fs::symlink(&existing, &pointing).expect("symlink");

    let out = run_league(&file, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is a symbolic link: hus never follows a link where it writes files (remove it)",
            pointing.display()
        )),
        "{stderr}"
    );
    std::fs::remove_file(&pointing).expect("remove");
    let out = run_league(&file, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{} is a symbolic link", dangling.display())),
        "{stderr}"
    );
    // Nothing outside was made or changed, and nothing was counted.
    assert!(!outside.join("created").exists());
    assert_eq!(std::fs::read_to_string(&existing).expect("read"), "kept");
    assert_eq!(sets_done(&dir), 0);

    // Once the link is gone, the league resumes and plays its set.
    std::fs::remove_file(&dangling).expect("remove");
    let out = run_league(&file, &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sets_done(&dir), 1);
    assert!(logs.join("r1-a-vs-b.jsonl.zst").is_file());
}

#[test]
fn hus_league_refuses_a_linked_logs_directory_and_store() {
    let tmp = LogDir::new();
    let (file, dir) = random_league(tmp.path());
    std::fs::create_dir_all(&dir).expect("mkdir");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, dir.join("logs")).expect("symlink");
    let out = run_league(&file, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is a symbolic link",
            dir.join("logs").display()
        )),
        "{stderr}"
    );
    std::fs::remove_file(dir.join("logs")).expect("remove");
    std::os::unix::fs::symlink(elsewhere.join("store"), dir.join("league.sqlite"))
        .expect("symlink");
    let out = run_league(&file, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is a symbolic link",
            dir.join("league.sqlite").display()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).expect("read").count(), 0);
    // A league directory that is itself a link, named on the command line, is fine.
    std::fs::remove_file(dir.join("league.sqlite")).expect("remove");
    let linked = tmp.path().join("linked");
    std::os::unix::fs::symlink(&dir, &linked).expect("symlink");
    let out = run_league(&file, &linked);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sets_done(&dir), 1);
}
