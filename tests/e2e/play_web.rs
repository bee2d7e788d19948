//! `hus play --web`: a person plays the random mover (two games) in headless Chromium by clicking
//! the board's pits (`play_browser.js` drives it over the DevTools pipe), the refused
//! requests say what is wrong and change nothing, the page's result is the log's, and
//! `hus replay` verifies the log.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

#[test]
fn play_web_a_whole_game_by_clicks_in_chromium_logged_like_a_match() {
    if !crate::replay::browser() {
        return;
    }
    let tmp = LogDir::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "play",
            "--web",
            &hus_random(7),
            "--seed",
            "11",
            "--games",
            "2",
        ])
        .arg("--log-dir")
        .arg(tmp.path())
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus play starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("open http://").nth(1) {
                let _ = tx.send(rest.split('/').next().unwrap_or_default().to_string());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let Ok(addr) = rx.recv_timeout(Duration::from_secs(120)) else {
        let _ = child.kill();
        let out = child.wait_with_output().expect("output");
        panic!(
            "hus play --web never said where it listens: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };

    let out = Command::new("node")
        .arg(root().join("tests/e2e/play_browser.js"))
        .arg(format!("http://{addr}/"))
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        // What hus play said, beside what the page showed: a stall names its side.
        let _ = child.kill();
        let said = child
            .wait_with_output()
            .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .unwrap_or_default();
        panic!(
            "{report}\n{}\nhus play's stderr:\n{said}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let r: Value = serde_json::from_str(report.trim()).unwrap_or_else(|e| panic!("{e}: {report}"));

    // When the set is over hus play exits by itself (the page was sent the result).
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("hus play --web did not exit after the set: {r}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said = reader.join().expect("stdout reader");
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    assert!(status.success(), "{status}: {said}\n{stderr}");

    // What the server refused, and why; the game was not touched.
    let refused = &r["refused"];
    let answer = |what: &str| -> (u64, String) {
        let a = &refused[what];
        let body: Value = serde_json::from_str(a["body"].as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{what}: {e}: {a}"));
        (
            a["status"].as_u64().unwrap_or_default(),
            body["error"].as_str().unwrap_or_default().to_string(),
        )
    };
    let (status, why) = answer("garbage");
    assert_eq!(status, 400, "{why}");
    assert!(why.starts_with("the move must be JSON"), "{why}");
    let (status, why) = answer("illegal");
    assert_eq!(status, 422, "{why}");
    assert!(
        why.contains("is not a legal move: the legal pits are"),
        "{why}"
    );
    let (status, why) = answer("stale");
    assert_eq!(status, 409, "{why}");
    assert!(why.contains("but the referee waits on game 1 ply"), "{why}");
    let (status, why) = answer("text_plain");
    assert_eq!(
        (status, why.as_str()),
        (415, "send the move as Content-Type: application/json")
    );
    let (status, why) = answer("oversized");
    assert_eq!(status, 413, "{why}");
    assert!(why.contains("at most 1024 bytes"), "{why}");
    let (status, why) = answer("other_tab");
    assert_eq!(status, 409, "{why}");
    assert!(why.starts_with("this game is open in another tab"), "{why}");
    assert!(
        refused["click"]
            .as_str()
            .is_some_and(|t| t.contains("is not a legal move")),
        "{r}"
    );
    assert!(
        refused["second_tab"]
            .as_str()
            .is_some_and(|t| t.contains("already open in another tab")),
        "{r}"
    );
    assert_eq!(refused["unchanged"], true, "{r}");

    // The log: a complete set, the person's moves are the clicks, and it verifies.
    let log = file_ending(tmp.path(), ".jsonl");
    let records = read_log(&log);
    verify_log(&records);
    let header = &records[0];
    let person = (0..2)
        .find(|&b| header["bots"][b]["command"] == "person")
        .unwrap_or_else(|| panic!("no person in {header}"));
    assert_eq!(of_type(&records, "game-end").len(), 2);
    let peers: Vec<_> = of_type(&records, "ready")
        .into_iter()
        .filter(|r| r["bot"] == person)
        .map(|r| r["peer"].clone())
        .collect();
    assert_eq!(peers, [Value::from("browser")]);
    let moves = of_type(&records, "move");
    let mine = moves.iter().filter(|m| m["bot"] == person).count() as u64;
    assert_eq!(r["clicks"].as_u64(), Some(mine), "{r}");
    // The page lists the moves of the game on the board: the last one.
    let last_game: Vec<_> = moves.iter().filter(|m| m["game"] == 2).collect();
    let mine_last = last_game.iter().filter(|m| m["bot"] == person).count() as u64;
    assert_eq!(
        r["end"]["moves"].as_u64(),
        Some(last_game.len() as u64),
        "{r}"
    );
    assert_eq!(r["end"]["you"].as_u64(), Some(mine_last), "{r}");
    assert_eq!(r["end"]["games"].as_u64(), Some(2), "{r}");
    assert_eq!(r["end"]["check"], "ok", "{r}");
    assert_eq!(r["end"]["check_error_hidden"], true, "{r}");
    let end = of_type(&records, "set-end")[0];
    let outcome = match end["winner"].as_u64() {
        Some(w) if w as usize == person => "win",
        Some(_) => "loss",
        None => "draw",
    };
    let points = format!(
        "{}-{}",
        end["points"][person].as_u64().expect("points"),
        end["points"][1 - person].as_u64().expect("points")
    );
    assert_eq!(r["end"]["phase"], "over", "{r}");
    assert_eq!(r["end"]["outcome"], outcome, "{r}");
    assert_eq!(r["end"]["points"], points.as_str(), "{r}");
    let shown = r["end"]["result"].as_str().unwrap_or_default();
    let words = match outcome {
        "win" => "You won the set",
        "loss" => "The bot won the set",
        _ => "The set is drawn",
    };
    assert!(shown.starts_with(words), "{shown}");
    assert!(
        shown.contains(&points.replace('-', " \u{2013} ")),
        "{shown}"
    );
    let out = hus(&["replay", &log.display().to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains(&log.display().to_string()), "{said}");
}

/// One HTTP/1.1 request (its head without the blank line, then `body`): the status, the
/// head in lower case, the body.
fn request_with(addr: &str, head: &str, body: &str) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .write_all(format!("{head}Connection: close\r\n\r\n{body}").as_bytes())
        .expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// Before any browser: the page and its scripts under the dashboard's policy, another
/// `Host` (DNS rebinding) and unknown paths refused, a move without a tab refused; then
/// SIGTERM stops the set: exit status 130, the log ends with `aborted`.
#[test]
fn play_web_serves_under_its_policy_refuses_other_hosts_and_stops_on_sigterm() {
    let tmp = LogDir::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["play", "--web", &hus_random(3), "--seed", "5", "--log-dir"])
        .arg(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus play starts");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let addr = first
        .split("open http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| {
            let _ = child.kill();
            panic!("no address in {first:?}")
        })
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");

    let host = format!("Host: {addr}\r\n");
    for (path, kind) in [
        ("/", "text/html"),
        ("/play.js", "text/javascript"),
        ("/board.js", "text/javascript"),
        ("/rules.js", "text/javascript"),
        ("/viewer.css", "text/css"),
        ("/play.css", "text/css"),
    ] {
        let (status, head, _) = request_with(&addr, &format!("GET {path} HTTP/1.1\r\n{host}"), "");
        assert_eq!(status, 200, "{path}: {head}");
        assert!(head.contains(&format!("content-type: {kind}")), "{head}");
        assert!(
            head.contains("content-security-policy: default-src 'none'; script-src 'self';"),
            "{head}"
        );
        assert!(head.contains("x-frame-options: deny"), "{head}");
    }
    let (status, _, body) = request_with(&addr, "GET / HTTP/1.1\r\nHost: evil.example:80\r\n", "");
    assert_eq!(status, 421, "{body}");
    assert!(
        body.contains("this server answers only to 127.0.0.1:"),
        "{body}"
    );
    let (status, _, body) = request_with(&addr, &format!("GET /etc/passwd HTTP/1.1\r\n{host}"), "");
    assert_eq!(
        (status, body.as_str()),
        (404, r#"{"error":"no such page"}"#)
    );
    // A move from a tab that holds no seat (no page is open) changes nothing.
    let move_body = r#"{"tab":"abcdefgh12","game":1,"ply":0,"pit":4}"#;
    let (status, _, body) = request_with(
        &addr,
        &format!(
            "POST /api/move HTTP/1.1\r\n{host}Content-Type: application/json\r\nContent-Length: {}\r\n",
            move_body.len()
        ),
        move_body,
    );
    assert_eq!(
        (status, body.as_str()),
        (
            409,
            r#"{"error":"this tab does not hold the seat: reload the page"}"#
        )
    );
    let (status, _, body) = request_with(&addr, &format!("GET /api/events HTTP/1.1\r\n{host}"), "");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("no tab"), "{body}");

    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "hus play did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let records = read_log(&file_ending(tmp.path(), ".jsonl"));
    let last = records.last().expect("records");
    assert_eq!(last["type"], "aborted", "{last}");
    assert_eq!(last["reason"], "stopped by SIGTERM", "{last}");
}
