//! Remote bots on a loopback bot port (port 0): sets played through `referee::play_set`
//! with one bot connected through `hus connect` or raw TCP, their logs checked by the
//! engine and by `hus replay`; refused logins (wrong token, oversized or missing auth
//! lines) logged without the token and rate-limited, without harm to a running set; a
//! disconnect mid-set is a crash, and the bot plays again once it reconnects.
//!
//! The server side runs in this process on a current-thread runtime, so that the
//! tracing subscriber that captures its log sees every task.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use referee::{play_set, Entrant, LogWriter, SetConfig, TimeControl};
use remote::{BotPort, PortConfig, Registry};
use serde_json::{json, Value};

use crate::common::{
    greedy_bot, hus, hus_random, named_header, of_type, read_log, verify_log, LogDir,
};

/// What the server logged, captured.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A league file with one remote bot, `alice`, whose token is returned, and a local
/// one, `local` (the built-in random mover).
fn league(dir: &Path) -> (league::LeagueConfig, String) {
    let token = remote::new_token();
    let text = format!(
        "games = 3\nmove_time = \"10s\"\nready_time = \"30s\"\nlag_cap = \"50ms\"\n\n\
         [[bot]]\nname = \"alice\"\nremote = true\ntoken_sha256 = \"{}\"\n\n\
         [[bot]]\nname = \"local\"\ncommand = \"{}\"\n",
        remote::hex(&remote::token_hash(&token)),
        hus_random(5)
    );
    let path = dir.join("league.toml");
    std::fs::write(&path, text).expect("league file");
    let config = league::LeagueConfig::load(&path).expect("the league file is accepted");
    (config, token)
}

struct Server {
    rt: tokio::runtime::Runtime,
    port: BotPort,
    config: league::LeagueConfig,
    token: String,
    log: Captured,
    _guard: tracing::subscriber::DefaultGuard,
    dir: LogDir,
}

impl Server {
    fn start(port: PortConfig) -> Server {
        Server::start_at(port, "127.0.0.1:0")
    }

