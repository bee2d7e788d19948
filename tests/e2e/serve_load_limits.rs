//! `hus serve` under load (issue 21, "bounded downloads and pages"), on one real set of
//! more than 100,000 moves (a 32 MB log) between random movers: downloads streamed from
//! the file, counted (503 with Retry-After past the bound) and timed (a slow reader is
//! cut at `--download-time`; one address holds at most its share, and a trickling
//! reader is cut by the stall limit); replay pages built once, shared by concurrent
//! requests, and stopped when their clients go; pages over `--max-page-moves` refused
//! without reading the log, and one address's refusals limited (issue 33). The server's own peak memory (VmHWM) and CPU time
//! (utime + stime) are read from /proc.
//!
//! Playing the set takes the most time (about 20 s in a debug build): it is played once,
//! and every check runs against the one server (the refused pages against a second).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// Games of the set: with these seeds, 100,578 moves.
const GAMES: u32 = 2500;
/// The set's name, and its log's.
const SET: &str = "r1-a-vs-b";
/// `--download-time` of the server under test.
const DOWNLOAD_TIME: Duration = Duration::from_secs(5);
/// The server's default `--max-downloads`.
const MAX_DOWNLOADS: usize = 16;
/// The server's default `--max-downloads-per-address`.
const MAX_DOWNLOADS_PER_ADDRESS: usize = 4;

/// A running `hus serve`, stopped by SIGTERM (then SIGKILL) when dropped.
struct Served {
    child: Child,
    addr: SocketAddr,
}

impl Served {
    fn start(file: &Path, dir: &Path, extra: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
            .args(["serve", &file.display().to_string(), "--dir"])
            .arg(dir)
            .args(["--listen", "127.0.0.1:0", "--quiet"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hus serve starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("dashboard on http://").nth(1) {
                    let _ = tx.send(rest.split('/').next().unwrap_or_default().to_string());
                }
            }
        });
        let Ok(addr) = rx.recv_timeout(Duration::from_secs(120)) else {
            let _ = child.kill();
            panic!("hus serve never said where it listens");
        };
        Served {
            child,
            addr: addr.parse().expect("an address"),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's peak resident memory, in bytes.
    fn peak_memory(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("/proc/PID/status");
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a VmHWM line");
        kb * 1024
    }

    /// The CPU time the server has used, user and system.
    fn cpu(&self) -> Duration {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).expect("/proc/PID/stat");
        // Fields after the command's name, which is in parentheses: state is the first,
        // utime the 12th, stime the 13th.
        let after = &stat[stat.rfind(')').expect("a name") + 2..];
        let fields: Vec<u64> = after
            .split_whitespace()
            .skip(11)
            .take(2)
            .map(|f| f.parse().expect("a number"))
            .collect();
        // SAFETY: sysconf only reads a constant of the system.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        Duration::from_millis((fields[0] + fields[1]) * 1000 / per_second)
    }

    /// The CPU the server used over the next `window`, as a share of one core.
    fn cpu_share_over(&self, window: Duration) -> f64 {
        let before = self.cpu();
        std::thread::sleep(window);
        (self.cpu() - before).as_secs_f64() / window.as_secs_f64()
    }

    /// A request for `path` on a new connection, of which nothing is read yet.
    fn send(&self, path: &str) -> BufReader<TcpStream> {
        self.send_from(loopback(1), None, path)
    }

