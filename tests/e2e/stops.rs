//! Sets stopped at every stage (issue 22): `hus match` stopped by SIGTERM before the
//! first `ready`, between games and mid-game, and a league stopped while a set's bots
//! start. Each log starts with its header and replays with the status LOGS.md and
//! README give it, and the console says exactly what the log holds. And the suite's
//! log check itself can fail.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Waits until `dir` holds a log (`*.jsonl`, searched recursively) one of whose lines
/// satisfies `ready`, and returns its path. The log is written line by line and
/// flushed: what is read is what the referee has done.
fn wait_for_log(child: &mut Child, dir: &Path, ready: impl Fn(&str) -> bool) -> PathBuf {
    // Bounds only a broken referee: the moment itself is read from the log.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the referee ended before it was stopped: {status:?}");
        }
        let mut dirs = vec![dir.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let path = e.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    // Only whole lines: the last one may be being written.
                    if text
                        .split_inclusive('\n')
                        .any(|l| l.ends_with('\n') && ready(l))
                    {
                        return path;
                    }
                }
            }
        }
        assert!(Instant::now() < deadline, "no such log line came");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `hus match A B --log-dir DIR` with allowances no test reaches, its stderr piped.
fn spawn_match(a: &str, b: &str, dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["match", a, b, "--games", "4", "--seed", "5", "--log-dir"])
        .arg(dir)
        .args(["--move-time", "600s", "--ready-time", "600s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus match starts")
}

/// Stops the set with SIGTERM, then checks the exit status 130, the console's last line
/// (`hus: stopped by SIGTERM; ` and `words` with the log's path for `LOG`), that the
/// log ends with `aborted`, and `hus replay`'s status 0 and its last line, `replay_says`
/// of the log's records.
fn stop_and_check(
    child: Child,
    log: &Path,
    words: &str,
    replay_says: impl Fn(&[serde_json::Value]) -> String,
) -> Vec<serde_json::Value> {
    sigterm(&child);
    let out = child.wait_with_output().expect("reaped");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let words = words.replace("LOG", &log.display().to_string());
    assert_eq!(stderr, format!("hus: stopped by SIGTERM; {words}\n"));
    let records = read_log(log);
    assert_eq!(records[0]["type"], "header", "{records:?}");
    let last = records.last().expect("records");
    assert_eq!(
        (&last["type"], &last["reason"]),
        (&"aborted".into(), &"stopped by SIGTERM".into())
    );
    let replay = hus(&["replay", log.to_str().expect("utf-8")]);
    let stdout = String::from_utf8_lossy(&replay.stdout).to_string();
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    assert_eq!(
        stdout.lines().last(),
        Some(replay_says(&records).as_str()),
        "{stdout}"
    );
    records
}

