//! `hus play --web BOT`: the person's seat driven from a browser page on loopback.
//!
//! The seat (`seat.rs`) hands this module the person's end of each link: the lines the
//! referee writes, protocol v1, exactly as a bot reads them. `drive` reads them into a
//! [`View`] (the game as the page needs it: the start, every move, the legal pits) and
//! answers `hello` with `ready` and each `turn` with the pit the page posted, so the
//! game goes through the same `play_set`, checks and log as `hus match`.
//!
//! The page (`assets/play.html`, `play.js`, `play.css`) draws the board with the replay
//! viewer's own `board.js` and `viewer.css` and computes every move with its `rules.js`
//! (served as files from `referee::viewer_assets`, not copied). It follows the view by
//! server-sent events rather than polling: the view is in a `watch` channel, so each
//! event is the whole latest view (a reconnect or a missed event loses nothing), the
//! bot's move shows as soon as it is made, and an idle page costs nothing. It posts a
//! clicked pit to `/api/move`.
//!
//! One tab plays: the seat belongs to the tab whose event stream is open (its random
//! `tab` id), and another tab is told so and retries until the first is closed. A move
//! is taken only from that tab, for the turn the referee is waiting on (`game`, `ply`),
//! and only a legal pit; anything else gets a JSON error that says what is wrong and
//! changes nothing. Bodies are bounded ([`MAX_BODY`]), the `Host` must be the address
//! served or a loopback name (`referee::web_host`: no DNS rebinding), a move must be sent as `application/json` (no form posts
//! from other sites), and every page has a restrictive Content-Security-Policy (only
//! this origin's scripts, styles and connections: no external asset, works offline).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::stream;
use protocol::{BotMessage, Outcome, RefereeMessage, Side};
use referee::web_host::AllowedHosts;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::seat::{PersonSeat, SeatEnd};
use crate::{PlayConfig, Seating};

/// Largest request body accepted (a move is about 60 bytes).
pub const MAX_BODY: usize = 1024;
/// How long the page has to receive the final view once the set is over, before the
/// process exits anyway.
const FINAL_GRACE: Duration = Duration::from_secs(5);

/// The page's policy: the dashboard's (only this origin's scripts, styles and
/// connections; no frames, forms, plugins or base element).
pub use referee::viewer_assets::PAGE_CSP as CSP;

const PLAY_HTML: &str = include_str!("../assets/play.html");
const PLAY_JS: &str = include_str!("../assets/play.js");
const PLAY_CSS: &str = include_str!("../assets/play.css");

/// What the page shows: the game as the seat has heard it. Sent whole on every change.
#[derive(Debug, Clone, Default, Serialize)]
pub struct View {
    /// Bumped on every change.
    pub seq: u64,
    /// Where the set is, for the page.
    pub phase: Phase,
    /// The opponent, as the page names it.
    pub bot: String,
    /// From `hello`.
    pub rules: Option<RulesView>,
    /// Games planned.
    pub games: u32,
    /// The time control, in words.
    pub time: String,
    /// The game being played (or the last one).
    pub game: Option<GameView>,
    /// Finished games, as their `result` messages told.
    pub results: Vec<ResultView>,
    /// The set's end, from `bye`.
    pub set: Option<SetView>,
    /// Something the person should know (the referee closed the seat...).
    pub note: Option<String>,
    /// The process is done with this view: no more changes; the page stops listening.
    pub closed: bool,
}

/// Where the set stands, as the page reads it (`view.phase`, and the body's
/// `data-phase`, in play.js).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// `starting`: before `hello`.
    #[default]
    Starting,
    /// `your-turn`: the referee waits on the person's move.
    YourTurn,
    /// `waiting`: the bot is to move, or between games.
    Waiting,
    /// `over`: `bye` received, the set is over.
    Over,
    /// `stopped`: hus play stopped before the set ended (Ctrl-C, SIGTERM, the set
    /// failed); `note` says why.
    Stopped,
}

impl Phase {
    /// Every phase, in the order play.js lists them.
    pub const ALL: [Phase; 5] = [
        Phase::Starting,
        Phase::Waiting,
        Phase::YourTurn,
        Phase::Over,
        Phase::Stopped,
    ];
}

