//! `hus serve`'s capacity shared among client addresses (connections and live streams in
//! all and per address, half-sent heads, idle connections), the kernel's TCP memory of
//! live watchers that do not read, its `Host` check, and the summed-up log of refused
//! admin requests. Clients on other loopback addresses
//! (127.0.0.2 and up) bind their socket before connecting.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::{admin_token, exchange, instant, league_file, Server, HEAD};

/// The default connections per address (docs/server.md).
const PER_ADDRESS: usize = 64;
/// The default live streams per address.
const LIVE_PER_ADDRESS: usize = 16;
/// The slowloris and non-reading watchers one address sends at the server.
const FLOOD: usize = 2000;
/// The most time an answer to another address may take meanwhile.
const ANSWER_WITHIN: Duration = Duration::from_secs(1);

fn loopback(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// A connection to `addr` from the loopback address `from` (bound before connecting).
fn connect_from(from: IpAddr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    crate::common::connect_from_with(from, addr, None)
}

/// The status line's code of the answer on `stream`, read a byte at a time (the rest
/// is left unread).
fn status_line(stream: &mut TcpStream) -> u16 {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => line.push(byte[0]),
            other => panic!("no status line ({other:?}) after {line:?}"),
        }
    }
    let text = String::from_utf8_lossy(&line);
    text.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"))
}

/// Raises this process's descriptor limit (the children inherit it) to hold the flood.
fn raise_nofile(want: u64) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    if soft < want {
        setrlimit(Resource::RLIMIT_NOFILE, want.min(hard), hard).expect("setrlimit");
    }
}

/// A request from `from` that must be answered within [`ANSWER_WITHIN`]: status, body.
fn answered_from(from: IpAddr, addr: SocketAddr, head: &str) -> (u16, String) {
    let started = Instant::now();
    let stream = connect_from(from, addr).expect("connect");
    let (status, _, body) = exchange(stream, head, b"");
    let took = started.elapsed();
    assert!(
        took < ANSWER_WITHIN,
        "{head:?} from {from} took {took:?} under the flood"
    );
    (status, body)
}

