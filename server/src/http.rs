//! The HTTP listener: hyper's HTTP/1.1 connection with bounds axum's own `serve` does
//! not offer, shared fairly among client addresses (docs/server.md, "Limits and
//! security", has every figure):
//!
//! - Connections: at most [`Limits::connections`] open at once, and at most
//!   [`Limits::connections_per_address`] from one client ([`Client`]: an IPv4 address or
//!   an IPv6 /64), counted by a [`Capacity`] whose slot travels with the connection. One
//!   more is closed at accept, before anything is read or written (no answer): a client
//!   over its share is by then holding dozens of connections, more than any browser
//!   opens.
//! - Live streams (`/api/live/events`, checked in `web.rs` on the same kind of
//!   [`Capacity`]): [`Limits::live`] in all, at most half the connections by default, so
//!   the other half is always left for the pages, the API and the admin; and
//!   [`Limits::live_per_address`] per client.
//! - A request's head must arrive within [`HEADER_TIMEOUT`], or [`CROWDED_HEADER_TIMEOUT`]
//!   for a connection accepted while three quarters of the connections are taken, and
//!   fit in [`MAX_HEADER`] bytes (hyper's `header_read_timeout` and `max_buf_size`).
//!   hyper starts that deadline again whenever a kept-alive connection waits for its next
//!   request, so an idle connection is closed after it too.
//! - A connection whose writes wait must take [`STALL`]'s bytes within its time of
//!   waiting (64 KiB in 10 s), or it is closed with a reset: a client that stopped
//!   reading (a download no one takes) and one that reads a few bytes now and then to
//!   look alive alike. A live stream is held to [`LIVE_STALL`] (16 KiB in 5 s) and its
//!   socket's send buffer is [`LIVE_SEND_BUFFER`]: a watcher that does not read costs
//!   the kernel tens of KiB for 5 s, not megabytes until it goes (`web.rs` marks the
//!   connection live with [`LiveSocket`]).
//!
//! The request itself is bounded by the router's layers (body size, `TimeoutLayer`). Each
//! request carries its peer as axum's `ConnectInfo<SocketAddr>`. On shutdown the listener
//! stops accepting and every connection is closed gracefully (live streams end on the
//! same signal).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::bail;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Sleep;
use tower::ServiceExt;

use crate::capacity::Capacity;
#[cfg(doc)]
use crate::capacity::Client;
use crate::ServeArgs;

/// Time for a request's head (request line and headers) to arrive, and for a
/// kept-alive connection to send its next request.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The same for a connection accepted while the server is crowded (three quarters of
/// its connections taken): a browser sends its head at once, a slowloris loses its
/// slots five times as fast.
pub const CROWDED_HEADER_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest request head, in bytes (hyper's smallest allowed buffer is 8 KiB).
pub const MAX_HEADER: usize = 16 * 1024;
/// What a connection whose writes wait must take: 64 KiB within 10 s of waiting
/// (6.5 kB/s, a fraction of the slowest link a page or a log is read over), else it is
/// closed. Counting bytes, not only progress: a client that reads 12 bytes every 25 s
/// makes progress, and would hold a download's place for as long as it likes.
pub const STALL: Stall = Stall {
    window: Duration::from_secs(10),
    bytes: 64 * 1024,
};
/// The same for a live stream: 16 KiB (half its send buffer) within 5 s of waiting. A
/// watcher that reads keeps its buffers nearly empty (its writes seldom wait at all);
/// one that stopped reading is dropped after 5 s, and the kernel frees its buffers.
pub const LIVE_STALL: Stall = Stall {
    window: Duration::from_secs(5),
    bytes: 16 * 1024,
};
/// `SO_SNDBUF` of a live stream's socket (the kernel doubles it for its own
/// bookkeeping, and stops growing it): what a watcher that does not read holds in the
/// kernel, where a socket left to the kernel's tuning grows to 4 MB (`tcp_wmem`). At
/// 16 KiB a reading watcher 100 ms away still gets 160 kB/s, far more than the events
/// of the running sets.
pub const LIVE_SEND_BUFFER: usize = 16 * 1024;

/// Connections one client address may hold by default (a browser opens at most six).
pub const DEFAULT_CONNECTIONS_PER_ADDRESS: usize = 64;
/// Live streams in all by default (and never more than half the connections).
pub const DEFAULT_LIVE: usize = 512;
/// Live streams one client address may hold by default.
pub const DEFAULT_LIVE_PER_ADDRESS: usize = 16;

/// The connection and live-stream figures of `hus serve`, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once (`--max-connections`).
    pub connections: usize,
    /// Connections of one client (`--max-connections-per-address`).
    pub connections_per_address: usize,
    /// Live streams at once (`--max-live`); fewer than `connections`.
    pub live: usize,
    /// Live streams of one client (`--max-live-per-address`).
    pub live_per_address: usize,
}