/// The rules of the set, for `HusRules` and the board.
#[derive(Debug, Clone, Serialize)]
pub struct RulesView {
    /// `hus`, `rulebook` or `mancala-world`.
    pub preset: String,
    /// Pits per row.
    pub width: u32,
    /// `clockwise` or `anticlockwise`.
    pub sowing: String,
}

/// One game: the page plays `moves` from `start` with `rules.js`.
#[derive(Debug, Clone, Serialize)]
pub struct GameView {
    /// Game number, from 1.
    pub game: u32,
    /// Whether the person moves first.
    pub you_first: bool,
    /// The person's 2W pits and the bot's at the start, each in its own numbering.
    pub start: [Vec<u32>; 2],
    /// Every move so far, in order.
    pub moves: Vec<MoveView>,
    /// The board as the referee last sent it (the person's pits, the bot's): the page
    /// checks its own against it.
    pub board: [Vec<u32>; 2],
    /// The plies played on `board` (the person's move just posted is not on it yet).
    pub board_plies: u32,
    /// The turn the referee waits on, while it is the person's.
    pub turn: Option<TurnView>,
}

/// Who, on the page: the person or the bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Who {
    /// `you`: the person.
    You,
    /// `bot`: the bot.
    Bot,
}

/// One move.
#[derive(Debug, Clone, Serialize)]
pub struct MoveView {
    /// Who moved.
    pub by: Who,
    /// The pit, in the mover's numbering.
    pub pit: u32,
}

/// The person's turn.
#[derive(Debug, Clone, Serialize)]
pub struct TurnView {
    /// Plies played before it.
    pub ply: u32,
    /// The legal pits.
    pub legal: Vec<u32>,
    /// Milliseconds the referee gives the move.
    pub time_ms: u64,
}

/// A finished game.
#[derive(Debug, Clone, Serialize)]
pub struct ResultView {
    /// Game number.
    pub game: u32,
    /// `win`, `loss` or `draw`, for the person.
    pub outcome: Outcome,
    /// Why it ended (`no-moves`, `repetition`...).
    pub reason: String,
    /// The person's points and the bot's.
    pub points: [u32; 2],
    /// Plies played.
    pub plies: u32,
    /// Whose fault ended it, when one did.
    pub fault_by: Option<Who>,
    /// The fault, in words.
    pub detail: Option<String>,
}

/// The set's end.
#[derive(Debug, Clone, Serialize)]
pub struct SetView {
    /// `win`, `loss` or `draw`, for the person.
    pub outcome: Outcome,
    /// The person's points and the bot's.
    pub points: [u32; 2],
}

/// A move the page asked for, checked against the view, on its way to the referee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chosen {
    game: u32,
    ply: u32,
    pit: u32,
}

/// What the HTTP side shares.
struct Shared {
    view: watch::Sender<View>,
    moves: mpsc::UnboundedSender<Chosen>,
    /// The tab that holds the seat and how many event streams it has open.
    holder: Mutex<Option<(String, usize)>>,
    /// The `Host` values the page may be reached by (no DNS rebinding).
    hosts: AllowedHosts,
}

/// Changes the view and bumps its `seq` (every change is one).
fn update(view: &watch::Sender<View>, change: impl FnOnce(&mut View)) {
    view.send_modify(|v| {
        change(v);
        v.seq += 1;
    });
}