#[test]
fn serve_answers_other_addresses_within_a_second_while_one_holds_thousands_of_connections() {
    raise_nofile(8192);
    let tmp = tempfile::tempdir().expect("temp dir");
    let head = HEAD.replace("concurrency = 2", "concurrency = 1");
    let file = league_file(tmp.path(), &head, &[("a", instant(1)), ("b", instant(2))]);
    let dir = tmp.path().join("league");
    let token = admin_token(&file, &dir);
    let server = Server::start(&file, &dir, &["--max-live", "40"]);
    let addr = server.addr;
    let live = format!("GET /api/live/events HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let half = format!("GET /api/status HTTP/1.1\r\nHost: {addr}\r\n");
    // The league is paused first: with no events to send, a watcher that does not read
    // is never behind, and holds its slot throughout (one that is behind by its buffers
    // is dropped after 5 s: `serve_kernel_tcp_memory_...` below).
    server.pause_until_idle(&format!("Bearer {token}"));

    // 127.0.0.1 takes its share: 16 live watchers that never read past the status line,
    // and 48 half-sent heads.
    let mut held = Vec::new();
    for _ in 0..LIVE_PER_ADDRESS {
        let mut watcher = connect_from(loopback(1), addr).expect("connect");
        watcher.write_all(live.as_bytes()).expect("write");
        assert_eq!(status_line(&mut watcher), 200);
        held.push(watcher);
    }
    for _ in LIVE_PER_ADDRESS..PER_ADDRESS {
        let mut slow = connect_from(loopback(1), addr).expect("connect");
        slow.write_all(half.as_bytes()).expect("write");
        held.push(slow);
    }
    // The 65th is closed at once, before it sends anything: the end of the stream, no
    // answer (a served one would wait for its request until the 10 s head deadline).
    let mut extra = connect_from(loopback(1), addr).expect("connect");
    extra
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut buf = [0u8; 64];
    assert_eq!(extra.read(&mut buf).map_err(|e| e.kind()), Ok(0));
    // The holders were still open: one finishes its head and is answered.
    held[LIVE_PER_ADDRESS].write_all(b"\r\n").expect("write");
    assert_eq!(status_line(&mut held[LIVE_PER_ADDRESS]), 200);

    // Live streams: 16 per address, 40 in all (--max-live 40), then 503 with Retry-After.
    let mut watchers = Vec::new();
    let mut open_live = |from: u8, n: usize| {
        for _ in 0..n {
            let mut watcher = connect_from(loopback(from), addr).expect("connect");
            watcher.write_all(live.as_bytes()).expect("write");
            assert_eq!(status_line(&mut watcher), 200, "from 127.0.0.{from}");
            watchers.push(watcher);
        }
    };
    let refused = |from: u8, why: &str| {
        let stream = connect_from(loopback(from), addr).expect("connect");
        let once = live.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n");
        let (status, head, body) = exchange(stream, &once, b"");
        assert_eq!(status, 503, "{body}");
        assert!(
            head.to_ascii_lowercase().contains("retry-after: 10"),
            "{head}"
        );
        assert_eq!(body, serde_json::json!({ "error": why }).to_string());
    };
    open_live(3, LIVE_PER_ADDRESS);
    refused(
        3,
        "127.0.0.3 has 16 live streams open, the most one address may: close one",
    );
    open_live(4, 40 - 2 * LIVE_PER_ADDRESS);
    refused(
        5,
        "the server has 40 live streams open, its most: try again later",
    );

    // The flood: 2,000 more connections from 127.0.0.1, half-sent heads and non-reading
    // watchers by turns, all kept open; meanwhile 127.0.0.2 reads the status and pauses.
    let mut flood = Vec::new();
    for n in 0..FLOOD {
        let mut stream = connect_from(loopback(1), addr).expect("connect");
        let request = if n % 2 == 0 { &half } else { &live };
        // The server may have closed it already.
        let _ = stream.write_all(request.as_bytes());
        flood.push(stream);
    }
    let status_head =
        format!("GET /api/status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    for _ in 0..20 {
        let (status, body) = answered_from(loopback(2), addr, &status_head);
        assert_eq!(status, 200, "{body}");
    }
    let pause = format!(
        "POST /api/admin/pause HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Connection: close\r\nContent-Length: 0\r\n\r\n"
    );
    let (status, body) = answered_from(loopback(2), addr, &pause);
    assert_eq!(status, 200, "{body}");
    let (_, body) = answered_from(loopback(2), addr, &status_head);
    let status: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(status["paused"], true, "{status}");

    // Every connection of the flood was refused at accept, but for those that may have
    // taken the place of a half-sent holder cut off by its head deadline (48 at most);
    // none was served a live stream (127.0.0.1's 16 are held throughout).
    let mut closed = 0;
    let mut served = 0;
    for mut stream in flood {
        stream
            .set_read_timeout(Some(Duration::from_millis(1)))
            .expect("timeout");
        match stream.read(&mut buf) {
            Ok(0) => closed += 1,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => closed += 1,
            Ok(n) if buf[..n].starts_with(b"HTTP/1.1 200") => served += 1,
            _ => {}
        }
    }
    assert_eq!(served, 0);
    assert!(
        closed >= FLOOD - (PER_ADDRESS - LIVE_PER_ADDRESS),
        "only {closed} of the flood's {FLOOD} connections were refused"
    );
    drop((held, watchers));
    let (code, said) = server.stop();
    assert_eq!(code, 0, "{said}");
}

#[test]
fn serve_answers_only_to_its_hosts_closes_idle_connections_and_sums_up_refused_admin_requests() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let head = HEAD.replace("concurrency = 2", "concurrency = 1");
    let file = league_file(tmp.path(), &head, &[("a", instant(1)), ("b", instant(2))]);
    let dir = tmp.path().join("league");
    let token = admin_token(&file, &dir);
    let server = Server::start(&file, &dir, &["--allowed-host", "hus.example.org"]);
    let addr = server.addr;
    let port = addr.port();

    // A kept-alive connection, idle after one answer, is closed after the 10 s head
    // deadline (watched meanwhile).
    let idle = std::thread::spawn(move || {
        let mut stream = connect_from(loopback(6), addr).expect("connect");
        let ask = format!("GET /app.css HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        stream.write_all(ask.as_bytes()).expect("write");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        let mut raw = Vec::new();
        let mut chunk = [0u8; 4096];
        // The answer: its head, then Content-Length bytes.
        let (head_len, body_len) = loop {
            let n = stream.read(&mut chunk).expect("read");
            assert!(n > 0, "closed before answering");
            raw.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .expect("content-length");
                break (end + 4, length);
            }
        };
        while raw.len() < head_len + body_len {
            let n = stream.read(&mut chunk).expect("read");
            assert!(n > 0, "closed mid-answer");
            raw.extend_from_slice(&chunk[..n]);
        }
        assert!(raw.starts_with(b"HTTP/1.1 200"));
        let idle_since = Instant::now();
        let end = stream.read(&mut chunk).map_err(|e| e.kind());
        (end, idle_since.elapsed())
    });

    // The Host check.
    let ask = |host: Option<&str>, path: &str| {
        let host = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
        let head = format!("GET {path} HTTP/1.1\r\n{host}Connection: close\r\n\r\n");
        let stream = TcpStream::connect(addr).expect("connect");
        let (status, _, body) = exchange(stream, &head, b"");
        (status, body)
    };
    for host in [
        addr.to_string(),
        "127.0.0.1".into(),
        format!("localhost:{port}"),
        "hus.example.org".into(),
        "HUS.Example.org:443".into(),
    ] {
        let (status, body) = ask(Some(&host), "/api/status");
        assert_eq!(status, 200, "{host}: {body}");
    }
    let refusal = |asked: &str| {
        serde_json::json!({
            "error": format!(
                "this server answers only to {addr} or localhost, hus.example.org ({asked}); \
                 give hus serve the name it is reached by with --allowed-host NAME"
            )
        })
        .to_string()
    };
    for (host, path) in [
        ("evil.example", "/api/status"),
        ("evil.example:80", "/"),
        ("localhost.evil.example", "/api/live/events"),
        ("10.1.2.3", "/api/standings"),
    ] {
        let (status, body) = ask(Some(host), path);
        assert_eq!(status, 421, "{host}");
        assert_eq!(
            body,
            refusal(&format!("the request's Host was {host:?}")),
            "{host}"
        );
    }
    let (status, body) = ask(None, "/api/status");
    assert_eq!((status, body), (421, refusal("the request had no Host")));

    // 100 refused admin requests from 127.0.0.1 (a wrong token), 3 from 127.0.0.2 (none).
    let presented = "f".repeat(64);
    for (from, auth, n) in [
        (1, format!("Authorization: Bearer {presented}\r\n"), 100),
        (2, String::new(), 3),
    ] {
        let head = format!(
            "POST /api/admin/pause HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\
             Content-Length: 0\r\n\r\n"
        );
        for _ in 0..n {
            let stream = connect_from(loopback(from), addr).expect("connect");
            let (status, _, _) = exchange(stream, &head, b"");
            assert_eq!(status, 401);
        }
    }

    let (end, idle_for) = idle.join().expect("idle watcher");
    assert_eq!(end, Ok(0), "the idle connection was not closed");
    assert!(
        idle_for >= Duration::from_secs(9) && idle_for < Duration::from_secs(40),
        "{idle_for:?}"
    );

    let (code, said) = server.stop();
    assert_eq!(code, 0, "{said}");
    assert!(
        !said.contains(&presented) && !said.contains(&token),
        "{said}"
    );
    let lines: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("admin request"))
        .collect();
    assert_eq!(lines.len(), 2, "{said}");
    for (line, (from, reasons)) in lines.iter().zip([
        ("127.0.0.1", "100 wrong token"),
        ("127.0.0.2", "3 no token given"),
    ]) {
        let count = reasons.split(' ').next().unwrap_or_default();
        let start = format!("refused {count} admin requests from {from} in the last ");
        let rest = line
            .split_once(&start)
            .map(|(_, rest)| rest)
            .unwrap_or_else(|| panic!("{line:?} is not {start:?}..."));
        let (secs, said_reasons) = rest.split_once(" s: ").expect("seconds");
        assert!(secs.parse::<u64>().is_ok_and(|s| s >= 1), "{line}");
        assert_eq!(said_reasons, reasons, "{line}");
    }
}