    fn start_at(port: PortConfig, listen: &str) -> Server {
        let dir = LogDir::new();
        let (config, token) = league(dir.path());
        let log = Captured::default();
        let writer = log.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let registry = Arc::new(Registry::new(
            server::remote_tokens(&config),
            config.lag_cap,
            4,
        ));
        let port = rt
            .block_on(BotPort::bind(
                PortConfig {
                    listen: listen.parse().expect("address"),
                    ..port
                },
                registry,
            ))
            .expect("the bot port binds");
        Server {
            rt,
            port,
            config,
            token,
            log,
            _guard: guard,
            dir,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.port.local_addr()
    }

    fn token_file(&self, token: &str) -> String {
        let path = self.dir.path().join(format!("token-{}", &token[..8]));
        std::fs::write(&path, format!("{token}\n")).expect("token file");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        path.display().to_string()
    }

    /// Waits (serving the port meanwhile) until `alice` has a connection waiting.
    fn wait_connected(&self) {
        let registry = Arc::clone(self.port.registry());
        self.rt.block_on(async {
            for _ in 0..600 {
                if registry.is_connected("alice") {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("alice never connected");
        });
    }

    /// Plays a set of `games` between alice (bot A, remote) and the local bot, logged
    /// in the temporary directory; returns the log's records and its path.
    fn play(&self, games: u32) -> (Vec<Value>, std::path::PathBuf) {
        let set = SetConfig {
            rules: self.config.rules,
            games,
            seed: 11,
            time: TimeControl::PerMove(Duration::from_secs(10)),
            ready_time: Duration::from_secs(30),
            early_stop: false,
            openings: Vec::new(),
            sprt: None,
        };
        let registry = self.port.registry();
        let logs = self.dir.path().join("logs");
        let entrants: [Entrant; 2] = ["alice", "local"].map(|name| {
            let bot = self.config.bot(name).expect("bot");
            // A remote bot plays over a link from the registry, as the league's sets do.
            match &bot.transport {
                league::Transport::Link { .. } => Entrant::Link {
                    command: bot.command(),
                    connect: registry.connector(name),
                    time: None,
                },
                league::Transport::Process { spec, limits } => Entrant::Process {
                    spec: spec.clone(),
                    stderr: logs.join(format!("{name}.stderr")).into(),
                    limits: limits.clone(),
                    version: None,
                },
            }
        });
        let (mut writer, stem) = LogWriter::create(&logs, "set").expect("log");
        self.rt
            .block_on(play_set(
                &set,
                entrants.map(referee::Lineup::from).into(),
                "hus test",
                &mut writer,
            ))
            .expect("the set is played");
        drop(writer);
        let path = logs.join(format!("{stem}.jsonl"));
        (read_log(&path), path)
    }

    /// Runs `f` on a thread while serving the port, and returns its result.
    fn serve_while<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let handle = std::thread::spawn(f);
        self.rt.block_on(async {
            while !handle.is_finished() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        handle.join().expect("the client thread")
    }
}

fn hus_connect(addr: SocketAddr, token_file: &str, sessions: u32, bot: &str) -> Child {
    let mut argv = vec![
        "connect".to_string(),
        addr.to_string(),
        "--bot".into(),
        "alice".into(),
        "--token-file".into(),
        token_file.into(),
        "--sessions".into(),
        sessions.to_string(),
        "--".into(),
    ];
    argv.extend(shlex::split(bot).expect("command"));
    Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(argv)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus connect starts")
}

/// Checks a log with the engine and with `hus replay`.
fn check_log(records: &[Value], path: &Path) {
    verify_log(records);
    let out = hus(&["replay", &path.display().to_string()]);
    assert!(
        out.status.success(),
        "hus replay refused the log: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A remote bot in raw TCP: logs in, then plays the first legal move of every turn;
/// on its `drop_at`-th turn it closes the connection instead.
fn raw_bot(addr: SocketAddr, token: &str, drop_at: Option<usize>) -> Result<usize, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    let auth = json!({"type": "auth", "bot": "alice", "token": token});
    writeln!(stream, "{auth}").map_err(|e| e.to_string())?;
    let mut lines = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?).lines();
    let welcome = lines.next().ok_or("no reply")?.map_err(|e| e.to_string())?;
    if !welcome.contains("\"welcome\"") {
        return Err(welcome);
    }
    let mut turns = 0;
    for line in lines {
        let Ok(line) = line else { break };
        let v: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
        let answer = match v["type"].as_str() {
            Some("hello") => json!({"type": "ready", "name": "raw"}),
            Some("turn") => {
                turns += 1;
                if Some(turns) == drop_at {
                    return Ok(turns);
                }
                json!({"type": "move", "pit": v["legal"][0]})
            }
            Some("bye") => break,
            _ => continue,
        };
        if writeln!(stream, "{answer}").is_err() {
            break;
        }
    }
    Ok(turns)
}

/// Connects, sends `bytes`, and returns the server's reply line and whether the
/// connection was closed after it.
fn probe(addr: SocketAddr, bytes: &[u8]) -> (Value, bool) {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    if !bytes.is_empty() {
        // The server may close while a long line is still being written.
        let _ = stream.write_all(bytes);
    }
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("a reply");
    let mut rest = Vec::new();
    // Closed with what the client sent still unread, the connection is reset.
    let closed = match reader.read_to_end(&mut rest) {
        Ok(n) => n == 0,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    };
    (
        serde_json::from_str(&line).unwrap_or(Value::String(line)),
        closed,
    )
}

fn wait_exit(mut child: Child) -> (i32, String) {
    for _ in 0..600 {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return (status.code().unwrap_or(-1), err);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("hus connect did not exit");
}

#[test]
fn a_bot_bridged_by_hus_connect_plays_a_set_that_hus_replay_verifies() {
    let server = Server::start(PortConfig::default());
    let child = hus_connect(
        server.addr(),
        &server.token_file(&server.token),
        1,
        &greedy_bot(),
    );
    server.wait_connected();
    let (records, path) = server.play(3);
    check_log(&records, &path);
    let end = of_type(&records, "set-end")[0];
    assert_eq!(end["games_played"], 3);
    assert_eq!(end["faults"], json!([0, 0]));
    assert_eq!(records[0]["bots"][0]["command"], "remote alice");
    // The greedy sample bot announced its name through the bridge.
    assert_eq!(records[0]["bots"][0]["name"], Value::Null);
    assert_eq!(named_header(&records)["bots"][0]["name"], "python-greedy");
    let ready = of_type(&records, "ready");
    assert_eq!(ready.len(), 2);
    let remote_ready = ready.iter().find(|r| r["bot"] == 0).expect("alice ready");
    assert!(
        remote_ready["peer"]
            .as_str()
            .is_some_and(|p| p.starts_with("127.0.0.1:")),
        "{remote_ready}"
    );
    assert!(remote_ready["rtt_ms"].is_f64(), "{remote_ready}");
    let local_ready = ready.iter().find(|r| r["bot"] == 1).expect("local ready");
    assert!(local_ready.get("peer").is_none() && local_ready.get("rtt_ms").is_none());
    for m in of_type(&records, "move") {
        if m["bot"] == 0 {
            let (rtt, lag) = (m["rtt_ms"].as_f64(), m["lag_ms"].as_f64());
            let (Some(rtt), Some(lag)) = (rtt, lag) else {
                panic!("a remote move without rtt_ms and lag_ms: {m}");
            };
            // The credit is the round-trip time up to the league's 50 ms cap.
            assert_eq!(lag, rtt.min(50.0), "{m}");
        } else {
            assert!(m.get("lag_ms").is_none(), "{m}");
        }
    }
    let shutdown = of_type(&records, "shutdown");
    let remote_stop = shutdown
        .iter()
        .find(|s| s["bot"] == 0)
        .expect("alice shut down");
    assert_eq!(remote_stop["status"], Value::Null);
    let (code, err) = server.serve_while(move || wait_exit(child));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("logged in to"), "{err}");
    // The server logged the login, with the round-trip time, and never the token.
    let log = server.log.text();
    assert!(log.contains("remote bot logged in"), "{log}");
    assert!(log.contains("rtt_ms="), "{log}");
    assert!(!log.contains(&server.token), "{log}");
}

#[test]
fn a_raw_tcp_bot_that_disconnects_mid_game_crashes_and_plays_on_after_reconnecting() {
    let server = Server::start(PortConfig::default());
    let (addr, token) = (server.addr(), server.token.clone());
    // The first connection drops on its third turn; the client then connects again
    // and plays the rest of the set.
    let client = std::thread::spawn(move || {
        let first = raw_bot(addr, &token, Some(3));
        let second = raw_bot(addr, &token, None);
        (first, second)
    });
    server.wait_connected();
    let (records, path) = server.play(3);
    check_log(&records, &path);
    let (first, second) = server.serve_while(move || client.join().expect("client"));
    assert_eq!(first, Ok(3));
    assert!(second.as_ref().is_ok_and(|&t| t > 0), "{second:?}");
    let faults = of_type(&records, "fault");
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(
        (
            &faults[0]["game"],
            &faults[0]["bot"],
            &faults[0]["kind"],
            &faults[0]["detail"]
        ),
        (
            &json!(1),
            &json!(0),
            &json!("crash"),
            &json!("disconnected")
        )
    );
    let restarts = of_type(&records, "restart");
    assert_eq!(restarts.len(), 1);
    assert_eq!(
        (&restarts[0]["bot"], &restarts[0]["game"]),
        (&json!(0), &json!(2))
    );
    let peers: Vec<&Value> = of_type(&records, "ready")
        .into_iter()
        .filter(|r| r["bot"] == 0)
        .map(|r| &r["peer"])
        .collect();
    assert_eq!(peers.len(), 2);
    assert_ne!(
        peers[0], peers[1],
        "the second connection comes from another port"
    );
    let ends = of_type(&records, "game-end");
    assert_eq!(
        (&ends[0]["reason"], &ends[0]["winner"]),
        (&json!("crash"), &json!(1))
    );
    for e in &ends[1..] {
        assert_ne!(e["reason"], "crash", "{e}");
    }
    let end = of_type(&records, "set-end")[0];
    assert_eq!(
        (&end["games_played"], &end["faults"]),
        (&json!(3), &json!([1, 0]))
    );
}

#[test]
fn wrong_tokens_are_refused_logged_without_the_token_and_rate_limited() {
    let server = Server::start(PortConfig {
        failures_allowed: 3,
        ..PortConfig::default()
    });
    let addr = server.addr();
    let good = server.token.clone();
    let wrong: Vec<String> = (0..3).map(|_| remote::new_token()).collect();
    let tried = wrong.clone();
    let replies = server.serve_while(move || {
        let mut replies: Vec<(Value, bool)> = tried
            .iter()
            .map(|t| {
                let auth = json!({"type": "auth", "bot": "alice", "token": t});
                probe(addr, format!("{auth}\n").as_bytes())
            })
            .collect();
        // Past three failures, even the right token is refused for a while.
        let auth = json!({"type": "auth", "bot": "alice", "token": good});
        replies.push(probe(addr, format!("{auth}\n").as_bytes()));
        replies
    });
    for (reply, closed) in &replies[..3] {
        assert_eq!(
            reply,
            &json!({"type": "refused", "reason": "wrong token for bot \"alice\", or no remote bot has that name"})
        );
        assert!(closed);
    }
    let (limited, closed) = &replies[3];
    assert_eq!(limited["type"], "refused");
    assert!(
        limited["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("too many failed logins from 127.0.0.1; try again in ")),
        "{limited}"
    );
    assert!(limited["retry_ms"]
        .as_u64()
        .is_some_and(|ms| ms > 0 && ms <= 60_000));
    assert!(closed);
    let log = server.log.text();
    assert_eq!(
        log.matches("login refused: wrong token or no such remote bot")
            .count(),
        3,
        "{log}"
    );
    // The third failure says once that the address is refused; the refusal itself
    // is logged too (the first of its minute).
    assert_eq!(
        log.matches("127.0.0.1 is refused for a while: too many failed logins")
            .count(),
        1,
        "{log}"
    );
    assert!(
        log.contains("login refused: too many failed logins from this address"),
        "{log}"
    );
    for t in wrong.iter().chain([&server.token]) {
        assert!(!log.contains(t.as_str()), "a token is in the log: {log}");
    }
    assert!(!server.port.registry().is_connected("alice"));

    // hus connect says plainly that the token was refused, and stops (exit status 2).
    let other = Server::start(PortConfig::default());
    let child = hus_connect(other.addr(), &other.token_file(&wrong[0]), 5, "true");
    let (code, err) = other.serve_while(move || wait_exit(child));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("refused bot \"alice\": wrong token for bot \"alice\""),
        "{err}"
    );
}

#[test]
fn oversized_and_silent_clients_are_dropped_without_harm_to_a_running_set() {
    let server = Server::start(PortConfig {
        auth_timeout: Duration::from_secs(1),
        ..PortConfig::default()
    });
    let (addr, token) = (server.addr(), server.token.clone());
    let client = std::thread::spawn(move || raw_bot(addr, &token, None));
    server.wait_connected();
    // While the set runs: a line past the 1024-byte limit, a client that never sends
    // its auth line, and one that sends half of it and stalls.
    let attackers = std::thread::spawn(move || {
        let oversized = probe(addr, &[b'x'; 5000]);
        let silent = probe(addr, b"");
        let half = probe(addr, b"{\"type\":\"auth\",\"bot\":");
        (oversized, silent, half)
    });
    let (records, path) = server.play(3);
    check_log(&records, &path);
    let end = of_type(&records, "set-end")[0];
    assert_eq!(
        (&end["games_played"], &end["faults"]),
        (&json!(3), &json!([0, 0]))
    );
    let (oversized, silent, half) = server.serve_while(move || attackers.join().expect("probes"));
    assert_eq!(
        oversized,
        (
            json!({"type": "refused", "reason": "the auth line is longer than 1024 bytes"}),
            true
        )
    );
    let late = (
        json!({"type": "refused", "reason": "no auth line within 1000 ms"}),
        true,
    );
    assert_eq!(silent, late);
    assert_eq!(half, late);
    let turns = server.serve_while(move || client.join().expect("client"));
    assert!(turns.is_ok_and(|t| t > 0));
    let log = server.log.text();
    assert!(log.contains("login refused: auth line too long"), "{log}");
    assert_eq!(
        log.matches("login refused: no auth line in time").count(),
        2,
        "{log}"
    );
}

/// Connects and sends `parts` one after the other (a pause between them lets the
/// server read each).
fn send(addr: SocketAddr, parts: &[&[u8]]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(200));
        }
        stream.write_all(part).expect("write");
    }
    stream
}

/// [`send`], then everything the server sent until it closed.
fn exchange(addr: SocketAddr, parts: &[&[u8]]) -> String {
    let mut all = Vec::new();
    let _ = send(addr, parts).read_to_end(&mut all);
    String::from_utf8_lossy(&all).into_owned()
}

/// [`send`], then the server's first line.
fn first_line(addr: SocketAddr, parts: &[&[u8]]) -> String {
    let mut line = String::new();
    BufReader::new(send(addr, parts))
        .read_line(&mut line)
        .expect("a reply");
    line
}

const WELCOME: &str = "{\"type\":\"welcome\",\"bot\":\"alice\"}\n";

/// The line of a refused login, as PROTOCOL.md shows it.
fn refused_line(reason: &str, retry_ms: Option<u64>) -> String {
    let reason = serde_json::to_string(reason).expect("json");
    match retry_ms {
        Some(ms) => format!("{{\"type\":\"refused\",\"reason\":{reason},\"retry_ms\":{ms}}}\n"),
        None => format!("{{\"type\":\"refused\",\"reason\":{reason}}}\n"),
    }
}

#[test]
fn an_auth_line_of_1024_bytes_logs_in_and_1025_bytes_without_a_newline_end_the_login() {
    let server = Server::start(PortConfig::default());
    let (addr, token) = (server.addr(), server.token.clone());
    let replies = server.serve_while(move || {
        let auth = json!({"type": "auth", "bot": "alice", "token": token}).to_string();
        // The auth object, then blanks (JSON allows them) up to `n` bytes.
        let padded = |n: usize| format!("{auth}{}", " ".repeat(n - auth.len())).into_bytes();
        (
            // 1024 bytes and the newline, at once and with a pause after the 1024th
            // byte: 1024 bytes without a newline do not end the login.
            first_line(addr, &[&[padded(1024), b"\n".to_vec()].concat()]),
            first_line(addr, &[&padded(1024), b"\n"]),
            // 1025 bytes: refused, with or without a newline after them; the server
            // does not wait for the newline (it would refuse for time, 5 s on).
            exchange(addr, &[&[padded(1025), b"\n".to_vec()].concat()]),
            exchange(addr, &[&padded(1025)]),
        )
    });
    let too_long = refused_line("the auth line is longer than 1024 bytes", None);
    assert_eq!(
        replies,
        (
            WELCOME.to_string(),
            WELCOME.to_string(),
            too_long.clone(),
            too_long
        )
    );
}

#[test]
fn a_connection_past_a_bots_four_waiting_hears_refused_alone() {
    let server = Server::start(PortConfig::default());
    let (addr, token) = (server.addr(), server.token.clone());
    let (welcomes, fifth, held) = server.serve_while(move || {
        let auth = format!(
            "{}\n",
            json!({"type": "auth", "bot": "alice", "token": token})
        );
        let mut held = Vec::new();
        let mut welcomes = Vec::new();
        for _ in 0..4 {
            let stream = send(addr, &[auth.as_bytes()]);
            let mut line = String::new();
            BufReader::new(stream.try_clone().expect("clone"))
                .read_line(&mut line)
                .expect("a reply");
            welcomes.push(line);
            held.push(stream);
        }
        // Everything the server sends the fifth, up to its close.
        let fifth = exchange(addr, &[auth.as_bytes()]);
        (welcomes, fifth, held)
    });
    assert_eq!(welcomes, vec![WELCOME; 4]);
    assert_eq!(
        fifth,
        refused_line(
            "bot \"alice\" already has 4 connections waiting for a set",
            Some(5000)
        )
    );
    assert_eq!(
        server.port.registry().connected(),
        [("alice".to_string(), 4)]
    );
    let log = server.log.text();
    assert_eq!(
        log.matches("remote bot refused: it has too many connections")
            .count(),
        1,
        "{log}"
    );
    // Not a failed login: nothing counted against the address.
    assert!(!log.contains("login refused"), "{log}");
    drop(held);
}

#[test]
fn hus_connect_retries_until_the_server_is_up_and_connects_again_after_each_set() {
    // A free port, closed again: hus connect finds nobody there at first.
    let addr = {
        let first = Server::start(PortConfig::default());
        first.addr()
    };
    let token = remote::new_token();
    let dir = LogDir::new();
    let token_file = dir.path().join("alice.token");
    std::fs::write(&token_file, format!("{token}\n")).expect("token file");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let mut child = hus_connect(addr, &token_file.display().to_string(), 2, &greedy_bot());
    // Its stderr, as it comes: the server comes up once it has failed to connect.
    let stderr = Arc::new(Mutex::new(String::new()));
    let pipe = child.stderr.take().expect("stderr");
    let sink = Arc::clone(&stderr);
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            let mut text = sink.lock().unwrap_or_else(|e| e.into_inner());
            text.push_str(&line);
            text.push('\n');
        }
    });
    let said = |what: &str| {
        stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(what)
    };
    for _ in 0..600 {
        if said("connecting again in") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(said("connecting again in"), "hus connect never retried");
    let server = Server::start_at(PortConfig::default(), &addr.to_string());
    let hash = remote::token_hash(&token);
    server
        .port
        .registry()
        .set_tokens([("alice".to_string(), hash)].into_iter().collect());
    server.wait_connected();
    let (first, first_path) = server.play(1);
    check_log(&first, &first_path);
    server.wait_connected();
    let (second, second_path) = server.play(1);
    check_log(&second, &second_path);
    for records in [&first, &second] {
        let end = of_type(records, "set-end")[0];
        assert_eq!(
            (&end["games_played"], &end["faults"]),
            (&json!(1), &json!([0, 0]))
        );
    }
    let (code, _) = server.serve_while(move || wait_exit(child));
    reader.join().expect("stderr reader");
    let err = stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("cannot connect to"), "{err}");
    assert!(err.contains("connecting again in 0.5 s"), "{err}");
    assert_eq!(err.matches("logged in to").count(), 2, "{err}");
}