/// The person's side of the seat, over every link the seat hands out (`ends`): reads
/// the referee's lines into the view and answers `hello` with `ready` (as `name`) and
/// each `turn` with the move the page chose.
pub async fn drive(
    mut ends: mpsc::UnboundedReceiver<SeatEnd>,
    name: String,
    view: watch::Sender<View>,
    mut moves: mpsc::UnboundedReceiver<Chosen>,
) {
    while let Some(mut end) = ends.recv().await {
        loop {
            // Both branches are cancel-safe: a line is never half read.
            let message = tokio::select! {
                message = end.next() => message,
                Some(chosen) = moves.recv() => {
                    // A closed link is seen by the reader next.
                    let _ = end.send(&BotMessage::Move { pit: u64::from(chosen.pit) }).await;
                    continue;
                }
            };
            let message = match message {
                Some(Ok(message)) => message,
                // The referee never sends a line that is not a message: skip it.
                Some(Err(_)) => continue,
                None => break,
            };
            if let RefereeMessage::Hello(_) = &message {
                let ready = BotMessage::Ready {
                    name: Some(name.clone()),
                };
                if end.send(&ready).await.is_err() {
                    break;
                }
            }
            update(&view, |v| hear(v, message));
        }
        // The referee closed the link: after `bye`, or to restart the seat after a
        // fault (then a new link comes for the next game).
        update(&view, |v| {
            if v.phase != Phase::Over {
                v.phase = Phase::Waiting;
                if let Some(g) = &mut v.game {
                    g.turn = None;
                }
                v.note = Some(
                    "the referee closed your seat (a fault, such as running out of time): \
                     the game's result is in the log; the next game, if any, starts on its own"
                        .into(),
                );
            }
        });
    }
}

/// A wire name (`"hus"`, `"clockwise"`) as text.
fn wire<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "unknown".into(),
    }
}

/// One referee message, into the view.
fn hear(v: &mut View, message: RefereeMessage) {
    match message {
        RefereeMessage::Hello(h) => {
            v.rules = Some(RulesView {
                preset: wire(&h.rules.preset),
                width: h.rules.width,
                sowing: wire(&h.rules.sowing),
            });
            v.games = h.games;
            v.time = match h.time {
                // The person's own time: `NO_LIMIT` unless `--my-time`.
                protocol::TimeControl::PerMove { move_ms, .. }
                    if u128::from(move_ms) >= crate::NO_LIMIT.as_millis() =>
                {
                    "no time limit for you".into()
                }
                protocol::TimeControl::PerMove { move_ms, .. } => {
                    format!("your time: {move_ms} ms per move")
                }
                protocol::TimeControl::Clock {
                    base_ms,
                    increment_ms,
                    ..
                } => format!("your clock: {base_ms} ms + {increment_ms} ms per move"),
                protocol::TimeControl::Unknown => "unknown time control".into(),
            };
            if v.phase == Phase::Starting {
                v.phase = Phase::Waiting;
            }
        }
        RefereeMessage::Game(g) => {
            v.note = None;
            v.phase = Phase::Waiting;
            v.game = Some(GameView {
                game: g.game,
                you_first: g.first,
                start: [g.you.clone(), g.opponent.clone()],
                moves: Vec::new(),
                board: [g.you, g.opponent],
                board_plies: 0,
                turn: None,
            });
        }
        RefereeMessage::Turn(t) => {
            let Some(game) = v.game.as_mut().filter(|g| g.game == t.game) else {
                return;
            };
            // The bot moved since the person's last move: the one ply more.
            if t.ply as usize == game.moves.len() + 1 {
                if let Some(pit) = t.last {
                    game.moves.push(MoveView { by: Who::Bot, pit });
                }
            }
            game.board = [t.you, t.opponent];
            game.board_plies = t.ply;
            game.turn = Some(TurnView {
                ply: t.ply,
                legal: t.legal,
                time_ms: t.time_ms,
            });
            v.phase = Phase::YourTurn;
        }
        RefereeMessage::Result(r) => {
            if let Some(game) = v.game.as_mut().filter(|g| g.game == r.game) {
                // The bot's move ended the game.
                if r.plies as usize == game.moves.len() + 1 {
                    if let Some(pit) = r.last {
                        game.moves.push(MoveView { by: Who::Bot, pit });
                    }
                }
                game.board = [r.you.clone(), r.opponent.clone()];
                game.board_plies = r.plies;
                game.turn = None;
            }
            v.results.push(ResultView {
                game: r.game,
                outcome: r.outcome,
                reason: r.reason.to_string(),
                points: [r.points.you, r.points.opponent],
                plies: r.plies,
                fault_by: r.fault_by.map(|s| match s {
                    Side::You => Who::You,
                    Side::Opponent => Who::Bot,
                }),
                detail: r.detail,
            });
            v.phase = Phase::Waiting;
        }
        RefereeMessage::Bye(b) => {
            v.set = Some(SetView {
                outcome: b.outcome,
                points: [b.points.you, b.points.opponent],
            });
            v.phase = Phase::Over;
            if let Some(g) = &mut v.game {
                g.turn = None;
            }
        }
        RefereeMessage::Unknown => {}
    }
}