#[test]
fn serve_gives_a_half_sent_head_two_seconds_instead_of_ten_when_crowded() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let head = HEAD.replace("concurrency = 2", "concurrency = 1");
    let file = league_file(tmp.path(), &head, &[("a", instant(1)), ("b", instant(2))]);
    let dir = tmp.path().join("league");
    let server = Server::start(&file, &dir, &["--max-connections", "8"]);
    let addr = server.addr;
    let half = format!("GET /api/status HTTP/1.1\r\nHost: {addr}\r\n");
    let open_half = || {
        let mut slow = connect_from(loopback(7), addr).expect("connect");
        slow.write_all(half.as_bytes()).expect("write");
        slow.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        slow
    };
    // Six of eight open: not crowded (three quarters is six), each gets 10 s.
    let mut calm: Vec<TcpStream> = (0..6).map(|_| open_half()).collect();
    // The seventh comes to a crowded server: 2 s.
    let mut crowded = open_half();
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let end = crowded.read(&mut buf).map_err(|e| e.kind());
    let waited = started.elapsed();
    assert_eq!(end, Ok(0));
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(8),
        "the crowded head deadline took {waited:?}"
    );
    // The calm ones are still open: one finishes its head and is answered.
    calm[5].write_all(b"\r\n").expect("write");
    assert_eq!(status_line(&mut calm[5]), 200);
    drop(calm);
    let (code, said) = server.stop();
    assert_eq!(code, 0, "{said}");
}