#[test]
fn connections_past_the_bound_are_refused_at_once() {
    let server = Server::start(PortConfig {
        max_connections: 2,
        auth_timeout: Duration::from_secs(3),
        ..PortConfig::default()
    });
    let addr = server.addr();
    let (held, refused) = server.serve_while(move || {
        // Two clients that say nothing hold both places until the auth timeout.
        let holders: Vec<_> = (0..2)
            .map(|_| std::thread::spawn(move || probe(addr, b"")))
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        let refused = probe(addr, b"");
        let held: Vec<_> = holders
            .into_iter()
            .map(|h| h.join().expect("holder"))
            .collect();
        (held, refused)
    });
    assert_eq!(
        refused,
        (
            json!({"type": "refused", "reason": "the server has its 2 connections; try again later", "retry_ms": 5000}),
            true
        )
    );
    for h in held {
        assert_eq!(
            h,
            (
                json!({"type": "refused", "reason": "no auth line within 3000 ms"}),
                true
            )
        );
    }
}

#[test]
fn hus_connect_stops_when_the_bot_cannot_be_started_and_the_game_is_lost() {
    let server = Server::start(PortConfig::default());
    let child = hus_connect(
        server.addr(),
        &server.token_file(&server.token),
        5,
        "/nonexistent/bot --fast",
    );
    server.wait_connected();
    let (records, path) = server.play(1);
    check_log(&records, &path);
    let faults = of_type(&records, "fault");
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(
        (&faults[0]["bot"], &faults[0]["kind"]),
        (&json!(0), &json!("crash"))
    );
    let (code, err) = server.serve_while(move || wait_exit(child));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "error: cannot start the bot \"/nonexistent/bot --fast\": No such file or directory"
        ),
        "{err}"
    );
}

