//! The live stream (`/api/live/events`, server-sent events): every record of every
//! running set from `crate::live::Hub`, batched per write, bounded in all and per
//! client (`crate::capacity`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures_util::StreamExt as _;
use serde_json::json;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, watch};

use crate::capacity::{Client, Full};
use crate::error::ApiError;
use crate::http::LiveSocket;
use crate::state::AppState;

#[derive(Clone)]
pub(super) struct LiveState {
    pub(super) app: Arc<AppState>,
    pub(super) shutdown: watch::Receiver<Option<&'static str>>,
}

/// Bytes of events one write of the live stream carries at most.
const BATCH_BYTES: usize = 64 * 1024;
/// A comment line keeps a quiet live stream open through proxies.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Seconds a refused live stream is told to wait (`Retry-After`).
const LIVE_RETRY_AFTER: &str = "10";

/// Appends one server-sent event: `event: NAME` if named, the data (a serialized
/// JSON object, so one line; a line break would start another `data:` line), a blank
/// line.
fn push_event(out: &mut String, name: Option<&str>, data: &str) {
    if let Some(name) = name {
        out.push_str("event: ");
        out.push_str(name);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

fn push_lagged(out: &mut String, lost: u64) {
    push_event(out, Some("lagged"), &json!({ "lost": lost }).to_string());
}

/// Server-sent events: every record of every running set, as one JSON object per
/// event; `lagged` when this watcher lost events (it should read `/api/live` again).
///
/// It opens with a comment line, so that the answer's head is sent at once. One write
/// per wake-up: the events waiting for this watcher when it is polled go out
/// together (up to `BATCH_BYTES`), so a watcher that fell behind catches up in a few
/// writes instead of one write per event, and one that keeps up gets each event
/// alone, as soon as it is sent.
///
/// Each stream holds a slot of `app.live_slots` (in all and per client) while it is
/// open; past either bound the answer is 503 with `Retry-After`. Its connection is
/// marked live (`http::LiveSocket`): a small send buffer, a short stall limit.
pub(super) async fn events(
    State(live): State<LiveState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    socket: Option<Extension<LiveSocket>>,
) -> Response {
    let slots = &live.app.live_slots;
    let slot = match slots.try_take(peer.ip()) {
        Ok(slot) => slot,
        Err(full) => {
            let why = match full {
                Full::Total => format!(
                    "the server has {} live streams open, its most: try again later",
                    slots.total()
                ),
                Full::Client => format!(
                    "{} has {} live streams open, the most one address may: close one",
                    Client::of(peer.ip()),
                    slots.per_client()
                ),
            };
            let mut response = ApiError(StatusCode::SERVICE_UNAVAILABLE, why).into_response();
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(LIVE_RETRY_AFTER),
            );
            return response;
        }
    };
    // From its next write the connection has a live stream's small send buffer and
    // short stall limit (`http.rs`): a watcher that does not read costs the kernel
    // little, for a few seconds.
    if let Some(Extension(socket)) = socket {
        socket.mark();
    }
    let receiver = live.app.hub.subscribe();
    // A comment at once: the answer's head goes out now, not with the first event.
    let opening = futures_util::stream::once(std::future::ready(Ok::<_, Infallible>(
        Bytes::from_static(b":\n\n"),
    )));
    let stream = futures_util::stream::unfold(
        (receiver, live.shutdown.clone(), slot),
        |(mut receiver, mut shutdown, slot)| async move {
            let chunk = next_chunk(&mut receiver, &mut shutdown, KEEP_ALIVE).await?;
            Some((
                Ok::<_, Infallible>(Bytes::from(chunk)),
                (receiver, shutdown, slot),
            ))
        },
    );
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(opening.chain(stream)),
    )
        .into_response()
}

/// The live stream's next write: the first event to come, with every event already
/// waiting behind it (up to `BATCH_BYTES`); a keep-alive comment after `quiet` without
/// one; `None` when the server stops.
async fn next_chunk(
    receiver: &mut broadcast::Receiver<Arc<str>>,
    shutdown: &mut watch::Receiver<Option<&'static str>>,
    quiet: Duration,
) -> Option<String> {
    let mut out = String::new();
    tokio::select! {
        first = receiver.recv() => match first {
            Ok(text) => push_event(&mut out, None, &text),
            Err(RecvError::Lagged(lost)) => push_lagged(&mut out, lost),
            Err(RecvError::Closed) => return None,
        },
        _ = shutdown.wait_for(|s| s.is_some()) => return None,
        _ = tokio::time::sleep(quiet) => out.push_str(":\n\n"),
    }
    while out.len() < BATCH_BYTES {
        match receiver.try_recv() {
            Ok(text) => push_event(&mut out, None, &text),
            Err(TryRecvError::Lagged(lost)) => push_lagged(&mut out, lost),
            Err(TryRecvError::Empty | TryRecvError::Closed) => break,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_stream_sends_what_waits_in_one_write_and_says_what_was_lost() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let (tx, mut rx) = broadcast::channel::<Arc<str>>(4);
            let (stop_tx, mut stop) = watch::channel(None);
            let quiet = Duration::from_secs(3600);
            for n in 1..=3 {
                tx.send(Arc::from(format!("{{\"n\":{n}}}"))).expect("send");
            }
            assert_eq!(
                next_chunk(&mut rx, &mut stop, quiet).await.as_deref(),
                Some("data: {\"n\":1}\n\ndata: {\"n\":2}\n\ndata: {\"n\":3}\n\n")
            );
            // Six more into a channel of four: the two oldest are lost, and said so.
            for n in 4..=9 {
                tx.send(Arc::from(format!("{{\"n\":{n}}}"))).expect("send");
            }
            assert_eq!(
                next_chunk(&mut rx, &mut stop, quiet).await.as_deref(),
                Some(
                    "event: lagged\ndata: {\"lost\":2}\n\ndata: {\"n\":6}\n\ndata: {\"n\":7}\n\n\
                     data: {\"n\":8}\n\ndata: {\"n\":9}\n\n"
                )
            );
            assert_eq!(
                next_chunk(&mut rx, &mut stop, Duration::ZERO)
                    .await
                    .as_deref(),
                Some(":\n\n")
            );
            stop_tx.send(Some("test")).expect("stop");
            assert_eq!(next_chunk(&mut rx, &mut stop, quiet).await, None);
        });
    }
}