/// `hus play --web BOT`: serves the page on loopback, prints its address, and plays
/// the set with the person's seat driven from the page. Exit 0 when the set is played
/// to its end (the page has been sent the result; the process does not wait for
/// Ctrl-C), 130 when stopped by Ctrl-C or SIGTERM (the log then ends with `aborted`).
pub fn run(config: PlayConfig, listen: Option<&str>) -> Result<ExitCode> {
    let addr = listen_address(listen)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        tokio::spawn(play_in_browser(config, addr))
            .await
            .context("the set's task failed")?
    })
}

/// `--listen`, checked: a loopback address (the page has no password), default
/// 127.0.0.1 and a free port.
pub fn listen_address(listen: Option<&str>) -> Result<SocketAddr> {
    let Some(text) = listen else {
        return Ok(SocketAddr::from(([127, 0, 0, 1], 0)));
    };
    let addr: SocketAddr = text.parse().with_context(|| {
        format!("invalid --listen {text:?}: give an address and port, such as 127.0.0.1:8080")
    })?;
    if !addr.ip().is_loopback() {
        bail!(
            "--listen {text}: the page has no password, so it is served only on a loopback \
             address (127.0.0.1 or [::1])"
        );
    }
    Ok(addr)
}

async fn play_in_browser(config: PlayConfig, addr: SocketAddr) -> Result<ExitCode> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|error| referee::ListenError {
            addr,
            option: "--listen",
            error,
        })?;
    let (person_seat, ends) = PersonSeat::new("browser", &config.name);
    let Seating {
        lineups,
        mut log,
        stderr,
    } = crate::seat(&config, Arc::new(person_seat))?;
    let ui = WebUi::start(
        listener,
        crate::bot_short_name(&config.bot),
        &config.name,
        ends,
    )?;
    println!(
        "hus play: open http://{}/ in a browser to play (Ctrl-C stops)",
        ui.addr
    );
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let referee_name = referee::referee_version();
    let set = referee::play_set(&config.set, lineups.into(), &referee_name, &mut log);
    let stop = referee::stop_signal();
    let outcome = tokio::select! {
        result = set => Ok(result),
        signal = stop => Err(format!("stopped by {signal}")),
    };
    match outcome {
        Err(reason) => {
            log.end_aborted(reason.clone());
            ui.finish(Some(reason.clone())).await;
            eprintln!("hus play: {reason}; {}", log.stopped_words());
            Ok(ExitCode::from(130))
        }
        Ok(Ok(end)) => {
            ui.finish(None).await;
            let person = config.person_side();
            let said = match end.winner {
                Some(w) if w == person => "you won the set",
                Some(_) => "the bot won the set",
                None => "the set is drawn",
            };
            println!(
                "hus play: {said}, points you {} - {} bot; the log: {} (hus replay {} --html \
                 set.html makes it a page)",
                end.points[person],
                end.points[person.other()],
                log.path().display(),
                log.path().display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(e)) => {
            ui.finish(Some(e.to_string())).await;
            if e.nothing_played() {
                log.discard_unstarted(&[stderr]);
                return Err(
                    anyhow::Error::new(e).context("no game was played and no log was written")
                );
            }
            Err(anyhow::Error::new(e).context(format!(
                "the set did not finish; the log {} is incomplete",
                log.path().display()
            )))
        }
    }
}

/// The page's server and the seat's driver, while a set runs.
pub struct WebUi {
    /// Where the page is.
    pub addr: SocketAddr,
    view: watch::Sender<View>,
    stop: watch::Sender<bool>,
    http: tokio::task::JoinHandle<std::io::Result<()>>,
    driver: tokio::task::JoinHandle<()>,
}

