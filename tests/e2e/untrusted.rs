//! Untrusted bots: every way a bot can misbehave is a precise fault, the set goes on, the
//! referee's memory stays bounded, and no process started for a set outlives it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// A unique marker for a test's bot processes, to look for survivors in /proc.
pub fn tag(name: &str) -> String {
    format!("hus-test-{name}-{}", std::process::id())
}

/// The pids of live processes whose command line contains `marker`.
pub fn alive_with(marker: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        if String::from_utf8_lossy(&cmdline).contains(marker) && !zombie {
            pids.push(pid);
        }
    }
    pids
}

/// One game, A misbehaving with `mode` (tagged), B a random bot; returns A's faults.
fn one_game(mode: &str, marker: &str, extra: &[&str]) -> (Vec<serde_json::Value>, Played) {
    let bot = format!("{} --tag {marker}", misbehave(mode));
    let mut args = vec![
        "--games",
        "1",
        "--seed",
        "1",
        "--move-time",
        "400ms",
        "--ready-time",
        "3s",
    ];
    args.extend_from_slice(extra);
    let p = play(&bot, &random_bot(), &args);
    let faults = of_type(&p.records, "fault")
        .into_iter()
        .filter(|f| f["bot"] == 0)
        .cloned()
        .collect();
    (faults, p)
}

fn kinds(faults: &[serde_json::Value]) -> Vec<String> {
    faults
        .iter()
        .map(|f| f["kind"].as_str().unwrap_or("?").to_string())
        .collect()
}

fn rss_kib(p: &Played) -> u64 {
    p.summary["referee_max_rss_kib"].as_u64().expect("rss")
}

#[test]
fn answers_hello_after_the_allowance() {
    let (f, _) = one_game("late-hello 3.0", &tag("late"), &["--ready-time", "1500ms"]);
    assert_eq!(kinds(&f), ["start-up"]);
}

#[test]
fn answers_just_before_and_just_after_the_deadline() {
    let (f, p) = one_game("answer-at 0.9", &tag("before"), &["--move-time", "1s"]);
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(p.summary["bots"][0]["faults"], 0);
    let (f, _) = one_game("answer-at 1.1", &tag("after"), &["--move-time", "1s"]);
    assert_eq!(kinds(&f), ["time-out"]);
}

#[test]
fn keeps_stdout_open_without_a_newline() {
    let (f, _) = one_game("no-newline", &tag("nonl"), &[]);
    assert_eq!(kinds(&f), ["time-out"]);
}

#[test]
fn nul_byte_and_early_and_double_moves() {
    let (f, _) = one_game("nul-byte", &tag("nul"), &[]);
    assert_eq!(kinds(&f), ["malformed"]);
    assert!(
        f[0]["line"].as_str().is_some_and(|l| l.contains("\\x00")),
        "{}",
        f[0]
    );
    let (f, _) = one_game("early-move", &tag("early"), &[]);
    // Its early move may cross its first turn on the wire and be taken as the answer;
    // its real answer is then one line too many. Found before its next turn, that line
    // is unsolicited; crossing the next turn too (a slow bot on a loaded machine), it is
    // taken as the answer there, and its pit, played already, is empty: illegal. Either
    // way one fault, never a hang.
    let early = kinds(&f);
    assert!(
        early == ["unsolicited-message"] || early == ["illegal-move"],
        "{early:?}"
    );
    // The second move of its first turn is found when its next turn comes, or, if it
    // crosses that turn on the wire, taken as its answer (the same race as above).
    let (f, _) = one_game("two-moves", &tag("two"), &[]);
    let twice = kinds(&f);
    assert!(
        twice == ["unsolicited-message"] || twice == ["illegal-move"],
        "{twice:?}"
    );
}

#[test]
fn printing_after_bye_is_ignored() {
    let (f, p) = one_game("after-bye", &tag("bye"), &[]);
    assert!(f.is_empty(), "{f:?}");
    let s = of_type(&p.records, "shutdown");
    assert!(s.iter().all(|s| s["stopped_by"] == "itself"), "{s:?}");
}

#[test]
fn a_100_megabyte_line_is_cut_at_the_limit_and_memory_stays_bounded() {
    let (f, p) = one_game("huge-line 100", &tag("huge"), &["--move-time", "5s"]);
    assert_eq!(kinds(&f), ["oversized-line"]);
    assert_eq!(f[0]["detail"], "sent a line longer than 65536 bytes");
    assert!(rss_kib(&p) < 64 * 1024, "referee used {} KiB", rss_kib(&p));
}