/// Reads `hus connect`'s stderr until the line `until`, sends it `signal`, and returns
/// its exit status and every line it wrote.
fn signal_after_line(mut child: Child, until: String, signal: i32) -> (i32, Vec<String>) {
    let stderr = child.stderr.take().expect("stderr piped");
    let mut lines = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("hus connect's stderr");
        let reached = line == until;
        lines.push(line);
        if reached {
            // SAFETY: kill(2) on the pid of a child not yet waited for.
            let sent = unsafe { libc::kill(child.id() as i32, signal) };
            assert_eq!(sent, 0, "kill");
        }
    }
    let status = child.wait().expect("hus connect exits");
    (status.code().unwrap_or(-1), lines)
}

#[test]
fn hus_connect_stopped_while_waiting_for_a_set_says_so_and_exits_130() {
    let server = Server::start(PortConfig::default());
    let addr = server.addr();
    let child = hus_connect(addr, &server.token_file(&server.token), 5, &greedy_bot());
    let waiting = format!("hus connect: logged in to {addr} as alice; waiting for a set");
    let (code, lines) = server.serve_while(move || signal_after_line(child, waiting, libc::SIGINT));
    assert_eq!(code, 130, "{lines:?}");
    assert_eq!(
        lines,
        [
            format!("hus connect: logged in to {addr} as alice; waiting for a set"),
            "hus connect: stopped by SIGINT; no set was in progress".to_string(),
        ]
    );
}