impl Limits {
    /// The figures of `hus serve`'s options, defaults filled in: 64 connections per
    /// address (or all, if fewer), live streams 512 (or half the connections, if fewer),
    /// 16 per address (or all the live streams, if fewer).
    pub fn from_args(args: &ServeArgs) -> anyhow::Result<Limits> {
        let connections = args.max_connections;
        if connections < 2 {
            bail!("--max-connections {connections}: give at least 2 (one for a live stream, one for the API)");
        }
        let connections_per_address = args
            .max_connections_per_address
            .unwrap_or(DEFAULT_CONNECTIONS_PER_ADDRESS.min(connections));
        if connections_per_address == 0 || connections_per_address > connections {
            bail!(
                "--max-connections-per-address {connections_per_address}: give a number from 1 to \
                 --max-connections ({connections})"
            );
        }
        let live = args.max_live.unwrap_or(DEFAULT_LIVE.min(connections / 2));
        if live >= connections {
            bail!(
                "--max-live {live}: give less than --max-connections ({connections}), so that \
                 connections are left for the pages, the API and the admin"
            );
        }
        let live_per_address = args
            .max_live_per_address
            .unwrap_or(DEFAULT_LIVE_PER_ADDRESS.min(live));
        if live_per_address > live || (live > 0 && live_per_address == 0) {
            bail!("--max-live-per-address {live_per_address}: give a number from 1 to --max-live ({live})");
        }
        Ok(Limits {
            connections,
            connections_per_address,
            live,
            live_per_address,
        })
    }
}

/// Serves `router` on `listener` until `shutdown` says so, each connection in a slot of
/// `connections`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    connections: Arc<Capacity>,
    mut shutdown: watch::Receiver<Option<&'static str>>,
) {
    let mut tasks = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = async { let _ = shutdown.wait_for(|s| s.is_some()).await; } => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
        };
        let (stream, peer): (_, SocketAddr) = match accepted {
            Ok(pair) => pair,
            // Out of descriptors and the like: wait a little rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Over a bound: closed before anything is read, so the client sees the end of
        // the connection (nothing unread makes it a reset).
        let Ok(slot) = connections.try_take(peer.ip()) else {
            drop(stream);
            continue;
        };
        let crowded = connections.held() * 4 > connections.total() * 3;
        let head_deadline = if crowded {
            CROWDED_HEADER_TIMEOUT
        } else {
            HEADER_TIMEOUT
        };
        let _ = stream.set_nodelay(true);
        let live = LiveSocket::default();
        let marker = live.clone();
        let service = TowerToHyperService::new(router.clone().map_request(
            move |mut request: Request<Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                request.extensions_mut().insert(marker.clone());
                request
            },
        ));
        let mut stop = shutdown.clone();
        tasks.spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(head_deadline)
                .max_buf_size(MAX_HEADER);
            let io = TokioIo::new(WriteStall::new(stream, STALL, live));
            let conn = builder.serve_connection(io, service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = async { let _ = stop.wait_for(|s| s.is_some()).await; } => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
                }
            }
            drop(slot);
        });
    }
    drop(listener);
    while tasks.join_next().await.is_some() {}
}