#[test]
fn an_endless_flood_on_stdout_is_a_fault_and_memory_stays_bounded() {
    // Its first line is a move (pit 4, legal or not); the flood that follows is
    // unsolicited, or the move itself is illegal: either way a fault, never a hang.
    let (f, p) = one_game("flood-stdout", &tag("flood"), &["--rules", "mancala-world"]);
    assert_eq!(f.len(), 1, "{f:?}");
    let kind = f[0]["kind"].as_str().unwrap_or("");
    assert!(
        ["unsolicited-message", "illegal-move"].contains(&kind),
        "{kind}"
    );
    assert!(rss_kib(&p) < 64 * 1024, "referee used {} KiB", rss_kib(&p));
}

#[test]
fn an_endless_flood_on_stderr_is_capped() {
    let (f, p) = one_game("flood-stderr 2", &tag("stderr"), &["--move-time", "5s"]);
    assert!(f.is_empty(), "{f:?}");
    let a = of_type(&p.records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 0)
        .expect("bot 0 shutdown")
        .clone();
    assert_eq!(a["stderr_cut"], true);
    assert!(
        a["stderr_bytes"]
            .as_u64()
            .is_some_and(|n| n > 2 * 1024 * 1024),
        "{a}"
    );
    let stderr_file = p
        .log
        .with_file_name(p.records[0]["bots"][0]["stderr"].as_str().expect("name"));
    let kept = std::fs::metadata(&stderr_file).expect("stderr file").len();
    assert!(kept < 1024 * 1024 + 1024, "stderr file has {kept} bytes");
    let text = std::fs::read_to_string(&stderr_file).expect("read");
    assert!(
        text.contains("[hus: stderr cut here after 1048576 bytes"),
        "no cut note"
    );
    assert!(rss_kib(&p) < 64 * 1024);
}

#[test]
fn ignoring_sigterm_and_not_exiting_after_bye() {
    let (f, p) = one_game("no-exit-after-bye", &tag("stay"), &[]);
    assert!(f.is_empty());
    let a = of_type(&p.records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 0)
        .expect("shutdown")
        .clone();
    assert_eq!(a["stopped_by"], "sigterm");
    let marker = tag("deaf");
    let (_, p) = one_game("ignore-sigterm", &marker, &[]);
    let a = of_type(&p.records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 0)
        .expect("shutdown")
        .clone();
    assert_eq!(a["stopped_by"], "sigkill");
    assert_eq!(a["status"], "killed by signal 9 (SIGKILL)");
    assert!(alive_with(&marker).is_empty());
}

#[test]
fn a_child_that_keeps_the_pipes_open_is_killed_with_the_group() {
    let marker = tag("fork");
    let (f, p) = one_game("fork-child", &marker, &[]);
    assert_eq!(kinds(&f), ["crash"]);
    assert!(
        f[0]["detail"].as_str().is_some_and(|d| d
            .contains("exited (exit status 0) while a process it started kept its stdout open")),
        "{}",
        f[0]
    );
    // The fault came soon after the exit, not at the deadline.
    assert!(f[0]["ms"].as_f64().is_some_and(|ms| ms < 390.0), "{}", f[0]);
    let a = of_type(&p.records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 0)
        .expect("shutdown")
        .clone();
    assert_eq!(a["escaped"], serde_json::json!([]));
    assert!(
        alive_with(&marker).is_empty(),
        "survivors: {:?}",
        alive_with(&marker)
    );
}

#[test]
fn a_grandchild_that_left_the_group_is_found_through_the_pipes_and_killed() {
    let marker = tag("setsid");
    let (f, p) = one_game("escape-group", &marker, &[]);
    assert_eq!(kinds(&f), ["crash"]);
    let a = of_type(&p.records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 0)
        .expect("shutdown")
        .clone();
    assert_eq!(a["leaked"], true);
    assert_eq!(a["escaped"].as_array().map(|e| e.len()), Some(1), "{a}");
    assert!(
        alive_with(&marker).is_empty(),
        "survivors: {:?}",
        alive_with(&marker)
    );
}