#[test]
fn hus_connect_stopped_during_a_set_says_what_it_costs_the_bot_and_exits_130() {
    let server = Server::start(PortConfig::default());
    let addr = server.addr();
    // The program never answers a turn: the set is in progress until the signal.
    let child = hus_connect(
        addr,
        &server.token_file(&server.token),
        5,
        &crate::common::misbehave("never-answer"),
    );
    server.wait_connected();
    let begun = "hus connect: a set begins; the bot is running".to_string();
    let watcher = std::thread::spawn(move || signal_after_line(child, begun, libc::SIGTERM));
    let (records, path) = server.play(1);
    check_log(&records, &path);
    let (code, lines) = server.serve_while(move || watcher.join().expect("the watcher"));
    assert_eq!(code, 130, "{lines:?}");
    assert_eq!(
        lines,
        [
            format!("hus connect: logged in to {addr} as alice; waiting for a set"),
            "hus connect: a set begins; the bot is running".to_string(),
            "hus connect: stopped by SIGTERM during a set; the bot was stopped and the \
             connection closed, which the server counts as a crash: the bot loses the game in \
             progress, and the set's later games unless it connects again within the league's \
             ready time"
                .to_string(),
        ]
    );
    // What the server recorded: the crash, as the message says.
    let faults = of_type(&records, "fault");
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(
        (&faults[0]["bot"], &faults[0]["kind"], &faults[0]["detail"]),
        (&json!(0), &json!("crash"), &json!("disconnected"))
    );
}