impl WebUi {
    /// Serves the page on `listener` and drives the person's seat (answering `ready`
    /// as `name`) on the links of `ends`, against `bot`.
    pub fn start(
        listener: TcpListener,
        bot: String,
        name: &str,
        ends: mpsc::UnboundedReceiver<SeatEnd>,
    ) -> Result<WebUi> {
        let addr = listener
            .local_addr()
            .context("cannot read the listening address")?;
        let (view, _) = watch::channel(View {
            phase: Phase::Starting,
            bot,
            ..View::default()
        });
        let (moves_tx, moves_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            view: view.clone(),
            moves: moves_tx,
            holder: Mutex::new(None),
            hosts: AllowedHosts::new(addr, &[]).context("the page's hosts")?,
        });
        let (stop, mut stop_rx) = watch::channel(false);
        let app = router(shared);
        let http = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stop_rx.wait_for(|s| *s).await;
                })
                .await
        });
        let driver = tokio::spawn(drive(ends, name.to_string(), view.clone(), moves_rx));
        Ok(WebUi {
            addr,
            view,
            stop,
            http,
            driver,
        })
    }

    /// The set is over (or stopped, with `problem`): the page gets the final view, its
    /// event stream ends, and the server stops, within [`FINAL_GRACE`] each.
    pub async fn finish(self, problem: Option<String>) {
        // The seat's links are closed with the set: the driver reads what is left.
        let _ = tokio::time::timeout(FINAL_GRACE, self.driver).await;
        update(&self.view, |v| {
            if let Some(problem) = problem {
                v.note = Some(format!("the set stopped: {problem}"));
            }
            v.phase = if v.set.is_some() {
                Phase::Over
            } else {
                Phase::Stopped
            };
            if let Some(g) = &mut v.game {
                g.turn = None;
            }
            v.closed = true;
        });
        let _ = self.stop.send(true);
        // Graceful: the open event streams send the final view, then end.
        let _ = tokio::time::timeout(FINAL_GRACE, self.http).await;
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", PLAY_HTML)))
        .route(
            "/play.js",
            get(|| asset("text/javascript; charset=utf-8", PLAY_JS)),
        )
        .route(
            "/play.css",
            get(|| asset("text/css; charset=utf-8", PLAY_CSS)),
        )
        .route(
            "/rules.js",
            get(|| {
                asset(
                    "text/javascript; charset=utf-8",
                    referee::viewer_assets::RULES_JS,
                )
            }),
        )
        .route(
            "/board.js",
            get(|| {
                asset(
                    "text/javascript; charset=utf-8",
                    referee::viewer_assets::BOARD_JS,
                )
            }),
        )
        .route(
            "/viewer.css",
            get(|| {
                asset(
                    "text/css; charset=utf-8",
                    referee::viewer_assets::VIEWER_CSS,
                )
            }),
        )
        .route("/api/state", get(state))
        .route("/api/events", get(events))
        .route("/api/move", post(play_move))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such page".into()) })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        .with_state(shared)
}

/// Every response gets the security headers; a request for another `Host` is refused.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    let mut response = if shared.hosts.allows(host) {
        next.run(request).await
    } else {
        error(StatusCode::MISDIRECTED_REQUEST, shared.hosts.refusal(host))
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

async fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// An error as `{"error": "..."}`.
fn error(status: StatusCode, why: String) -> Response {
    (status, Json(json!({ "error": why }))).into_response()
}

async fn state(State(shared): State<Arc<Shared>>) -> Json<View> {
    Json(shared.view.borrow().clone())
}

#[derive(Deserialize)]
struct TabQuery {
    tab: Option<String>,
}

/// A tab's id: what the page makes with `crypto.getRandomValues`, 8 to 64 of
/// `[A-Za-z0-9_-]`.
fn tab_id(tab: Option<&str>) -> Result<&str, String> {
    let tab = tab.ok_or("no tab: give the page's tab id")?;
    let ok = (8..=64).contains(&tab.len())
        && tab
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(tab)
    } else {
        Err("the tab id must be 8 to 64 letters, digits, - or _".into())
    }
}

const TAKEN: &str = "this game is open in another tab or browser: play there, or close it \
     (this page takes the seat when the other one is gone)";