#[test]
fn memory_and_cpu_limits_bind_the_bot() {
    let (f, _) = one_game("memory 400", &tag("mem"), &["--bot-memory", "200M"]);
    assert_eq!(kinds(&f), ["crash"]);
    assert!(
        f[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("exit status 1")),
        "{}",
        f[0]
    );
    let (f, _) = one_game(
        "cpu",
        &tag("cpu"),
        &["--bot-cpu", "1s", "--move-time", "10s"],
    );
    assert_eq!(kinds(&f), ["crash"]);
    assert!(
        f[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("SIGXCPU") || d.contains("SIGKILL")),
        "{}",
        f[0]
    );
    assert!(
        f[0]["ms"].as_f64().is_some_and(|ms| ms < 5000.0),
        "{}",
        f[0]
    );
}

#[test]
fn a_clean_environment_and_a_working_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("env_bot.py");
    std::fs::write(
        &script,
        "import os, sys, json\n\
         sys.stderr.write('cwd=%s secret=%s path=%s\\n' % (os.getcwd(), os.environ.get('HUS_SECRET'), 'PATH' in os.environ))\n\
         for raw in sys.stdin:\n\
         \x20   m = json.loads(raw)\n\
         \x20   if m['type'] == 'hello': print(json.dumps({'type': 'ready'}), flush=True)\n\
         \x20   elif m['type'] == 'turn': print(json.dumps({'type': 'move', 'pit': m['legal'][0]}), flush=True)\n\
         \x20   elif m['type'] == 'bye': break\n",
    )
    .expect("write");
    let python = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v python3"])
            .output()
            .expect("sh")
            .stdout,
    )
    .expect("utf-8")
    .trim()
    .to_string();
    let bot = format!("{python} {}", script.display());
    let bot_dir = dir.path().to_str().expect("utf-8");
    let log_dir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "match",
            &bot,
            &random_bot(),
            "--games",
            "1",
            "--quiet",
            "--bot-clean-env",
            "--bot-env",
            "PATH",
            "--bot-dir",
            bot_dir,
        ])
        .arg("--log-dir")
        .arg(log_dir.path())
        .env("HUS_SECRET", "hunter2")
        .output()
        .expect("hus runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr_file = file_ending(log_dir.path(), ".a.stderr");
    let text = std::fs::read_to_string(stderr_file).expect("read");
    let cwd = std::fs::canonicalize(dir.path()).expect("canonical");
    assert_eq!(
        text.trim(),
        format!("cwd={} secret=None path=True", cwd.display())
    );
}

/// Ctrl-C or SIGTERM to `hus`: the bots are stopped, the log ends with `aborted`, exit 130.
#[test]
fn stopping_the_referee_stops_the_bots_and_keeps_the_log() {
    for signal in ["INT", "TERM"] {
        let marker = tag(&format!("stop{signal}"));
        let dir = tempfile::tempdir().expect("temp dir");
        let bot = format!("{} --tag {marker}", misbehave("never-answer"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
            .args([
                "match",
                &bot,
                &bot,
                "--move-time",
                "60s",
                "--quiet",
                "--log-dir",
            ])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hus starts");
        std::thread::sleep(Duration::from_millis(1500));
        let bots = alive_with(&marker)
            .into_iter()
            .filter(|&p| p != child.id())
            .count();
        assert_eq!(bots, 2, "both bots run");
        let sent = Instant::now();
        Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        let status = child.wait().expect("hus exits");
        assert!(
            sent.elapsed() < Duration::from_secs(3),
            "hus took {:?} to stop",
            sent.elapsed()
        );
        assert_eq!(status.code(), Some(130));
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            alive_with(&marker).is_empty(),
            "survivors: {:?}",
            alive_with(&marker)
        );
        let records = read_log(&file_ending(dir.path(), ".jsonl"));
        let last = records.last().expect("records");
        assert_eq!(last["type"], "aborted");
        assert_eq!(last["reason"], format!("stopped by SIG{signal}"));
    }
}

/// A bot that keeps writing (blank lines, or bytes without a newline) is still timed out
/// at its deadline: what it writes never holds the referee up.
#[test]
fn writing_without_answering_still_times_out() {
    for mode in ["blank-flood", "slow-garbage"] {
        let (f, p) = one_game(mode, &tag(mode), &[]);
        assert_eq!(kinds(&f), ["time-out"], "{mode}");
        let ms = f[0]["ms"].as_f64().expect("ms");
        // 400 ms allowed; the time-out comes right after (timing.py measures how soon).
        assert!(
            (400.0..500.0).contains(&ms),
            "{mode}: declared after {ms} ms"
        );
        assert!(rss_kib(&p) < 64 * 1024);
    }
}