    /// The same from the loopback address `from`, with a receive buffer of
    /// `recv_buffer` bytes if given.
    fn send_from(
        &self,
        from: IpAddr,
        recv_buffer: Option<u32>,
        path: &str,
    ) -> BufReader<TcpStream> {
        let mut stream = connect_from_with(from, self.addr, recv_buffer).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        let head = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        );
        stream
            .write_all(head.as_bytes())
            .expect("write the request");
        BufReader::new(stream)
    }

    /// A whole response: status, head, body.
    fn get(&self, path: &str) -> (u16, String, Vec<u8>) {
        let mut stream = self.send(path);
        let (status, head) = read_head(&mut stream);
        let mut body = Vec::new();
        stream.read_to_end(&mut body).expect("the body");
        (status, head, body)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn loopback(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// A response's JSON body of `length` bytes: its `error` sentence.
fn error_of(stream: &mut BufReader<TcpStream>, head: &str) -> String {
    let n: usize = header(head, "content-length")
        .and_then(|n| n.parse().ok())
        .expect("a length");
    let mut body = vec![0; n];
    stream.read_exact(&mut body).expect("the body");
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    body["error"].as_str().expect("an error").to_string()
}

/// A response's status line and headers (lowercase), read up to the blank line.
fn read_head(stream: &mut BufReader<TcpStream>) -> (u16, String) {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = stream.read_line(&mut line).expect("a head line");
        assert!(
            n > 0 && head.len() < 16 * 1024,
            "a head cut short: {head:?}"
        );
        if line == "\r\n" {
            break;
        }
        head.push_str(&line.to_ascii_lowercase());
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, head)
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// A league of two random movers and one set of `GAMES` games, played by `hus league`:
/// its file, and its directory with the set's log.
fn league_with_one_long_set(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let file = dir.join("L.toml");
    let text = format!(
        "rules = \"hus\"\nwidth = 8\ngames = {GAMES}\nrounds = 1\nmove_time = \"10s\"\n\
         ready_time = \"30s\"\nseed = 7\nconcurrency = 1\n\n\
         [[bot]]\nname = \"a\"\ncommand = \"{}\"\n\n[[bot]]\nname = \"b\"\ncommand = \"{}\"\n",
        hus_random(1).replace('\\', "\\\\").replace('"', "\\\""),
        hus_random(2).replace('\\', "\\\\").replace('"', "\\\""),
    );
    std::fs::write(&file, text).expect("write the league file");
    let league = dir.join("league");
    let out = hus(&[
        "league",
        &file.display().to_string(),
        "--dir",
        &league.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (file, league)
}

/// A slow reader (16 KiB every 100 ms, until a second past the time limit; then at full
/// speed, to drain what the sockets hold) is cut at the download's time limit, with
/// less than the whole log; a full-speed reader gets the whole file, with its length,
/// by either route.
fn downloads_are_streamed_whole_and_a_slow_one_is_cut(server: &Served, log: &[u8], gz: &[u8]) {
    // The set's log, unpacked as it is sent: its length is known only at its end.
    let path = format!("/api/sets/{SET}/log");
    let started = Instant::now();
    let mut slow = server.send(&path);
    let (status, head) = read_head(&mut slow);
    assert_eq!(status, 200, "{head}");
    assert_eq!(header(&head, "transfer-encoding"), Some("chunked"));
    let mut got = 0usize;
    let mut chunk = vec![0; 16 * 1024];
    loop {
        match slow.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "a slow download was not cut: {got} bytes in {:?}",
            started.elapsed()
        );
        if started.elapsed() < DOWNLOAD_TIME + Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    assert!(got < log.len(), "the slow reader got the whole log");
    assert!(
        started.elapsed() >= DOWNLOAD_TIME,
        "cut after {:?}, before the time limit",
        started.elapsed()
    );
    // Whole: the text, and the compressed file as it is, with its length.
    let (status, head, body) = server.get(&path);
    assert_eq!(status, 200, "{path}: {head}");
    assert_eq!(
        header(&head, "content-disposition"),
        Some(format!("attachment; filename=\"{SET}.jsonl\"").as_str())
    );
    let body = dechunk_bytes(&body);
    assert_eq!(body.len(), log.len(), "{path}");
    assert!(body == log, "{path}: not the log's text");
    let file = format!("/api/logs/{SET}.jsonl.zst");
    let (status, head, body) = server.get(&file);
    assert_eq!(status, 200, "{file}: {head}");
    assert_eq!(
        header(&head, "content-length"),
        Some(gz.len().to_string().as_str())
    );
    assert_eq!(header(&head, "content-type"), Some("application/zstd"));
    assert!(body == gz, "{file}: not the file's bytes");
}

/// 50 clients that never read a 32 MB log, two from each of 25 addresses (within the
/// bound per address): the server sends to `MAX_DOWNLOADS` of them and tells the others
/// to come back, and its memory stays under 100 MB; when they go, the places are free
/// again.
fn fifty_clients_that_never_read_cost_little_memory(server: &Served, log: &[u8]) {
    let path = format!("/api/sets/{SET}/log");
    let mut clients: Vec<BufReader<TcpStream>> = (0..50u8)
        .map(|n| server.send_from(loopback(10 + n / 2), None, &path))
        .collect();
    // Time for the server to fill every socket it can.
    std::thread::sleep(Duration::from_secs(3));
    let peak = server.peak_memory();
    eprintln!("50 clients that never read: peak memory {} MB", peak >> 20);
    assert!(peak < 100 << 20, "peak memory {} MB", peak >> 20);
    let mut sending = 0;
    for client in &mut clients {
        let (status, head) = read_head(client);
        match status {
            200 => sending += 1,
            503 => {
                assert_eq!(header(&head, "retry-after"), Some("10"), "{head}");
                assert_eq!(
                    error_of(client, &head),
                    format!(
                        "{MAX_DOWNLOADS} downloads are under way, the most this server sends \
                         at once: try again in 10 s"
                    )
                );
            }
            other => panic!("status {other}: {head}"),
        }
    }
    assert_eq!(sending, MAX_DOWNLOADS);
    drop(clients);
    // Their connections close, and with them the downloads: a new one is sent whole.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, head, body) = server.get(&path);
        if status == 200 {
            assert_eq!(dechunk_bytes(&body).len(), log.len());
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no download place came free: {head}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Issue 33, part 6: 127.0.0.1 asks for the log 20 times and reads 12 bytes every 2 s
/// of each answer it gets, with a 4 KiB receive buffer, as the attack did: it gets
/// `MAX_DOWNLOADS_PER_ADDRESS` downloads, and 503 naming the bound for the rest;
/// meanwhile 127.0.0.2 downloads the whole log. The trickling downloads take far less
/// than 64 KiB in 10 s of waiting writes: they are cut, and 127.0.0.1 gets a download
/// again while its trickling clients are all still open.
fn one_address_holding_its_downloads_leaves_the_others_theirs(server: &Served, log: &[u8]) {
    let path = format!("/api/sets/{SET}/log");
    let mut answered = 0;
    let mut trickling = Vec::new();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for _ in 0..20 {
        let mut client = server.send_from(loopback(1), Some(4096), &path);
        let (status, head) = read_head(&mut client);
        match status {
            200 => {
                answered += 1;
                let stop = stop.clone();
                trickling.push(std::thread::spawn(move || {
                    let mut bytes = [0u8; 12];
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        if client.read_exact(&mut bytes).is_err() {
                            break;
                        }
                        std::thread::sleep(Duration::from_secs(2));
                    }
                    client
                }));
            }
            503 => {
                assert_eq!(header(&head, "retry-after"), Some("10"), "{head}");
                assert_eq!(
                    error_of(&mut client, &head),
                    format!(
                        "127.0.0.1 has {MAX_DOWNLOADS_PER_ADDRESS} downloads under way, the most \
                         one address may: try again in 10 s"
                    )
                );
            }
            other => panic!("status {other}: {head}"),
        }
    }
    assert_eq!(answered, MAX_DOWNLOADS_PER_ADDRESS);
    let mut other = server.send_from(loopback(2), None, &path);
    let (status, head) = read_head(&mut other);
    assert_eq!(
        status, 200,
        "127.0.0.2 while 127.0.0.1 holds its downloads: {head}"
    );
    let mut body = Vec::new();
    other.read_to_end(&mut body).expect("the body");
    assert_eq!(dechunk_bytes(&body).len(), log.len());
    // The trickles are cut by the stall limit (10 s of waiting writes, once the
    // kernel's buffers are full): 127.0.0.1 is served again, its clients still open.
    let started = Instant::now();
    loop {
        let mut again = server.send_from(loopback(1), None, &path);
        let (status, head) = read_head(&mut again);
        if status == 200 {
            break;
        }
        assert_eq!(status, 503, "{head}");
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "127.0.0.1's trickling downloads were not cut"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    eprintln!("trickling downloads cut within {:?}", started.elapsed());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in trickling {
        drop(t.join().expect("a trickling client"));
    }
}

/// 40 concurrent requests for the set's page, whose clients go before it is built: the
/// build stops, and the server is idle within 2 s. 40 more that wait: one build for all,
/// every page the same, memory under 150 MB, idle again after. One more: the page was
/// kept (a fraction of a build's CPU).
fn replay_pages_are_built_once_and_stopped_when_nobody_waits(server: &Served) -> Duration {
    let path = format!("/sets/{SET}/replay");
    let before = server.cpu();
    let leaving: Vec<_> = (0..40).map(|_| server.send(&path)).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.cpu() < before + Duration::from_millis(200) {
        assert!(Instant::now() < deadline, "no build started");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(leaving);
    std::thread::sleep(Duration::from_secs(1));
    let share = server.cpu_share_over(Duration::from_secs(1));
    eprintln!("CPU 1 to 2 s after 40 clients went: {:.1}%", share * 100.0);
    assert!(
        share < 0.1,
        "{:.0}% of a core busy 1 s after the clients went",
        share * 100.0
    );

    let before = server.cpu();
    let waiting: Vec<_> = (0..40).map(|_| server.send(&path)).collect();
    let mut first: Option<Vec<u8>> = None;
    for mut client in waiting {
        let (status, head) = read_head(&mut client);
        assert_eq!(status, 200, "{head}");
        let mut page = Vec::new();
        client.read_to_end(&mut page).expect("the page");
        match &first {
            None => {
                let text = String::from_utf8_lossy(&page);
                assert!(text.contains(&format!("\"source\":\"{SET}.jsonl.zst\"")));
                first = Some(page);
            }
            Some(first) => assert!(&page == first, "pages differ"),
        }
    }
    let build = server.cpu() - before;
    let peak = server.peak_memory();
    eprintln!(
        "40 waiting requests: CPU {build:?}, peak memory {} MB",
        peak >> 20
    );
    assert!(peak < 150 << 20, "peak memory {} MB", peak >> 20);
    let share = server.cpu_share_over(Duration::from_secs(1));
    assert!(
        share < 0.1,
        "{:.0}% of a core busy after the pages were sent",
        share * 100.0
    );

    let before = server.cpu();
    let (status, _, page) = server.get(&path);
    let kept = server.cpu() - before;
    eprintln!("the kept page: CPU {kept:?}");
    assert_eq!(status, 200);
    assert!(Some(&page) == first.as_ref());
    assert!(
        kept * 4 < build,
        "serving the kept page took {kept:?}, building it {build:?}"
    );
    build
}

/// Issue 33, part 5: a server whose pages hold at most `max` moves, fewer than the
/// set's `moves`. 10 requests from 127.0.0.1 and one from each of 30 other addresses
/// are refused (422) from the store's move count, without reading the log: all of them
/// together cost less than a quarter of the CPU of one build (`build`). 127.0.0.1's
/// 11th is answered 429: its refusals this minute are spent.
fn pages_over_the_move_bound_are_refused_without_reading_the_log(
    server: &Served,
    moves: u64,
    max: u64,
    build: Duration,
) {
    let path = format!("/sets/{SET}/replay");
    let refusal = format!(
        "the page of {SET} would hold {moves} moves, more than {max}: download its log \
         instead (/api/sets/{SET}/log)"
    );
    let before = server.cpu();
    for from in std::iter::repeat_n(1, 10).chain(40..70) {
        let mut client = server.send_from(loopback(from), None, &path);
        let (status, head) = read_head(&mut client);
        assert_eq!(status, 422, "from 127.0.0.{from}: {head}");
        assert_eq!(error_of(&mut client, &head), refusal);
    }
    let refused = server.cpu() - before;
    eprintln!("40 refused pages: CPU {refused:?} (one build: {build:?})");
    assert!(
        refused * 4 < build,
        "40 refused pages took {refused:?}, one build {build:?}"
    );
    let mut client = server.send_from(loopback(1), None, &path);
    let (status, head) = read_head(&mut client);
    assert_eq!(status, 429, "{head}");
    let wait: u64 = header(&head, "retry-after")
        .and_then(|s| s.parse().ok())
        .expect("a Retry-After");
    assert!((1..=60).contains(&wait), "{head}");
    assert_eq!(
        error_of(&mut client, &head),
        format!(
            "127.0.0.1 asked for 10 replay pages that cannot be built this minute, the most \
             one address may: try again in {wait} s"
        )
    );
}

#[test]
fn serve_streams_logs_within_bounds_and_builds_each_replay_page_once() {
    // Its clients that never read hold hundreds of MB of the kernel's TCP buffers for a
    // while: not while another test measures them.
    let _tcp = tcp_memory_lock();
    let tmp = LogDir::new();
    let t = Instant::now();
    let (file, league) = league_with_one_long_set(tmp.path());
    eprintln!("the set of {GAMES} games played in {:?}", t.elapsed());
    // The finished set's log, compressed, and its text.
    let log = read_set_log(&league.join("logs").join(format!("{SET}.jsonl"))).into_bytes();
    assert!(log.len() > 20 << 20, "a log of {} bytes", log.len());
    let gz = std::fs::read(league.join("logs").join(format!("{SET}.jsonl.zst"))).expect("the file");
    let time = format!("{}s", DOWNLOAD_TIME.as_secs());
    // It plays no set (a set of its own would use the CPU the checks measure).
    let server = Served::start(
        &file,
        &league,
        &["--concurrency", "0", "--download-time", &time],
    );
    let sets: Value = {
        let (status, _, body) = server.get("/api/sets");
        assert_eq!(status, 200);
        serde_json::from_slice(&body).expect("JSON")
    };
    let moves = &sets["sets"][0]["moves"];
    let moves = moves[0].as_u64().expect("moves") + moves[1].as_u64().expect("moves");
    assert!((100_000..=200_000).contains(&moves), "{moves} moves");

    let t = Instant::now();
    downloads_are_streamed_whole_and_a_slow_one_is_cut(&server, &log, &gz);
    eprintln!("downloads: {:?}", t.elapsed());
    let t = Instant::now();
    fifty_clients_that_never_read_cost_little_memory(&server, &log);
    eprintln!("50 clients: {:?}", t.elapsed());
    let t = Instant::now();
    one_address_holding_its_downloads_leaves_the_others_theirs(&server, &log);
    eprintln!("downloads per address: {:?}", t.elapsed());
    let t = Instant::now();
    let build = replay_pages_are_built_once_and_stopped_when_nobody_waits(&server);
    eprintln!("replays: {:?}", t.elapsed());
    drop(server);
    // The same set on a server whose pages hold half its moves.
    let max = moves / 2;
    let server = Served::start(
        &file,
        &league,
        &["--concurrency", "0", "--max-page-moves", &max.to_string()],
    );
    pages_over_the_move_bound_are_refused_without_reading_the_log(&server, moves, max, build);
}