/// Releases a tab's hold on the seat when its event stream is dropped (the tab was
/// closed or reloaded: hyper drops the body when the connection goes).
struct Hold {
    shared: Arc<Shared>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut holder = self
            .shared
            .holder
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, streams)) = holder.as_mut() {
            *streams -= 1;
            if *streams == 0 {
                *holder = None;
            }
        }
    }
}

/// Server-sent events: the whole view now and on every change, until it is closed.
/// The stream takes the seat for its tab; another tab gets one `taken` event instead.
async fn events(
    State(shared): State<Arc<Shared>>,
    query: Result<Query<TabQuery>, QueryRejection>,
) -> Response {
    let q = match query {
        Ok(Query(q)) => q,
        Err(rejection) => return error(rejection.status(), rejection.body_text()),
    };
    let tab = match tab_id(q.tab.as_deref()) {
        Ok(tab) => tab.to_string(),
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let hold = {
        let mut holder = shared
            .holder
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match holder.as_mut() {
            Some((held, streams)) if *held == tab => *streams += 1,
            Some(_) => {
                let taken = stream::once(async {
                    Ok::<_, Infallible>(
                        Event::default()
                            .event("taken")
                            .data(json!({ "error": TAKEN }).to_string()),
                    )
                });
                return Sse::new(taken).into_response();
            }
            None => *holder = Some((tab, 1)),
        }
        Hold {
            shared: shared.clone(),
        }
    };
    let receiver = shared.view.subscribe();
    // (receiver, whether the last view sent was the final one, the hold)
    let views = stream::unfold(
        (receiver, true, false, hold),
        |(mut rx, first, done, hold)| async move {
            if done {
                return None;
            }
            if !first && rx.changed().await.is_err() {
                return None;
            }
            let view = rx.borrow_and_update().clone();
            let text = serde_json::to_string(&view).unwrap_or_default();
            let event = Ok::<_, Infallible>(Event::default().event("view").data(text));
            Some((event, (rx, false, view.closed, hold)))
        },
    );
    Sse::new(views)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(1)))
        .into_response()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    tab: String,
    game: u32,
    ply: u32,
    pit: u32,
}

/// `POST /api/move {"tab", "game", "ply", "pit"}`: the person's move for the turn the
/// referee waits on.
async fn play_move(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return error(
                rejection.status(),
                format!(
                    "the move's body could not be read (at most {MAX_BODY} bytes): {rejection}"
                ),
            )
        }
    };
    match check_move(&shared, &headers, &body) {
        Ok(chosen) => {
            if shared.moves.send(chosen).is_err() {
                return error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the set is over: no more moves".into(),
                );
            }
            (
                StatusCode::OK,
                Json(json!({ "ok": format!("pit {} played", chosen.pit) })),
            )
                .into_response()
        }
        Err((status, why)) => error(status, why),
    }
}

fn check_move(
    shared: &Shared,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Chosen, (StatusCode, String)> {
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_type {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the move as Content-Type: application/json".into(),
        ));
    }
    let request: MoveRequest = serde_json::from_slice(body).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            format!(
                "the move must be JSON {{\"tab\": ID, \"game\": N, \"ply\": N, \"pit\": N}}: {e}"
            ),
        )
    })?;
    let tab = tab_id(Some(&request.tab)).map_err(|why| (StatusCode::BAD_REQUEST, why))?;
    {
        let holder = shared
            .holder
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match holder.as_ref() {
            Some((held, _)) if held == tab => {}
            Some(_) => return Err((StatusCode::CONFLICT, TAKEN.into())),
            None => {
                return Err((
                    StatusCode::CONFLICT,
                    "this tab does not hold the seat: reload the page".into(),
                ))
            }
        }
    }
    let mut outcome = Err((StatusCode::CONFLICT, String::new()));
    shared.view.send_if_modified(|v| {
        outcome = take_move(v, &request);
        if outcome.is_ok() {
            v.seq += 1;
        }
        outcome.is_ok()
    });
    outcome
}