#[test]
fn a_match_stopped_before_the_first_ready_leaves_its_header_and_aborted() {
    let dir = LogDir::new();
    // Bot A never answers hello: the set waits for its ready (600 s) when stopped.
    let mut child = spawn_match(&misbehave("no-hello"), &hus_random(1), dir.path());
    let log = wait_for_log(&mut child, dir.path(), |l| l.contains(r#""type":"header""#));
    let records = stop_and_check(
        child,
        &log,
        "no game was played; the log LOG holds its header only",
        |_| "verified: 0 games, 0 moves; the set was aborted (stopped by SIGTERM)".into(),
    );
    let kinds: Vec<_> = records.iter().map(|r| r["type"].clone()).collect();
    assert_eq!(kinds, ["header", "aborted"]);
    // The header is written before the bots start: no names in it.
    assert_eq!(records[0]["bots"][0]["name"], serde_json::Value::Null);
    assert_eq!(records[0]["bots"][1]["name"], serde_json::Value::Null);
}

#[test]
fn a_match_stopped_between_games_keeps_the_games_played() {
    let dir = LogDir::new();
    // Bot A's first process exits at its first turn (a crash that ends game 1); the
    // process started again for game 2 never answers hello: the set is then between
    // games, waiting for its ready.
    let flag = dir.path().join("started-once");
    let a = format!(
        "sh -c 'if [ -e {flag} ]; then exec sleep 3600; else : > {flag}; exec {}; fi'",
        misbehave("exit"),
        flag = flag.display()
    );
    let mut child = spawn_match(&a, &hus_random(1), dir.path());
    let log = wait_for_log(&mut child, dir.path(), |l| {
        l.contains(r#""type":"restart""#) && l.contains(r#""game":2"#)
    });
    let records = stop_and_check(
        child,
        &log,
        "the games played so far are in LOG",
        |records| {
            format!(
                "verified: 1 game, {} moves; the set was aborted (stopped by SIGTERM)",
                of_type(records, "move").len()
            )
        },
    );
    assert_eq!(of_type(&records, "game-end").len(), 1);
    assert_eq!(of_type(&records, "game-start").len(), 1);
    let n = records.len();
    assert_eq!(records[n - 2]["type"], "restart", "{records:?}");
    // The bots' names, absent from the header, are in their ready records.
    let ready = of_type(&records, "ready");
    assert_eq!(ready[0]["name"], "misbehave-exit");
    assert_eq!(ready[1]["name"], "hus-random");
}

#[test]
fn a_match_stopped_mid_game_keeps_the_moves_so_far() {
    let dir = LogDir::new();
    // Bot A plays its first move and never its second: game 1 waits for it (600 s).
    let a = format!("{} --on 2", misbehave("never-answer"));
    let mut child = spawn_match(&a, &hus_random(1), dir.path());
    let log = wait_for_log(&mut child, dir.path(), |l| {
        l.contains(r#""type":"move""#) && l.contains(r#""bot":0"#)
    });
    let records = stop_and_check(
        child,
        &log,
        "no game was finished; the log LOG holds the first game up to the stop",
        |records| {
            // One move when the stop comes before B's answer to A's first, else two.
            let moves = of_type(records, "move").len();
            let counted = if moves == 1 {
                "1 move".to_string()
            } else {
                format!("{moves} moves")
            };
            format!(
                "verified: 0 games, {counted}; game 1 has no game-end ({moves} of its moves \
                 verified); the set was aborted (stopped by SIGTERM)"
            )
        },
    );
    // A's first move is in, and its second never came.
    assert_eq!(
        of_type(&records, "move")
            .iter()
            .filter(|m| m["bot"] == 0)
            .count(),
        1
    );
    assert_eq!(of_type(&records, "game-end").len(), 0);
}

#[test]
fn a_league_stopped_while_a_sets_bots_start_keeps_a_partial_log_that_replays() {
    let tmp = LogDir::new();
    let file = tmp.path().join("L.toml");
    std::fs::write(
        &file,
        format!(
            "games = 2\nmove_time = \"600s\"\nready_time = \"600s\"\nseed = 3\nconcurrency = 1\n\n\
             [[bot]]\nname = \"mute\"\ncommand = \"{}\"\n\n[[bot]]\nname = \"rnd\"\ncommand = \"{}\"\n",
            misbehave("no-hello"),
            hus_random(2).replace('\'', "")
        ),
    )
    .expect("league file");
    let dir = tmp.path().join("league");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["league", file.to_str().expect("utf-8"), "--dir"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus league starts");
    let log = wait_for_log(&mut child, &dir, |l| l.contains(r#""type":"header""#));
    sigterm(&child);
    let out = child.wait_with_output().expect("reaped");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let partial = PathBuf::from(log.to_string_lossy().replace(".jsonl", ".partial-1.jsonl"));
    assert!(
        stderr.contains(&format!(
            "was stopped; its partial log is kept as {}\n",
            partial.display()
        )),
        "{stderr}"
    );
    let kinds: Vec<_> = read_log(&partial)
        .iter()
        .map(|r| r["type"].clone())
        .collect();
    assert_eq!(kinds, ["header", "aborted"]);
    let replay = hus(&["replay", partial.to_str().expect("utf-8")]);
    assert_eq!(replay.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&replay.stdout).lines().last(),
        Some("verified: 0 games, 0 moves; the set was aborted (stopped by SIGTERM)")
    );
}

#[test]
fn the_log_check_fails_on_a_record_the_verifier_does_not_know_and_on_a_corrupt_log() {
    let played = play(&hus_random(1), &hus_random(2), &["--games", "2"]);
    let dir = played._dir.path();
    assert_eq!(replay_all(dir, &[0]), Ok(1));
    let text = std::fs::read_to_string(&played.log).expect("log");
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    // A record of a kind the verifier does not know, before set-end: replay warns.
    let mut odd = lines[..n - 1].to_vec();
    odd.push(r#"{"type":"surprise","bot":0}"#);
    odd.push(lines[n - 1]);
    let odd_log = dir.join("odd.jsonl");
    std::fs::write(&odd_log, odd.join("\n") + "\n").expect("write");
    let err = replay_all(dir, &[0, 3]).expect_err("a warning fails the check");
    assert!(
        err.starts_with(&format!("hus replay {}: exit status 0", odd_log.display())),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "warning: line {n}: unknown record type \"surprise\", skipped"
        )),
        "{err}"
    );
    std::fs::remove_file(&odd_log).expect("remove");
    // A shutdown with a stopped_by the referee never writes: corrupt, exit status 1.
    let bad = text.replacen(r#""stopped_by":"itself""#, r#""stopped_by":"gone""#, 1);
    let bad_log = dir.join("bad.jsonl");
    std::fs::write(&bad_log, bad).expect("write");
    let err = replay_all(dir, &[0, 3]).expect_err("a corrupt log fails the check");
    assert!(
        err.starts_with(&format!("hus replay {}: exit status 1", bad_log.display())),
        "{err}"
    );
    assert!(
        err.contains("a shutdown record not as LOGS.md describes it: unknown variant `gone`"),
        "{err}"
    );
    std::fs::remove_file(&bad_log).expect("remove");
}

/// Every directory an end-to-end test writes in is a [`LogDir`], so that no log escapes
/// the check: a plain temporary directory must say, just above it, that it holds no
/// logs (`not logs`) or only logs broken on purpose.
#[test]
fn every_e2e_test_writes_in_a_log_dir() {
    let needles = [
        concat!("tempfile", "::tempdir"),
        concat!("tempfile", "::TempDir"),
    ];
    let dir = root().join("tests/e2e");
    let mut plain = Vec::new();
    for e in std::fs::read_dir(&dir).expect("tests/e2e").flatten() {
        let path = e.path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        if !name.ends_with(".rs") || name == "common.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if needles.iter().any(|n| line.contains(n)) {
                let above = lines[i.saturating_sub(2)..i].join("\n").to_lowercase();
                if !(above.contains("not logs") || above.contains("broken on purpose")) {
                    plain.push(format!("{name}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(plain.is_empty(), "use LogDir: {plain:#?}");
}

/// `hus rate` stopped mid-set: the set in play ends its log with `aborted`, as
/// `hus match` does, and the message says what the log holds.
#[test]
fn hus_rate_stopped_mid_set_ends_its_log_with_aborted() {
    let dir = LogDir::new();
    // The rated bot answers hello, then never moves: the set waits for its move when
    // stopped.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "rate",
            &misbehave("never-answer"),
            "--only",
            "random",
            "--seed",
            "1",
        ])
        .arg("--log-dir")
        .arg(dir.path())
        .args(["--move-time", "600s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus rate starts");
    let log = wait_for_log(&mut child, dir.path(), |l| {
        l.contains(r#""type":"game-start""#)
    });
    sigterm(&child);
    let out = child.wait_with_output().expect("reaped");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "hus rate: stopped by SIGTERM in set 1; no game was finished; the log {} holds the first game up to the stop\n",
            log.display()
        )
    );
    let records = read_log(&log);
    let kinds: Vec<_> = records.iter().map(|r| r["type"].clone()).collect();
    assert_eq!(kinds.first(), Some(&"header".into()), "{kinds:?}");
    let last = records.last().expect("records");
    assert_eq!(
        (&last["type"], &last["reason"]),
        (&"aborted".into(), &"stopped by SIGTERM".into())
    );
    // The LogDir's drop replays it: status 0, a set stopped part-way.
}
