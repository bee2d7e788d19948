//! The HTTP listener: hyper's HTTP/1.1 connection with bounds axum's own `serve` does
//! not offer. At most `max_connections` connections at once (a semaphore; one more is
//! closed at once); a request's head must arrive within `HEADER_TIMEOUT` and fit in
//! `MAX_HEADER` bytes (hyper's `header_read_timeout` and `max_buf_size`); the request
//! itself is bounded by the router's layers (body size, `TimeoutLayer`). On shutdown the
//! listener stops accepting and every connection is closed gracefully (live streams end
//! on the same signal).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

/// Time for a request's head (request line and headers) to arrive.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request head, in bytes (hyper's smallest allowed buffer is 8 KiB).
pub const MAX_HEADER: usize = 16 * 1024;

/// Serves `router` on `listener` until `shutdown` says so.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    max_connections: usize,
    mut shutdown: watch::Receiver<Option<&'static str>>,
) {
    let permits = Arc::new(Semaphore::new(max_connections));
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = async { let _ = shutdown.wait_for(|s| s.is_some()).await; } => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer): (_, SocketAddr) = match accepted {
            Ok(pair) => pair,
            // Out of descriptors and the like: wait a little rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let mut stop = shutdown.clone();
        connections.spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(MAX_HEADER);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = async { let _ = stop.wait_for(|s| s.is_some()).await; } => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
                }
            }
            drop(permit);
            let _ = peer;
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}