/// What a connection must take while its writes wait: `bytes` within `window` of
/// waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// Time of waiting writes in which `bytes` must go out.
    pub window: Duration,
    /// Bytes the socket must take within `window`.
    pub bytes: usize,
}

/// Marks a connection as a live stream's: put in every request's extensions by
/// [`serve`]; the live stream's handler calls [`LiveSocket::mark`], and from its next
/// write on the connection has the live stream's send buffer and stall limit.
#[derive(Clone, Debug, Default)]
pub struct LiveSocket(Arc<AtomicBool>);

impl LiveSocket {
    /// This connection carries a live stream from now on.
    pub fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_marked(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The socket settings a stalled or live connection needs; a no-op where there is no
/// socket (the tests' in-memory pipes).
pub trait Tune {
    /// Sets the socket's send buffer (`SO_SNDBUF`) to `bytes`.
    fn send_buffer(&self, bytes: usize);
    /// Makes closing the socket a reset (`SO_LINGER` 0): the kernel drops what it still
    /// holds to send at once, instead of keeping it for a peer that does not read.
    fn reset_on_close(&self);
}

impl Tune for tokio::net::TcpStream {
    fn send_buffer(&self, bytes: usize) {
        // Failing leaves the kernel's default: the stall limit still drops the watcher.
        let _ = socket2::SockRef::from(self).set_send_buffer_size(bytes);
    }

    fn reset_on_close(&self) {
        let _ = socket2::SockRef::from(self).set_linger(Some(Duration::ZERO));
    }
}

impl Tune for tokio::io::DuplexStream {
    fn send_buffer(&self, _bytes: usize) {}
    fn reset_on_close(&self) {}
}

/// A connection whose writes fail (`TimedOut`) once they have waited `stall.window` in
/// all without the socket taking `stall.bytes`: the peer stopped reading, or reads too
/// little to be reading at all. The clock runs only while a write waits, so a quiet
/// connection is not affected; it starts again from zero each time `stall.bytes` have
/// gone out. A connection that failed so is reset when closed. Marked live
/// ([`LiveSocket`]), it switches to [`LIVE_STALL`] and [`LIVE_SEND_BUFFER`] at its
/// next write.
struct WriteStall<S> {
    inner: S,
    stall: Stall,
    live: LiveSocket,
    switched: bool,
    /// Bytes taken since the clock last started from zero.
    taken: usize,
    /// Time writes waited since then, not counting the current wait.
    waited: Duration,
    /// The current wait: when it began, and the deadline of the window.
    waiting: Option<(tokio::time::Instant, Pin<Box<Sleep>>)>,
}

impl<S: Tune> WriteStall<S> {
    fn new(inner: S, stall: Stall, live: LiveSocket) -> WriteStall<S> {
        WriteStall {
            inner,
            stall,
            live,
            switched: false,
            taken: 0,
            waited: Duration::ZERO,
            waiting: None,
        }
    }

    /// Switches to the live stream's settings once the connection is marked live.
    fn check_live(&mut self) {
        if !self.switched && self.live.is_marked() {
            self.switched = true;
            self.stall = LIVE_STALL;
            self.inner.send_buffer(LIVE_SEND_BUFFER);
        }
    }

    /// A write's outcome (`taken`: the bytes it took), turned into `TimedOut` when the
    /// writes have waited the window without taking the bytes.
    fn watch<T>(
        &mut self,
        outcome: Poll<io::Result<T>>,
        taken: impl Fn(&T) -> usize,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        let now = tokio::time::Instant::now();
        match &outcome {
            Poll::Ready(result) => {
                if let Some((since, _)) = self.waiting.take() {
                    self.waited += now.saturating_duration_since(since);
                }
                if let Ok(value) = result {
                    self.taken += taken(value);
                }
                if self.taken >= self.stall.bytes {
                    self.taken = 0;
                    self.waited = Duration::ZERO;
                }
                return outcome;
            }
            Poll::Pending => {}
        }
        let left = self.stall.window.saturating_sub(self.waited);
        let (_, deadline) = self
            .waiting
            .get_or_insert_with(|| (now, Box::pin(tokio::time::sleep(left))));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.inner.reset_on_close();
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the client took {} bytes in {} s, less than the {} it must",
                        self.taken,
                        self.stall.window.as_secs(),
                        self.stall.bytes
                    ),
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteStall<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Tune + Unpin> AsyncWrite for WriteStall<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check_live();
        let outcome = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch(outcome, |n| *n, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check_live();
        let outcome = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch(outcome, |n| *n, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch(outcome, |_| 0, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.watch(outcome, |_| 0, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn limits(options: &[&str]) -> Result<Limits, String> {
        let cli = Cli::try_parse_from(["hus", "L.toml"].iter().chain(options))
            .map_err(|e| e.to_string())?;
        Limits::from_args(&cli.serve).map_err(|e| e.to_string())
    }

    #[test]
    fn the_figures_default_to_shares_of_the_total_and_bad_ones_are_refused() {
        let figures = |l: Limits| {
            (
                l.connections,
                l.connections_per_address,
                l.live,
                l.live_per_address,
            )
        };
        assert_eq!(limits(&[]).map(figures), Ok((1024, 64, 512, 16)));
        assert_eq!(
            limits(&["--max-connections", "4"]).map(figures),
            Ok((4, 4, 2, 2))
        );
        assert_eq!(
            limits(&["--max-connections", "5000", "--max-live-per-address", "100"]).map(figures),
            Ok((5000, 64, 512, 100))
        );
        for (options, error) in [
            (
                &["--max-live", "1024"][..],
                "--max-live 1024: give less than --max-connections (1024), so that connections \
                 are left for the pages, the API and the admin",
            ),
            (
                &["--max-connections-per-address", "2000"],
                "--max-connections-per-address 2000: give a number from 1 to --max-connections \
                 (1024)",
            ),
            (
                &["--max-live-per-address", "0"],
                "--max-live-per-address 0: give a number from 1 to --max-live (512)",
            ),
            (
                &["--max-connections", "1"],
                "--max-connections 1: give at least 2 (one for a live stream, one for the API)",
            ),
        ] {
            assert_eq!(limits(options), Err(error.to_string()), "{options:?}");
        }
    }

    fn paused() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime")
    }

    /// Writes `chunk`s on `conn` until one fails: the bytes that went out, and the error.
    async fn write_until_cut<S: AsyncWrite + Tune + Unpin>(
        conn: &mut WriteStall<S>,
        chunk: &[u8],
    ) -> (usize, io::Error) {
        let mut sent = 0;
        loop {
            match conn.write(chunk).await {
                Ok(n) => sent += n,
                Err(e) => return (sent, e),
            }
        }
    }

    #[test]
    fn a_write_the_peer_never_reads_fails_after_the_window_and_not_before() {
        paused().block_on(async {
            let (mut near, mut far) = tokio::io::duplex(64);
            near.write_all(&[1; 64]).await.expect("fits the buffer");
            let mut conn = WriteStall::new(near, STALL, LiveSocket::default());
            // Quiet for an hour: nothing is written, nothing happens.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            // Read steadily, 64 bytes every 5 ms (12.8 kB/s): the writes wait 5.12 s in
            // all for 64 KiB to go out, within the window, and the clock starts again.
            let reader = tokio::spawn(async move {
                let mut byte = [0u8; 64];
                for _ in 0..1024 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    far.read_exact(&mut byte).await.expect("read");
                }
                far
            });
            let started = tokio::time::Instant::now();
            for _ in 0..1024 {
                conn.write_all(&[2; 64]).await.expect("the reader keeps up");
            }
            assert_eq!(started.elapsed(), Duration::from_millis(5120));
            let _far = reader.await.expect("reader");
            // Now no one reads: the next write fails after exactly the window.
            let started = tokio::time::Instant::now();
            let failed = conn.write_all(&[3; 64]).await.expect_err("stalled");
            assert_eq!(failed.kind(), io::ErrorKind::TimedOut);
            assert_eq!(
                failed.to_string(),
                "the client took 0 bytes in 10 s, less than the 65536 it must"
            );
            assert_eq!(started.elapsed(), Duration::from_secs(10));
        });
    }

    /// The attack of issue 33: a client that reads 12 bytes every 3 s makes progress
    /// (the old limit, 30 s without a byte, never cut it), but takes far less than 64
    /// KiB in 10 s of waiting: cut after 10 s of waiting writes, having taken 36 bytes.
    #[test]
    fn a_client_that_reads_a_trickle_is_cut_after_the_window() {
        paused().block_on(async {
            let (near, mut far) = tokio::io::duplex(1024);
            let mut conn = WriteStall::new(near, STALL, LiveSocket::default());
            let reader = tokio::spawn(async move {
                let mut bytes = [0u8; 12];
                loop {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    if far.read_exact(&mut bytes).await.is_err() {
                        break;
                    }
                }
            });
            conn.write_all(&[0; 1024]).await.expect("fits the buffer");
            let started = tokio::time::Instant::now();
            let (sent, failed) = write_until_cut(&mut conn, &[1; 1024]).await;
            assert_eq!(failed.kind(), io::ErrorKind::TimedOut);
            assert_eq!(
                (sent, started.elapsed()),
                (36, Duration::from_secs(10)),
                "three reads of 12 bytes at 3, 6 and 9 s; cut at 10 s"
            );
            drop(conn);
            reader.await.expect("reader");
        });
    }

    /// A live stream's watcher that stops reading is dropped after 5 s of waiting
    /// writes, not 10.
    #[test]
    fn a_live_stream_that_is_not_read_is_cut_after_five_seconds() {
        paused().block_on(async {
            let (near, _far) = tokio::io::duplex(64);
            let live = LiveSocket::default();
            let mut conn = WriteStall::new(near, STALL, live.clone());
            live.mark();
            let started = tokio::time::Instant::now();
            let (sent, failed) = write_until_cut(&mut conn, &[1; 16]).await;
            assert_eq!(
                (sent, failed.to_string(), started.elapsed()),
                (
                    64,
                    "the client took 64 bytes in 5 s, less than the 16384 it must".to_string(),
                    Duration::from_secs(5)
                )
            );
        });
    }

    /// A live stream's socket gets the small send buffer at its first write (the kernel
    /// doubles what it is given); another connection keeps the kernel's own.
    #[test]
    fn a_live_streams_socket_has_a_small_send_buffer() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            let _client = tokio::net::TcpStream::connect(addr).await.expect("connect");
            let (accepted, _) = listener.accept().await.expect("accept");
            let default = socket2::SockRef::from(&accepted)
                .send_buffer_size()
                .expect("SO_SNDBUF");
            let live = LiveSocket::default();
            let mut conn = WriteStall::new(accepted, STALL, live.clone());
            conn.write_all(b"head").await.expect("write");
            let size = |conn: &WriteStall<tokio::net::TcpStream>| {
                socket2::SockRef::from(&conn.inner)
                    .send_buffer_size()
                    .expect("SO_SNDBUF")
            };
            assert_eq!(size(&conn), default);
            live.mark();
            conn.write_all(b"event").await.expect("write");
            assert_eq!(size(&conn), 2 * LIVE_SEND_BUFFER);
            assert_eq!(conn.stall, LIVE_STALL);
        });
    }
}