/// Live watchers that do not read, from [`WATCHER_ADDRESSES`] addresses.
const WATCHERS: usize = 500;
/// The addresses they come from (127.0.0.10 and up), `WATCHERS / WATCHER_ADDRESSES` each.
const WATCHER_ADDRESSES: usize = 10;
/// The watchers' receive buffer (`SO_RCVBUF`), as small as the attack's.
const WATCHER_RECV_BUFFER: u32 = 4096;
/// The server's send buffer of a live stream (`server::http::LIVE_SEND_BUFFER`).
const LIVE_SEND_BUFFER: u64 = 16 * 1024;

/// The kernel's TCP memory, in bytes: `mem` of /proc/net/sockstat's TCP line (pages; the
/// whole machine's, not this test's alone).
fn tcp_memory() -> u64 {
    let text = std::fs::read_to_string("/proc/net/sockstat").expect("/proc/net/sockstat");
    let pages: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("TCP:"))
        .and_then(|l| l.split_whitespace().skip_while(|w| *w != "mem").nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no TCP mem in {text}"));
    // SAFETY: sysconf only reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    pages * page
}

/// Issue 33, part 7: 500 live watchers that read nothing after the status line, with
/// 4 KiB receive buffers, while two sets are played: the kernel's TCP memory grows by
/// less than 500 x (the server's send buffer, doubled by the kernel, + the watcher's
/// receive buffer, doubled) x 2 for the kernel's own overhead, about 39 MiB (without
/// the bound each socket's send buffer grew towards 4 MB: 64 watchers took 241 MiB).
/// A watcher that reads meanwhile gets the events. The non-reading ones are dropped
/// (their send buffers reset, so the kernel frees them) long before the 30 s the old
/// stall limit took; what stays while they are open is their own receive buffers.
#[test]
fn serve_kernel_tcp_memory_of_500_non_reading_watchers_stays_bounded() {
    // The machine's TCP memory is measured: no test of this binary that fills it by the
    // hundred megabytes runs meanwhile.
    let _tcp = crate::common::tcp_memory_lock();
    raise_nofile(4096);
    let tmp = tempfile::tempdir().expect("temp dir");
    let file = league_file(tmp.path(), HEAD, &[("a", instant(1)), ("b", instant(2))]);
    let dir = tmp.path().join("league");
    let per_address = WATCHERS / WATCHER_ADDRESSES;
    let server = Server::start(
        &file,
        &dir,
        &["--max-live-per-address", &per_address.to_string()],
    );
    let addr = server.addr;
    let live = format!("GET /api/live/events HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let before = tcp_memory();

    // One watcher that reads everything, on a thread: the bytes of events it got.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (stop, live) = (stop.clone(), live.clone());
        std::thread::spawn(move || {
            let mut watcher = connect_from(loopback(3), addr).expect("connect");
            watcher.write_all(live.as_bytes()).expect("write");
            assert_eq!(status_line(&mut watcher), 200);
            watcher
                .set_read_timeout(Some(Duration::from_secs(1)))
                .expect("timeout");
            let mut events = 0usize;
            let mut chunk = [0u8; 16 * 1024];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match watcher.read(&mut chunk) {
                    Ok(0) => panic!("a reading watcher was dropped"),
                    Ok(n) => events += chunk[..n].windows(6).filter(|w| w == b"data: ").count(),
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                    Err(e) => panic!("a reading watcher: {e}"),
                }
            }
            events
        })
    };

    let opened = Instant::now();
    let mut watchers = Vec::new();
    for n in 0..WATCHERS {
        let from = loopback(10 + (n / per_address) as u8);
        let mut watcher = crate::common::connect_from_with(from, addr, Some(WATCHER_RECV_BUFFER))
            .expect("connect");
        watcher.write_all(live.as_bytes()).expect("write");
        assert_eq!(status_line(&mut watcher), 200, "watcher {n}");
        watchers.push(watcher);
    }
    eprintln!("{WATCHERS} watchers open in {:?}", opened.elapsed());

    // Until the server dropped them all (the live streams open: the reader's alone),
    // the kernel's TCP memory, read every 100 ms.
    let bound = WATCHERS as u64 * (2 * LIVE_SEND_BUFFER + 2 * u64::from(WATCHER_RECV_BUFFER)) * 2;
    let mut peak = before;
    let status_head =
        format!("GET /api/status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    loop {
        peak = peak.max(tcp_memory());
        assert!(
            peak <= before + bound,
            "TCP memory grew by {} KiB in {:?}, more than {} KiB",
            (peak - before) >> 10,
            opened.elapsed(),
            bound >> 10
        );
        let stream = connect_from(loopback(2), addr).expect("connect");
        let (status, _, body) = exchange(stream, &status_head, b"");
        assert_eq!(status, 200, "{body}");
        let status: serde_json::Value = serde_json::from_str(&body).expect("json");
        if status["watchers"] == 1 {
            break;
        }
        assert!(
            opened.elapsed() < Duration::from_secs(25),
            "the non-reading watchers were not dropped within 25 s: {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let dropped = opened.elapsed();
    let after = tcp_memory();
    eprintln!(
        "TCP memory: {} KiB before, peak {} KiB (bound {} KiB above), {} KiB once the \
         watchers were dropped ({dropped:?} after they opened)",
        before >> 10,
        peak >> 10,
        bound >> 10,
        after >> 10
    );
    // What is left: the watchers' own receive buffers, until they close.
    let left = WATCHERS as u64 * 2 * u64::from(WATCHER_RECV_BUFFER) * 2;
    assert!(
        after <= before + left,
        "TCP memory {} KiB above what it was once the watchers were dropped, more than {} KiB",
        after.saturating_sub(before) >> 10,
        left >> 10
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let events = reader.join().expect("the reading watcher");
    assert!(events > 0, "the reading watcher got no event");
    drop(watchers);
    let (code, said) = server.stop();
    assert_eq!(code, 0, "{said}");
}