/// Checks a move against the view and, when it is the one awaited, records it.
fn take_move(v: &mut View, request: &MoveRequest) -> Result<Chosen, (StatusCode, String)> {
    let conflict = |why: String| Err((StatusCode::CONFLICT, why));
    let Some(game) = v.game.as_mut() else {
        return conflict("no game has started yet".into());
    };
    let Some(turn) = game.turn.as_ref() else {
        return conflict(match v.phase {
            Phase::Over | Phase::Stopped => "the set is over".into(),
            Phase::Starting | Phase::YourTurn | Phase::Waiting => {
                "it is not your turn: wait for the bot's move".into()
            }
        });
    };
    if request.game != game.game || request.ply != turn.ply {
        return conflict(format!(
            "this move is for game {} ply {}, but the referee waits on game {} ply {}: \
             the page was behind, look again",
            request.game, request.ply, game.game, turn.ply
        ));
    }
    if !turn.legal.contains(&request.pit) {
        let legal: Vec<String> = turn.legal.iter().map(u32::to_string).collect();
        return Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "pit {} is not a legal move: the legal pits are {}",
                request.pit,
                legal.join(", ")
            ),
        ));
    }
    game.turn = None;
    game.moves.push(MoveView {
        by: Who::You,
        pit: request.pit,
    });
    v.phase = Phase::Waiting;
    Ok(Chosen {
        game: request.game,
        ply: request.ply,
        pit: request.pit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_sent_as_play_js_lists_them() {
        let wire: Vec<String> = Phase::ALL
            .iter()
            .map(|p| serde_json::to_string(p).expect("serialize"))
            .collect();
        assert_eq!(
            wire,
            [
                "\"starting\"",
                "\"waiting\"",
                "\"your-turn\"",
                "\"over\"",
                "\"stopped\""
            ]
        );
        assert_eq!(View::default().phase, Phase::Starting);
        // Who moved, and whose fault ended a game, as play.js reads them.
        assert_eq!(
            [Who::You, Who::Bot].map(|w| serde_json::to_string(&w).expect("serialize")),
            ["\"you\"", "\"bot\""]
        );
        assert_eq!(
            [Outcome::Win, Outcome::Loss, Outcome::Draw]
                .map(|o| serde_json::to_string(&o).expect("serialize")),
            ["\"win\"", "\"loss\"", "\"draw\""]
        );
        // play.js's opening comment lists the values of data-phase: exactly these.
        let listed = PLAY_JS
            .split("data-phase (")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .expect("play.js lists the phases");
        let listed: Vec<String> = listed
            .split(',')
            .map(|p| format!("\"{}\"", p.trim().trim_start_matches("//").trim()))
            .collect();
        assert_eq!(listed, wire);
    }

    fn view_with_turn() -> View {
        let mut v = View::default();
        hear(
            &mut v,
            RefereeMessage::Game(protocol::GameStart {
                game: 1,
                first: true,
                you: vec![2; 16],
                opponent: vec![2; 16],
                order: None,
                opponent_order: None,
            }),
        );
        hear(
            &mut v,
            RefereeMessage::Turn(protocol::Turn {
                game: 1,
                ply: 0,
                you: vec![2; 16],
                opponent: vec![2; 16],
                legal: vec![4, 5, 6],
                last: None,
                time_ms: 1000,
                opponent_time_ms: None,
            }),
        );
        v
    }

    fn request(game: u32, ply: u32, pit: u32) -> MoveRequest {
        MoveRequest {
            tab: "tab-12345".into(),
            game,
            ply,
            pit,
        }
    }

    #[test]
    fn only_a_legal_pit_for_the_awaited_turn_is_taken_once() {
        let mut v = view_with_turn();
        assert_eq!(v.phase, Phase::YourTurn);
        let (status, why) = take_move(&mut v, &request(1, 0, 3)).unwrap_err();
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(why, "pit 3 is not a legal move: the legal pits are 4, 5, 6");
        let (status, why) = take_move(&mut v, &request(1, 2, 4)).unwrap_err();
        assert_eq!(status, StatusCode::CONFLICT);
        assert!(
            why.starts_with("this move is for game 1 ply 2, but the referee waits on game 1 ply 0")
        );
        // Nothing was lost: the turn is still open.
        assert_eq!(v.phase, Phase::YourTurn);
        assert_eq!(
            take_move(&mut v, &request(1, 0, 5)),
            Ok(Chosen {
                game: 1,
                ply: 0,
                pit: 5
            })
        );
        assert_eq!(v.phase, Phase::Waiting);
        let (status, why) = take_move(&mut v, &request(1, 0, 5)).unwrap_err();
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(why, "it is not your turn: wait for the bot's move");
        let moves: Vec<_> = v
            .game
            .iter()
            .flat_map(|g| &g.moves)
            .map(|m| (m.by, m.pit))
            .collect();
        assert_eq!(moves, [(Who::You, 5)]);
    }

    #[test]
    fn the_bots_moves_are_read_from_turn_and_result() {
        let mut v = view_with_turn();
        take_move(&mut v, &request(1, 0, 4)).expect("legal");
        hear(
            &mut v,
            RefereeMessage::Turn(protocol::Turn {
                game: 1,
                ply: 2,
                you: vec![1; 16],
                opponent: vec![3; 16],
                legal: vec![7],
                last: Some(9),
                time_ms: 1000,
                opponent_time_ms: None,
            }),
        );
        take_move(&mut v, &request(1, 2, 7)).expect("legal");
        let moves = |v: &View| -> Vec<(Who, u32)> {
            v.game
                .iter()
                .flat_map(|g| &g.moves)
                .map(|m| (m.by, m.pit))
                .collect()
        };
        assert_eq!(moves(&v), [(Who::You, 4), (Who::Bot, 9), (Who::You, 7)]);
        // The bot's reply ended the game: the result's `last` is its move.
        let result = |plies, last| {
            RefereeMessage::Result(protocol::GameResult {
                game: 1,
                outcome: Outcome::Loss,
                reason: protocol::Reason::NoMoves,
                points: protocol::Points {
                    you: 0,
                    opponent: 2,
                },
                last: Some(last),
                you: vec![0; 16],
                opponent: vec![4; 16],
                plies,
                fault_by: None,
                detail: None,
            })
        };
        let mut ended_by_bot = v.clone();
        hear(&mut ended_by_bot, result(4, 12));
        assert_eq!(
            moves(&ended_by_bot),
            [(Who::You, 4), (Who::Bot, 9), (Who::You, 7), (Who::Bot, 12)]
        );
        assert_eq!(ended_by_bot.results[0].outcome, Outcome::Loss);
        assert_eq!(ended_by_bot.results[0].points, [0, 2]);
        // The person's own move ended it: nothing is added.
        hear(&mut v, result(3, 7));
        assert_eq!(moves(&v), [(Who::You, 4), (Who::Bot, 9), (Who::You, 7)]);
    }

    #[test]
    fn the_page_is_served_only_on_loopback() {
        assert_eq!(
            listen_address(None).expect("default"),
            SocketAddr::from(([127, 0, 0, 1], 0))
        );
        assert_eq!(
            listen_address(Some("[::1]:8080")).expect("loopback").port(),
            8080
        );
        let refused = listen_address(Some("0.0.0.0:8080")).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "--listen 0.0.0.0:8080: the page has no password, so it is served only on a \
             loopback address (127.0.0.1 or [::1])"
        );
        let bad = listen_address(Some("localhost")).unwrap_err();
        assert!(
            bad.to_string()
                .starts_with("invalid --listen \"localhost\""),
            "{bad}"
        );
    }

    #[test]
    fn tab_ids_are_checked() {
        assert_eq!(tab_id(Some("abcdEFGH-_12")), Ok("abcdEFGH-_12"));
        for bad in ["short", "has space 1234", "semi;colon12", &"x".repeat(65)] {
            assert!(tab_id(Some(bad)).is_err(), "{bad}");
        }
        assert!(tab_id(None).is_err());
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for source in [PLAY_HTML, PLAY_JS, PLAY_CSS] {
            assert_eq!(referee::viewer_assets::loads_from_elsewhere(source), None);
        }
        // No inline script, style or handler: the policy would refuse them.
        for word in ["<script>", "<style", " style=", " onclick=", " onload="] {
            assert!(
                !PLAY_HTML.contains(word),
                "play.html must not hold {word:?}"
            );
        }
    }
}
