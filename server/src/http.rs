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
//! - A write that makes no progress for [`WRITE_STALL`] (a client that stopped reading:
//!   a live watcher that never reads, a download no one takes) closes the connection.
//!
//! The request itself is bounded by the router's layers (body size, `TimeoutLayer`). Each
//! request carries its peer as axum's `ConnectInfo<SocketAddr>`. On shutdown the listener
//! stops accepting and every connection is closed gracefully (live streams end on the
//! same signal).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
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
/// A write blocked this long (the client reads nothing) closes the connection.
pub const WRITE_STALL: Duration = Duration::from_secs(30);

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
        let service = TowerToHyperService::new(router.clone().map_request(
            move |mut request: Request<Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
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
            let io = TokioIo::new(WriteStall::new(stream, WRITE_STALL));
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

/// A connection whose writes fail (`TimedOut`) once one has been blocked for `limit`
/// without a byte going out: the peer stopped reading. The clock runs only while a write
/// waits, so a quiet connection is not affected.
struct WriteStall<S> {
    inner: S,
    limit: Duration,
    blocked: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteStall<S> {
    fn new(inner: S, limit: Duration) -> WriteStall<S> {
        WriteStall {
            inner,
            limit,
            blocked: None,
        }
    }

    /// A write's outcome, turned into `TimedOut` when it has waited `limit`.
    fn watch<T>(
        &mut self,
        outcome: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        if outcome.is_ready() {
            self.blocked = None;
            return outcome;
        }
        let limit = self.limit;
        let blocked = self
            .blocked
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match blocked.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client read nothing for {} s", limit.as_secs()),
            ))),
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

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteStall<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch(outcome, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch(outcome, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch(outcome, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.watch(outcome, cx)
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

    #[test]
    fn a_write_the_peer_never_reads_fails_after_the_stall_limit_and_not_before() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime");
        rt.block_on(async {
            let (near, mut far) = tokio::io::duplex(64);
            let mut conn = WriteStall::new(near, Duration::from_secs(30));
            // Quiet for an hour: nothing is written, nothing happens.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            conn.write_all(&[1; 64]).await.expect("fits the buffer");
            // Read slowly but steadily: each write waits less than the limit.
            let mut byte = [0u8; 64];
            let reader = tokio::spawn(async move {
                for _ in 0..3 {
                    tokio::time::sleep(Duration::from_secs(20)).await;
                    far.read_exact(&mut byte).await.expect("read");
                }
                far
            });
            for _ in 0..3 {
                conn.write_all(&[2; 64]).await.expect("the reader keeps up");
            }
            let _far = reader.await.expect("reader");
            // Now no one reads: the next write fails after exactly the limit.
            let started = tokio::time::Instant::now();
            let failed = conn.write_all(&[3; 64]).await.expect_err("stalled");
            assert_eq!(failed.kind(), io::ErrorKind::TimedOut);
            assert_eq!(failed.to_string(), "the client read nothing for 30 s");
            assert_eq!(started.elapsed(), Duration::from_secs(30));
        });
    }
}
