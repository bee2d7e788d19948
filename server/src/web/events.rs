//! The live streams (`/api/live/events`, server-sent events) from `crate::live::Hub`,
//! bounded in all and per client (`crate::capacity`), each at a cost that does not grow
//! with the league's speed:
//!
//! - the dashboard's (no query): every `live::BOARD_EVERY` the cards of the sets the
//!   strip shows that changed (the latest state of each replaces one not sent) and a
//!   `set-over` for those that ended; every `live::PAGE_EVERY` the pages' events;
//! - one set's (`?set=STEM`, the live view): every record of that set in order, after
//!   a `live-set` event with the set so far; `set-over` when it ends, and the stream
//!   ends; for a set that is over, its `set-over`, and for one this server does not
//!   play, an `unknown-set` event, then the end.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures_util::{Stream, StreamExt as _};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, watch};
use tokio::time::{Interval, MissedTickBehavior};

use crate::capacity::{Client, Full};
use crate::error::ApiError;
use crate::http::LiveSocket;
use crate::live::{push_event, Cursor, Follow, Hub, BOARD_EVERY, PAGE_EVERY};
use crate::state::AppState;

#[derive(Clone)]
pub(super) struct LiveState {
    pub(super) app: Arc<AppState>,
    pub(super) shutdown: watch::Receiver<Option<&'static str>>,
}

/// The live stream's query: `set`, the one set to follow (the live view).
#[derive(Debug, Deserialize)]
pub(super) struct LiveQuery {
    set: Option<String>,
}

/// Bytes of events one write of a set's stream carries at most.
const BATCH_BYTES: usize = 64 * 1024;
/// A comment line keeps a quiet live stream open through proxies.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Seconds a refused live stream is told to wait (`Retry-After`).
const LIVE_RETRY_AFTER: &str = "10";
/// Longest set name a stream is asked to follow: longer is no set's (400).
const MAX_SET_NAME: usize = 512;

type Shutdown = watch::Receiver<Option<&'static str>>;

fn push_lagged(out: &mut String, lost: u64) {
    push_event(out, Some("lagged"), &json!({ "lost": lost }).to_string());
}

/// Server-sent events: the dashboard's stream, or with `?set=STEM` one set's (the
/// module's doc says what each carries). Each opens with a comment line, so that the
/// answer's head is sent at once.
///
/// Each stream holds a slot of `app.live_slots` (in all and per client) while it is
/// open; past either bound the answer is 503 with `Retry-After`. Its connection is
/// marked live (`http::LiveSocket`): a small send buffer, a short stall limit.
pub(super) async fn events(
    State(live): State<LiveState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(query): Query<LiveQuery>,
    socket: Option<Extension<LiveSocket>>,
) -> Response {
    if query.set.as_ref().is_some_and(|s| s.len() > MAX_SET_NAME) {
        return ApiError(
            StatusCode::BAD_REQUEST,
            format!("no set has a name of more than {MAX_SET_NAME} bytes"),
        )
        .into_response();
    }
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
    let hub = live.app.hub.clone();
    let held = (slot, hub.watching());
    let body = match query.set {
        Some(set) => set_stream(&hub, &set, live.shutdown.clone()).boxed(),
        None => dashboard_stream(hub, live.shutdown.clone()).boxed(),
    };
    // The slot and the count of watchers are held as long as the body is.
    let body = body.map(move |chunk| {
        let _ = &held;
        Ok::<_, Infallible>(Bytes::from(chunk))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// The dashboard's stream: an opening comment, then [`Dashboard::next_write`]'s
/// writes until the server stops.
fn dashboard_stream(hub: Arc<Hub>, shutdown: Shutdown) -> impl Stream<Item = String> {
    let opening = futures_util::stream::once(std::future::ready(":\n\n".to_string()));
    let dashboard = Dashboard::new(hub, shutdown);
    opening.chain(futures_util::stream::unfold(
        dashboard,
        |mut d| async move {
            let chunk = d.next_write().await?;
            Some((chunk, d))
        },
    ))
}

/// A dashboard stream's state: what it has sent, its clock.
pub(crate) struct Dashboard {
    hub: Arc<Hub>,
    cursor: Cursor,
    ticks: Interval,
    /// Ticks so far: the pages' events go with every `PAGE_EVERY / BOARD_EVERY`th.
    tick: u64,
    /// Ticks since the last write.
    quiet: u32,
    shutdown: Shutdown,
}

impl Dashboard {
    /// A stream that has sent nothing yet: its first tick is at once.
    pub(crate) fn new(hub: Arc<Hub>, shutdown: Shutdown) -> Dashboard {
        let mut ticks = tokio::time::interval(BOARD_EVERY);
        // A stream whose writes wait (a slow reader) is not owed the ticks it missed:
        // its next write has the state of then, whole.
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Dashboard {
            cursor: hub.cursor(),
            hub,
            ticks,
            tick: 0,
            quiet: 0,
            shutdown,
        }
    }

    /// The next write: what changed at the next tick with a change (the first tick at
    /// once); a keep-alive comment after `KEEP_ALIVE` without one; `None` when the
    /// server stops.
    pub(crate) async fn next_write(&mut self) -> Option<String> {
        let page_ticks = (PAGE_EVERY.as_millis() / BOARD_EVERY.as_millis()).max(1) as u64;
        let quiet_ticks = (KEEP_ALIVE.as_millis() / BOARD_EVERY.as_millis()).max(1) as u32;
        loop {
            tokio::select! {
                _ = self.ticks.tick() => {}
                _ = self.shutdown.wait_for(|s| s.is_some()) => return None,
            }
            let mut out = String::new();
            self.hub.boards(&mut self.cursor, &mut out);
            if self.tick.is_multiple_of(page_ticks) {
                self.hub.pages(&mut self.cursor, &mut out);
            }
            self.tick += 1;
            if !out.is_empty() {
                self.quiet = 0;
                return Some(out);
            }
            self.quiet += 1;
            if self.quiet >= quiet_ticks {
                self.quiet = 0;
                return Some(":\n\n".to_string());
            }
        }
    }
}

/// One set's stream: an opening comment with the set so far (`live-set`), then every
/// event of the set until it ends; or, for a set not running, one event that says
/// how it ended or that it is unknown, and the end.
fn set_stream(hub: &Hub, set: &str, shutdown: Shutdown) -> impl Stream<Item = String> {
    let mut opening = ":\n\n".to_string();
    let receiver = match hub.follow(set) {
        Follow::Running(first, receiver) => {
            push_event(&mut opening, None, &first);
            Some(receiver)
        }
        Follow::Ended(text) => {
            push_event(&mut opening, None, &text);
            None
        }
        Follow::Unknown(text) => {
            push_event(&mut opening, None, &text);
            None
        }
    };
    let opening = futures_util::stream::once(std::future::ready(opening));
    let rest = futures_util::stream::unfold(
        (receiver, shutdown),
        |(receiver, mut shutdown)| async move {
            let mut receiver = receiver?;
            let chunk = next_chunk(&mut receiver, &mut shutdown, KEEP_ALIVE).await?;
            Some((chunk, (Some(receiver), shutdown)))
        },
    );
    opening.chain(rest)
}

/// A set stream's next write: the first event to come, with every event already
/// waiting behind it (up to `BATCH_BYTES`); a keep-alive comment after `quiet` without
/// one; `None` when the set is over (its channel closed, after its `set-over`) or the
/// server stops.
async fn next_chunk(
    receiver: &mut broadcast::Receiver<Arc<str>>,
    shutdown: &mut Shutdown,
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
    use std::collections::{BTreeMap, VecDeque};

    use serde_json::Value;
    use tokio::time::Instant;

    use super::*;
    use crate::live::made_up::{game_end, game_start, header, move_record};

    /// The events of what a stream wrote, parsed (comments left out).
    fn events_of(text: &str) -> Vec<Value> {
        text.split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).expect("an event's JSON"))
            .collect()
    }

    /// Everything a stream writes until it ends.
    async fn written(stream: impl Stream<Item = String>) -> String {
        stream.collect::<Vec<String>>().await.concat()
    }

    #[test]
    fn a_set_stream_sends_what_waits_in_one_write_and_says_what_was_lost() {
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

    /// A league far faster than any watcher: from 1 ms, every 5 ms a set starts (200 a
    /// second), every running set is sent 5 moves, and the oldest of 11 ends (200 sets
    /// finish a second, each with its result, its bots' standings rows and a new status
    /// line; 11,000 moves a second reach the hub). One dashboard stream over the 10 s
    /// from 2 s to 12 s (40 writes at its 250 ms ticks, 10 of them with the pages'
    /// events) writes exactly: at each tick the cards of the 8 oldest running sets (all
    /// changed) and the `set-over` of the 8 it showed before (all ended since); each
    /// second the newest 4 finished sets besides, the newest 4 results, one standings
    /// event and one status line. No `move` event, and at most 21 KB a second.
    #[tokio::test(start_paused = true)]
    async fn a_dashboard_stream_writes_a_bounded_count_whatever_the_leagues_speed() {
        const STEP: Duration = Duration::from_millis(5);
        const STEPS: u32 = 2800; // 14 s
        const MOVES: u32 = 5;
        const RUNNING: usize = 10;
        let hub = Arc::new(Hub::new());
        let (_stop, shutdown) = watch::channel(None);
        let started = Instant::now();
        let league = {
            let hub = hub.clone();
            tokio::spawn(async move {
                let mut running: VecDeque<(String, u32)> = VecDeque::new();
                let mut finished = 0u64;
                for step in 0..STEPS {
                    tokio::time::sleep_until(started + Duration::from_millis(1) + STEP * step)
                        .await;
                    let set = format!("r{step}-a-vs-b");
                    hub.started(&set, ["a".into(), "b".into()]);
                    hub.record(&set, &header(1));
                    hub.record(&set, &game_start(1));
                    running.push_back((set, 0));
                    for (set, ply) in running.iter_mut() {
                        for _ in 0..MOVES {
                            hub.record(set, &move_record(1, *ply, 0.5));
                            *ply += 1;
                        }
                    }
                    if running.len() > RUNNING {
                        let Some((set, plies)) = running.pop_front() else {
                            continue;
                        };
                        hub.record(&set, &game_end(1, plies));
                        hub.ended(&set, "finished");
                        finished += 1;
                        let row = format!("<tr data-set=\"{set}\"><td>{finished}</td></tr>");
                        let result = json!({"type": "result", "set": set, "number": finished,
                                            "bots": ["a", "b"], "winner": "b", "faulted": [],
                                            "row": row});
                        hub.result(finished, &result);
                        let rows = ["a", "b"]
                            .map(|bot| {
                                let row =
                                    format!("<tr data-bot=\"{bot}\"><td>{finished}</td></tr>");
                                (bot.to_string(), row)
                            })
                            .to_vec();
                        hub.standings(rows, vec!["b".into(), "a".into()]);
                        hub.status(format!("{RUNNING} running, {finished} sets played"));
                    }
                }
            })
        };
        let mut stream = Dashboard::new(hub.clone(), shutdown);
        let (mut writes, mut text) = (0, String::new());
        loop {
            let write = stream.next_write().await.expect("a write");
            let at = started.elapsed();
            if at >= Duration::from_secs(12) {
                break;
            }
            if at >= Duration::from_secs(2) {
                writes += 1;
                text.push_str(&write);
            }
        }
        league.abort();
        let events = events_of(&text);
        let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
        for e in &events {
            *by_type
                .entry(e["type"].as_str().unwrap_or("?").to_string())
                .or_default() += 1;
        }
        assert_eq!(writes, 40);
        assert_eq!(
            by_type,
            BTreeMap::from([
                ("card".to_string(), 320),
                ("result".to_string(), 40),
                ("set-over".to_string(), 360),
                ("standings".to_string(), 10),
                ("status".to_string(), 10),
            ]),
            "{text}"
        );
        // Each card the set's latest state: its ply, its board, its clocks.
        let card = events.iter().find(|e| e["type"] == "card").expect("a card");
        let ply = card["ply"].as_u64().expect("ply");
        assert!(ply > 0 && ply % u64::from(MOVES) == 0, "{card}");
        assert_eq!(card["board"]["width"], 8, "{card}");
        assert_eq!(card["games_planned"], 1, "{card}");
        assert!(card["clocks"][0].as_f64().is_some(), "{card}");
        eprintln!("{} bytes in 10 s: {} a second", text.len(), text.len() / 10);
        assert!(text.len() <= 10 * 21_000, "{} bytes in 10 s", text.len());
    }

    /// A stream that follows one set (`?set=`): the set so far (its current game's
    /// records), then every one of its moves in order and none of the other set's, its
    /// `set-over` with the score, and the end of the stream.
    #[tokio::test(start_paused = true)]
    async fn a_set_stream_gets_every_move_of_its_set_in_order_and_none_of_another() {
        let hub = Arc::new(Hub::new());
        let (_stop, shutdown) = watch::channel(None);
        for set in ["one", "two"] {
            hub.started(set, ["a".into(), "b".into()]);
            hub.record(set, &header(1));
            hub.record(set, &game_start(1));
        }
        for ply in 0..3 {
            hub.record("one", &move_record(1, ply, 1.0));
        }
        let stream = set_stream(&hub, "one", shutdown);
        for ply in 3..203 {
            hub.record("two", &move_record(1, ply, 1.0));
            hub.record("one", &move_record(1, ply, 1.0));
        }
        hub.record("one", &game_end(1, 203));
        hub.ended("one", "finished");
        hub.record("two", &move_record(1, 203, 1.0));
        let events = events_of(&written(stream).await);
        let first = &events[0];
        assert_eq!(
            (&first["type"], &first["set"]),
            (&json!("live-set"), &json!("one"))
        );
        let kept: Vec<(&Value, &Value)> = first["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| (&e["type"], &e["ply"]))
            .collect();
        assert_eq!(
            kept,
            [
                (&json!("game-start"), &Value::Null),
                (&json!("move"), &json!(0)),
                (&json!("move"), &json!(1)),
                (&json!("move"), &json!(2))
            ]
        );
        let moves: Vec<u64> = events[1..]
            .iter()
            .filter(|e| e["type"] == "move")
            .map(|e| e["ply"].as_u64().expect("ply"))
            .collect();
        assert_eq!(moves, (3..203).collect::<Vec<u64>>());
        assert!(events[1..].iter().all(|e| e["set"] == "one"));
        // With the clock each move leaves: 60 s + 1 s a move, 1 ms a move taken (A
        // played plies 0, 2, ..., 202: 102 moves; B 101).
        let last = events
            .iter()
            .rev()
            .find(|e| e["type"] == "move")
            .expect("a move");
        assert_eq!(
            last["clocks"],
            json!([60000.0 + 102.0 * 999.0, 60000.0 + 101.0 * 999.0])
        );
        let over = events.last().expect("an end");
        assert_eq!(
            (&over["type"], &over["how"], &over["points"]),
            (&json!("set-over"), &json!("finished"), &json!([0, 2]))
        );
        assert_eq!(events.len(), 1 + 200 + 1 + 1, "{events:?}");
    }

    /// A stream asked for a set that is over says how it ended; for a set this server
    /// is not playing, that it does not know it; each then ends, without waiting.
    #[tokio::test(start_paused = true)]
    async fn a_set_that_ended_or_is_unknown_is_answered_with_one_event_and_the_end() {
        let hub = Arc::new(Hub::new());
        let (_stop, shutdown) = watch::channel(None);
        let unknown = written(set_stream(&hub, "r9-x-vs-y", shutdown.clone())).await;
        let events = events_of(&unknown);
        assert!(unknown.starts_with(":\n\n"), "{unknown}");
        assert_eq!(events.len(), 1, "{unknown}");
        assert_eq!(
            (&events[0]["type"], &events[0]["set"]),
            (&json!("unknown-set"), &json!("r9-x-vs-y"))
        );
        hub.started("r9-x-vs-y", ["x".into(), "y".into()]);
        hub.record("r9-x-vs-y", &header(1));
        hub.record("r9-x-vs-y", &game_start(1));
        hub.record("r9-x-vs-y", &game_end(1, 0));
        hub.ended("r9-x-vs-y", "finished");
        let events = events_of(&written(set_stream(&hub, "r9-x-vs-y", shutdown)).await);
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(
            (
                &events[0]["type"],
                &events[0]["how"],
                &events[0]["bots"],
                &events[0]["points"]
            ),
            (
                &json!("set-over"),
                &json!("finished"),
                &json!(["x", "y"]),
                &json!([0, 2])
            )
        );
    }
}
