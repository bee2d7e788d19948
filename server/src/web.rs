//! The dashboard and the JSON API (docs/api.md): the routes, the security headers and
//! the request limits that do not belong to the connection (`http.rs` has those).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Component, Path as FsPath, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use base64::Engine as _;
use futures_util::{FutureExt, StreamExt as _};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, oneshot, watch};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;

use crate::capacity::{Client, Full};
use crate::http::LiveSocket;
use crate::state::{AppState, Command, SetView};
use crate::{admin, download, html, pages};

/// Largest request body accepted (admin requests carry none).
pub const MAX_BODY: usize = 16 * 1024;
/// Time a request other than the live stream may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Moves a replay page may hold, by default (`hus serve --max-page-moves`).
pub const MAX_PAGE_MOVES: u64 = 200_000;
/// Sets one list returns at most.
const MAX_LIST: usize = 500;

/// The pages' policy: only this origin's scripts, styles and connections; no frames,
/// no forms, no plugins, no base element (the same for every page `hus` serves).
pub use referee::viewer_assets::PAGE_CSP as CSP;

const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");
/// The pages' icon (a board of six pits), at `/favicon.svg` and `/favicon.ico`.
const FAVICON: &str = include_str!("../assets/favicon.svg");

/// The whole application: dashboard, API, live stream. `shutdown` ends live streams.
/// Every request must be for one of `app.hosts` (421 otherwise), and carry its peer as
/// `ConnectInfo<SocketAddr>` (`http::serve` puts it there).
pub fn router(app: Arc<AppState>, shutdown: watch::Receiver<Option<&'static str>>) -> Router {
    let timed = Router::new()
        .route("/", get(html::standings_page))
        .route("/bots/{name}", get(html::bot_page))
        .route("/sets", get(html::archive_page))
        .route("/sets/{set}", get(html::set_page))
        .route("/favicon.svg", get(favicon))
        .route("/favicon.ico", get(favicon))
        .route("/workers", get(html::workers_page))
        .route("/app.js", get(app_js))
        .route("/app.css", get(app_css))
        .route("/board.js", get(board_js))
        .route("/sets/{set}/replay", get(replay))
        .route("/api/status", get(status))
        .route("/api/standings", get(standings))
        .route("/api/bots", get(bots))
        .route("/api/bots/{name}", get(bot))
        .route("/api/sets", get(sets))
        .route("/api/sets/{set}", get(one_set))
        .route("/api/sets/{set}/log", get(set_log))
        .route("/api/logs/{file}", get(log_file))
        .route("/api/live", get(live))
        .route("/api/workers", get(workers))
        .route("/api/history", get(history))
        .route("/api/admin/pause", post(pause))
        .route("/api/admin/resume", post(resume))
        .route("/api/admin/bots/{name}/add", post(add_bot))
        .route("/api/admin/bots/{name}/remove", post(remove_bot))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    let live = Router::new()
        .route("/api/live/events", get(events))
        .with_state(LiveState {
            app: app.clone(),
            shutdown,
        });
    timed
        .with_state(app.clone())
        .merge(live)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(app, check_host))
        .layer(RequestBodyLimitLayer::new(MAX_BODY))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
}

/// An API error: a status and a sentence, as `{"error": "..."}`.
#[derive(Clone, Debug)]
pub struct ApiError(StatusCode, String);

impl ApiError {
    /// An error of status `status` that says `what`.
    pub fn new(status: StatusCode, what: impl Into<String>) -> ApiError {
        ApiError(status, what.into())
    }

    /// What it says.
    pub fn what(&self) -> &str {
        &self.1
    }

    /// Its status.
    pub fn status(&self) -> StatusCode {
        self.0
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

/// A request for a `Host` this server does not answer to (DNS rebinding, or a name not
/// given with `--allowed-host`) gets 421 and a sentence.
async fn check_host(State(app): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    if app.hosts.allows(host) {
        return next.run(request).await;
    }
    ApiError(
        StatusCode::MISDIRECTED_REQUEST,
        format!(
            "{}; give hus serve the name it is reached by with --allowed-host NAME",
            app.hosts.refusal(host)
        ),
    )
    .into_response()
}

fn not_found_error(what: String) -> ApiError {
    ApiError(StatusCode::NOT_FOUND, what)
}

async fn not_found() -> ApiError {
    not_found_error("no such page: see docs/api.md for the API".into())
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

/// `HusBoard`, the replay viewer's board drawing (`referee/src/replay/board.js`): the
/// dashboard draws the live games with it.
async fn board_js() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        referee::viewer_assets::BOARD_JS,
    )
}

async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

async fn favicon() -> Response {
    asset("image/svg+xml", FAVICON)
}

/// The sets numbered after `after`, oldest first, at most `limit`: the page of the
/// archive before the one that starts at `after + 1`.
pub(crate) async fn newer_page(
    app: &AppState,
    after: u64,
    limit: usize,
) -> Result<Vec<SetView>, ApiError> {
    set_page(app, league::FinishedQuery::After { after, limit }).await
}

/// A page of the sets in which `bot` faulted, newest first, numbered below `before`.
pub(crate) async fn faulted_page(
    app: &AppState,
    bot: &str,
    before: Option<u64>,
    limit: usize,
) -> Result<Vec<SetView>, ApiError> {
    let query = league::FinishedQuery::Faulted {
        bot: bot.to_string(),
        before,
        limit,
    };
    set_page(app, query).await
}

async fn status(State(app): State<Arc<AppState>>) -> Json<Value> {
    let s = app.snapshot();
    Json(json!({
        "paused": s.paused,
        "low_space": s.low_space,
        "concurrency": app.concurrency,
        "running": app.hub.running(),
        "sets_running": s.standings.progress.sets_running,
        "sets_done": s.standings.progress.sets_done + s.standings.progress.sets_done_elsewhere,
        "started_this_run": s.started,
        "finished_this_run": s.finished,
        "removed": s.removed,
        "problems": s.problems,
        "watchers": app.hub.watchers(),
        "remote": app.remote.as_ref().map(|r| r.connected()).unwrap_or_default()
            .into_iter().map(|(bot, n)| json!({"bot": bot, "connections": n})).collect::<Vec<_>>(),
        "uptime_s": app.started.elapsed().as_secs(),
    }))
}

async fn standings(State(app): State<Arc<AppState>>) -> Json<Value> {
    Json(serde_json::to_value(&app.snapshot().standings).unwrap_or(Value::Null))
}

async fn bots(State(app): State<Arc<AppState>>) -> Json<Value> {
    Json(serde_json::to_value(&app.snapshot().standings.bots).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<usize>,
    /// Sets numbered below this one: the next page after a set of that number.
    before: Option<u64>,
    /// `/api/sets`: only this bot's sets (with `vs`: its sets against that bot).
    bot: Option<String>,
    /// With `bot`: only the sets between the two.
    vs: Option<String>,
}

async fn bot(
    State(app): State<Arc<AppState>>,
    Path(name): Path<String>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let s = app.snapshot();
    let Some(line) = s.standings.bots.iter().find(|b| b.name == name) else {
        return Err(not_found_error(format!("no bot named {name:?}")));
    };
    let limit = q.limit.unwrap_or(50).min(MAX_LIST);
    // The bot's newest sets: a page from the store, through the bot's own index.
    let sets = stored_page(&app, Some(name.clone()), q.before, limit).await?;
    let faulted = faulted_sets(&app, &name).await?;
    Ok(Json(
        json!({ "bot": line, "sets": sets, "faulted": faulted }),
    ))
}

async fn sets(
    State(app): State<Arc<AppState>>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let s = app.snapshot();
    let limit = q.limit.unwrap_or(20).min(MAX_LIST);
    let total = s.standings.progress.sets_done + s.standings.progress.sets_done_elsewhere;
    // One bot's sets, or a pair's: from the store, through its indexes.
    match (&q.bot, &q.vs) {
        (Some(bot), Some(vs)) => {
            let list = pair_page(&app, bot, vs, q.before, limit).await?;
            return Ok(Json(json!({ "total": total, "sets": list })));
        }
        (Some(bot), None) => {
            let list = stored_page(&app, Some(bot.clone()), q.before, limit).await?;
            return Ok(Json(json!({ "total": total, "sets": list })));
        }
        (None, Some(_)) => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "vs=NAME needs bot=NAME: the sets between the two".into(),
            ))
        }
        (None, None) => {}
    }
    // The snapshot holds the latest MAX_LIST sets: the first page of any length; the
    // next pages come from the store.
    if q.before.is_none() {
        let list: Vec<&SetView> = s.sets.iter().rev().take(limit).map(|v| &**v).collect();
        return Ok(Json(json!({ "total": total, "sets": list })));
    }
    let list = stored_page(&app, None, q.before, limit).await?;
    Ok(Json(json!({ "total": total, "sets": list })))
}

/// How many of a bot's latest faulted sets its page lists.
const FAULTED_SETS: usize = 20;
/// Lines of a bot's stderr shown for a faulted set, at most, from its end.
const STDERR_LINES: usize = 5;
/// Bytes read from the end of a stderr file for them.
const STDERR_TAIL: u64 = 4096;

/// The bot's latest faulted sets: each set's name and number, the bot's faults in it,
/// and the last lines of its stderr in that set (`null` when the file is gone: empty,
/// pruned, or a team member's).
pub(crate) async fn faulted_sets(app: &Arc<AppState>, bot: &str) -> Result<Vec<Value>, ApiError> {
    let sets = app
        .reader
        .sets(league::FinishedQuery::Faulted {
            bot: bot.to_string(),
            before: None,
            limit: FAULTED_SETS,
        })
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?;
    let logs = logs_dir(app);
    let bot = bot.to_string();
    let out = tokio::task::spawn_blocking(move || {
        sets.into_iter()
            .map(|(number, set)| {
                let side = if set.key.a == bot {
                    referee::Side::A
                } else {
                    referee::Side::B
                };
                let view = SetView::from_finished(number, &set);
                let faults: Vec<&crate::state::FaultView> = view
                    .faults
                    .iter()
                    .zip(&set.outcome.faults)
                    .filter(|(_, f)| f.bot == side)
                    .map(|(v, _)| v)
                    .collect();
                let letter = side.lower();
                let stderr = stderr_tail(&logs, number, &format!("{}.{letter}.stderr", view.set));
                json!({ "set": view.set, "number": number, "faults": faults, "stderr": stderr })
            })
            .collect::<Vec<Value>>()
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(out)
}

/// The last `STDERR_LINES` lines of the stderr file `name` (`STEM.a.stderr`) of the set
/// numbered `number`, wherever it is kept: its own file while the set plays, its
/// compressed form once the set is finished, or the archive of its number. `None` when there is
/// none (a quiet bot's, a pruned set's).
fn stderr_tail(logs: &FsPath, number: u64, name: &str) -> Option<Vec<String>> {
    use std::io::{Read, Seek, SeekFrom};
    if let Some(path) = confined(logs, name) {
        let mut file = std::fs::File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(STDERR_TAIL)))
            .ok()?;
        let mut bytes = Vec::new();
        file.take(STDERR_TAIL).read_to_end(&mut bytes).ok()?;
        return Some(last_lines(&bytes, len > STDERR_TAIL));
    }
    let compressed = [referee::COMPRESSED_SUFFIX, referee::GZIP_SUFFIX]
        .iter()
        .find_map(|suffix| confined(logs, &format!("{name}{suffix}")));
    let text = match compressed {
        Some(path) => {
            // At most what an archive would take; a bot keeps 1 MiB a set.
            let mut text = Vec::new();
            referee::open_log(&path)
                .ok()?
                .take(referee::archive::MAX_ARCHIVED_LOG)
                .read_to_end(&mut text)
                .ok()?;
            text
        }
        None => return archived_tail(&league::archive_path(logs, number), name),
    };
    Some(tail_of(&text))
}

/// The last lines of a whole stderr text.
fn tail_of(text: &[u8]) -> Vec<String> {
    let from = text.len().saturating_sub(STDERR_TAIL as usize);
    last_lines(&text[from..], from > 0)
}

/// The archives whose stderr tails are kept: an archived set never changes, so each
/// archive is read once for all its stderr files' tails (at most `STDERR_LINES` lines
/// of `STDERR_TAIL` bytes each, 128 files an archive: at most about 512 KiB an archive).
const TAILED_ARCHIVES: usize = 16;

/// An archive's stderr tails, by member name (`STEM.a.stderr`).
type ArchiveTails = std::collections::HashMap<String, Vec<String>>;

/// The stderr tails of the archives read last, newest last.
static ARCHIVED_TAILS: std::sync::Mutex<Vec<(PathBuf, ArchiveTails)>> =
    std::sync::Mutex::new(Vec::new());

/// The tail of the stderr file `name` in the archive at `archive`. An archive is read
/// whole to reach a member, so it is read once for every tail it holds, one archive at a
/// time (the lock is held while reading): a page that lists many archived sets, asked
/// for again and again by anyone, costs one read of each archive, not one per set and
/// request.
fn archived_tail(archive: &FsPath, name: &str) -> Option<Vec<String>> {
    let mut kept = ARCHIVED_TAILS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = kept.iter().position(|(path, _)| path == archive) {
        let entry = kept.remove(i);
        let tail = entry.1.get(name).cloned();
        kept.push(entry);
        return tail;
    }
    let mut tails = std::collections::HashMap::new();
    referee::archive::each_stderr(archive, |member, text| {
        tails.insert(member.to_string(), tail_of(&text));
        Ok(true)
    })
    .ok()?;
    let tail = tails.get(name).cloned();
    if kept.len() == TAILED_ARCHIVES {
        kept.remove(0);
    }
    kept.push((archive.to_path_buf(), tails));
    tail
}

/// The last `STDERR_LINES` lines of `bytes`, the end of a stderr file (`cut`: not its
/// start, so its first line is not shown whole); invalid UTF-8 replaced: bot-supplied
/// text, for pages to show as text.
fn last_lines(bytes: &[u8], cut: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A cut first line is not shown.
    if cut && !lines.is_empty() {
        lines.remove(0);
    }
    let from = lines.len().saturating_sub(STDERR_LINES);
    lines[from..].iter().map(|l| l.to_string()).collect()
}

/// A page of finished sets from the store, newest first: of `bot` or all, numbered
/// below `before`.
pub(crate) async fn stored_page(
    app: &AppState,
    bot: Option<String>,
    before: Option<u64>,
    limit: usize,
) -> Result<Vec<SetView>, ApiError> {
    set_page(app, league::FinishedQuery::Newest { bot, before, limit }).await
}

/// The finished sets `query` asks the store for, as the pages show them.
async fn set_page(app: &AppState, query: league::FinishedQuery) -> Result<Vec<SetView>, ApiError> {
    Ok(app
        .reader
        .sets(query)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?
        .iter()
        .map(|(number, set)| SetView::from_finished(*number, set))
        .collect())
}

/// A page of the finished sets between `a` and `b` (either seating), newest first,
/// numbered below `before`.
pub(crate) async fn pair_page(
    app: &AppState,
    a: &str,
    b: &str,
    before: Option<u64>,
    limit: usize,
) -> Result<Vec<SetView>, ApiError> {
    let query = league::FinishedQuery::Between {
        a: a.to_string(),
        b: b.to_string(),
        before,
        limit,
    };
    set_page(app, query).await
}

async fn one_set(
    State(app): State<Arc<AppState>>,
    Path(set): Path<String>,
) -> Result<Json<Value>, ApiError> {
    match finished_set(&app, &set).await? {
        Some(v) => Ok(Json(serde_json::to_value(&*v).unwrap_or(Value::Null))),
        None => Err(not_found_error(format!("no finished set named {set:?}"))),
    }
}

/// The finished set named `set`: among the snapshot's latest, else from the store.
pub(crate) async fn finished_set(
    app: &AppState,
    set: &str,
) -> Result<Option<Arc<SetView>>, ApiError> {
    if let Some(v) = app.snapshot().sets.iter().rev().find(|v| v.set == set) {
        return Ok(Some(v.clone()));
    }
    app.reader
        .set(set)
        .await
        .map(|found| found.map(|(n, f)| Arc::new(SetView::from_finished(n, &f))))
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))
}

/// A file name alone (no directory part, no `..`, not hidden) in `dir`, after
/// resolving links, or `None`: nothing outside the league's logs can be served.
pub fn confined(dir: &FsPath, name: &str) -> Option<PathBuf> {
    let mut parts = FsPath::new(name).components();
    let ok = matches!(parts.next(), Some(Component::Normal(_)))
        && parts.next().is_none()
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0']);
    if !ok {
        return None;
    }
    let base = dir.canonicalize().ok()?;
    let path = base.join(name).canonicalize().ok()?;
    (path.starts_with(&base) && path.is_file()).then_some(path)
}

fn logs_dir(app: &AppState) -> PathBuf {
    app.dir.join(league::LOGS_DIR)
}

/// Where a set's log is: a file of the league's logs directory, or (a set a worker
/// played, its log `store:ID`) the shared store.
enum LogSource {
    File(PathBuf),
    Stored(league::SetId),
    /// In the archive of its number's range (`league::archive_logs`), unless the
    /// archive left it out: then its own file, if it had one.
    Archived(PathBuf, Option<PathBuf>),
}

/// A set's log, found: where it is, whether the set is finished, and the moves it
/// holds (known before the log is read: from the store for a finished set, from the
/// live hub for a running one).
struct FoundLog {
    source: LogSource,
    finished: bool,
    moves: u64,
}

/// A set's log: the finished set's, or a running set's.
async fn set_log_source(app: &AppState, set: &str) -> Result<FoundLog, ApiError> {
    let view = finished_set(app, set).await?;
    let view = view.as_deref();
    let finished = view.is_some();
    let moves = match view {
        Some(v) => v.moves[0] + v.moves[1],
        None => match app.hub.moves(set) {
            Some(moves) => moves,
            None => return Err(not_found_error(format!("no set named {set:?}"))),
        },
    };
    let found = |source| FoundLog {
        source,
        finished,
        moves,
    };
    if view.is_some_and(|v| v.pruned) {
        return Err(ApiError(
            StatusCode::GONE,
            format!(
                "the log of {set} was pruned (hus serve --keep-logs, hus prune); its result stays"
            ),
        ));
    }
    if let Some(&league::LogPlace::Stored(id)) = view.map(|v| &v.log) {
        return Ok(found(LogSource::Stored(id)));
    }
    // A finished set's log is the file the store names (`STEM.jsonl.zst`; the plain
    // `STEM.jsonl` until its compression is whole); a running set's is being written,
    // `STEM.jsonl`.
    let name = match view {
        Some(v) => v.log.file_name().unwrap_or_default(),
        None => format!("{set}.jsonl"),
    };
    let file = referee::finished_log_candidates(FsPath::new(&name))
        .iter()
        .find_map(|candidate| confined(&logs_dir(app), &candidate.to_string_lossy()));
    // Once the archive of its number's range is there, a finished set's log is read
    // from it (its own file is about to go, or gone); a log the archive left out
    // (larger than an archive takes) is still its file.
    match view.map(|v| league::archive_path(&logs_dir(app), v.number)) {
        Some(archive) if archive.is_file() => Ok(found(LogSource::Archived(archive, file))),
        _ => match file {
            Some(path) => Ok(found(LogSource::File(path))),
            None => Err(not_found_error(format!("the log of {set:?} is missing"))),
        },
    }
}

/// The log of `set` read from `archive` into a file of a new private directory
/// (removed when the directory is dropped), named as the set's log; or, when the
/// archive does not hold it, its own `file`.
async fn archived_copy(
    set: &str,
    archive: PathBuf,
    file: Option<PathBuf>,
) -> Result<(PathBuf, Option<tempfile::TempDir>), ApiError> {
    let stem = set.to_string();
    let text = tokio::task::spawn_blocking(move || referee::archive::read_log(&archive, &stem))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| {
            ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read the archived log of {set:?}: {e}"),
            )
        })?;
    let Some(text) = text else {
        return file
            .map(|path| (path, None))
            .ok_or_else(|| not_found_error(format!("the log of {set:?} is missing")));
    };
    private_copy(set, text.as_slice())
        .map(|(path, dir)| (path, Some(dir)))
        .map_err(|e| {
            ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot copy the log of {set:?}: {e}"),
            )
        })
}

/// A log the store keeps, as it keeps it (gzip).
async fn stored_log(
    app: &AppState,
    set: &str,
    id: league::SetId,
) -> Result<league::PackedLog, ApiError> {
    match app.reader.log(id).await {
        Ok(Some(log)) => Ok(log),
        Ok(None) => Err(not_found_error(format!(
            "the store keeps no log of {set:?}"
        ))),
        Err(e) => Err(ApiError(StatusCode::SERVICE_UNAVAILABLE, e)),
    }
}

/// A set's log as a download, streamed (`download.rs`), if a download's place is free.
async fn download_source(
    app: &AppState,
    peer: SocketAddr,
    set: &str,
    source: LogSource,
) -> Result<Response, ApiError> {
    let ticket = match app.downloads.start(peer.ip()) {
        Ok(ticket) => ticket,
        Err(busy) => return Ok(busy.into_response()),
    };
    match source {
        LogSource::File(path) => download_file(path, ticket, Some(&format!("{set}.jsonl"))).await,
        LogSource::Archived(archive, file) => {
            // The copy is opened before its directory goes: the download reads the
            // open file.
            let (path, _copy) = archived_copy(set, archive, file).await?;
            download_file(path, ticket, Some(&format!("{set}.jsonl"))).await
        }
        LogSource::Stored(id) => {
            let log = stored_log(app, set, id).await?;
            Ok(download::packed_download(
                &format!("{set}.jsonl"),
                log,
                ticket,
            ))
        }
    }
}

/// The file at `path` (resolved inside the logs directory by `confined`) as a download:
/// as it is, or with `text` (a set's log, named so), a compressed log unpacked as it is
/// sent.
async fn download_file(
    path: PathBuf,
    ticket: download::Ticket,
    text: Option<&str>,
) -> Result<Response, ApiError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let log = download::open_log(&path).await.map_err(|e| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read {name}: {e}"),
        )
    })?;
    match text {
        Some(text) if log.is_compressed().await => {
            Ok(download::unpacked_download(text, log, ticket).await)
        }
        _ => Ok(download::file_download(&name, log, ticket)),
    }
}

async fn set_log(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(set): Path<String>,
) -> Result<Response, ApiError> {
    let found = set_log_source(&app, &set).await?;
    download_source(&app, peer, &set, found.source).await
}

/// The normal quantile of the standings' 95% intervals (`ratings::FitOptions`'
/// default confidence), for the rating history's bands (the API and the pages' charts).
pub(crate) const Z95: f64 = 1.959_963_984_540_054;

/// The rating history (docs/api.md): per point, the number of the last set counted,
/// the first-move advantage and each rated bot's rating, each with its standard error
/// and 95% interval. At most `league::HISTORY_POINTS` + 1 points.
async fn history(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let points = app
        .reader
        .rating_history()
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?;
    let estimate = |value: f64, std_error: f64| {
        json!({
            "value": value,
            "std_error": std_error,
            "low": value - Z95 * std_error,
            "high": value + Z95 * std_error,
        })
    };
    let points: Vec<Value> = points
        .iter()
        .map(|p| {
            let mut bots = serde_json::Map::new();
            let mut advantage = Value::Null;
            for (bot, value, std_error) in &p.ratings {
                if bot.is_empty() {
                    advantage = estimate(*value, *std_error);
                } else {
                    bots.insert(bot.clone(), estimate(*value, *std_error));
                }
            }
            json!({ "number": p.number, "first_move_advantage": advantage, "bots": bots })
        })
        .collect();
    Ok(Json(json!({
        "stride": league::history_stride(app.snapshot().standings.progress.sets_done),
        "points": points,
    })))
}

/// The workers of a shared store, as `hus workers --format json` lists them (the same
/// function); none with SQLite.
async fn workers(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let (rows, stuck) = app
        .reader
        .workers()
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?;
    Ok(Json(league::workers_json(&rows, stuck.as_deref())))
}

async fn log_file(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(file): Path<String>,
) -> Result<Response, ApiError> {
    match confined(&logs_dir(&app), &file) {
        Some(path) => match app.downloads.start(peer.ip()) {
            Ok(ticket) => download_file(path, ticket, None).await,
            Err(busy) => Ok(busy.into_response()),
        },
        None => Err(ApiError(
            StatusCode::NOT_FOUND,
            "no such log: give a file name of the league's logs directory".into(),
        )),
    }
}

/// The `'sha256-...'` source of an inline element's text, for the CSP.
fn inline_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The text of every `<tag>...</tag>` element (without attributes) of a page.
fn inline_elements<'p>(page: &'p str, tag: &str) -> Vec<&'p str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    out
}

/// The replay viewer of `hus replay --html` for a set. Its script and style are
/// inline: the page's policy allows exactly those, by their SHA-256. A finished set's
/// page is built once and kept; builds are shared and bounded (`pages.rs`).
///
/// A page that cannot be built costs less than a build: a set of more moves than a
/// page may hold (the store's count, or the live hub's) is refused before its log is
/// read; a log that fails to make a page is refused once and the refusal kept like a
/// page; and an address that was refused `refused::PER_CLIENT` pages in a minute is
/// answered 429 before anything is looked up.
async fn replay(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(set): Path<String>,
) -> Result<Response, ApiError> {
    let client = Client::of(peer.ip());
    if let Err(wait) = app.page_refusals.check(client) {
        let mut response = ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{client} asked for {} replay pages that cannot be built this minute, the \
                 most one address may: try again in {} s",
                app.page_refusals.per_client(),
                wait.as_secs().max(1)
            ),
        )
        .into_response();
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(wait.as_secs().max(1)),
        );
        return Ok(response);
    }
    let found = set_log_source(&app, &set).await?;
    let page = if found.moves > app.max_page_moves {
        Err(too_many_moves(&set, found.moves, app.max_page_moves))
    } else {
        let build = {
            let (app, set, source) = (app.clone(), set.clone(), found.source);
            move |ticket| build_replay(app, set, source, ticket).boxed()
        };
        app.pages.get(&set, found.finished, build).await
    };
    let page = page.inspect_err(|e| {
        if e.0 == StatusCode::UNPROCESSABLE_ENTITY {
            app.page_refusals.note(client);
        }
    })?;
    let html = with_replay_nav(&page.html, &replay_links(&app, &set).await);
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CONTENT_SECURITY_POLICY, page.csp.clone()),
        ],
        html,
    )
        .into_response())
}

/// The links of a replay page (`html::replay_nav`): the set's, and the pair's
/// previous and next finished sets (the next one looked for among the sets finished
/// within two of the league's rounds after it; the pair's page lists them all). A
/// running set, or a store that does not answer: the links that need no store.
async fn replay_links(app: &AppState, set: &str) -> maud::Markup {
    let Ok(Some(view)) = finished_set(app, set).await else {
        return crate::html::replay_nav(set, None, None, None);
    };
    let [a, b] = view.bots.clone();
    let previous = pair_page(app, &a, &b, Some(view.number), 1)
        .await
        .ok()
        .and_then(|v| v.into_iter().next())
        .map(|v| v.set);
    let bots = app.snapshot().standings.bots.len().max(2) as u64;
    let window = bots * (bots - 1) * 2 + 2;
    let next = pair_page(app, &a, &b, Some(view.number + window + 1), window as usize)
        .await
        .ok()
        .and_then(|v| {
            v.into_iter()
                .filter(|s| s.number > view.number)
                .min_by_key(|s| s.number)
        })
        .map(|v| v.set);
    crate::html::replay_nav(set, Some(&view), previous.as_deref(), next.as_deref())
}

/// The viewer's page with `nav` first in its body.
fn with_replay_nav(page: &[u8], nav: &maud::Markup) -> Vec<u8> {
    const BODY: &[u8] = b"<body>";
    let nav = nav.0.as_bytes();
    let Some(at) = page.windows(BODY.len()).position(|w| w == BODY) else {
        return page.to_vec();
    };
    let at = at + BODY.len();
    let mut out = Vec::with_capacity(page.len() + nav.len() + 1);
    out.extend_from_slice(&page[..at]);
    out.push(b'\n');
    out.extend_from_slice(nav);
    out.extend_from_slice(&page[at..]);
    out
}

/// The refusal of a page of `moves` moves, over `max`.
fn too_many_moves(set: &str, moves: u64, max: u64) -> ApiError {
    ApiError(
        StatusCode::UNPROCESSABLE_ENTITY,
        format!(
            "the page of {set} would hold {moves} moves, more than {max}: download its log \
             instead (/api/sets/{set}/log)"
        ),
    )
}

/// A log to build a page from: a file, or the store's packed copy.
enum ReplayLog {
    File(PathBuf),
    Packed(league::PackedLog),
    /// A private copy of an archived log, removed with its directory.
    Copy(PathBuf, tempfile::TempDir),
}

/// Builds a set's page on a blocking thread, which gives up when `ticket` says nobody
/// waits for the page any more.
async fn build_replay(
    app: Arc<AppState>,
    set: String,
    source: LogSource,
    ticket: pages::Ticket,
) -> Result<pages::Page, ApiError> {
    let log = match source {
        LogSource::File(path) => ReplayLog::File(path),
        LogSource::Stored(id) => ReplayLog::Packed(stored_log(&app, &set, id).await?),
        LogSource::Archived(archive, file) => match archived_copy(&set, archive, file).await? {
            (path, Some(dir)) => ReplayLog::Copy(path, dir),
            (path, None) => ReplayLog::File(path),
        },
    };
    tokio::task::spawn_blocking(move || {
        // A log the store keeps is read from a private copy, named as the set's log.
        let (path, _copy) = match log {
            ReplayLog::File(path) => (path, None),
            ReplayLog::Copy(path, dir) => (path, Some(dir)),
            ReplayLog::Packed(packed) => {
                let (path, copy) = private_copy(&set, packed.reader()).map_err(|e| {
                    ApiError(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        format!("cannot copy the log of {set:?}: {e}"),
                    )
                })?;
                (path, Some(copy))
            }
        };
        let html = referee::viewer_page(&path, app.max_page_moves, ticket.stop()).map_err(|e| {
            // A build nobody waits for any more is not a refusal of the page.
            if ticket.stop().load(Ordering::Relaxed) {
                ApiError(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the build was stopped".into(),
                )
            } else {
                ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("{e:#}"))
            }
        })?;
        drop(ticket);
        with_policy(html)
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// The log `text` of `set` written into a file of a new private directory (removed
/// when the directory is dropped), named as the set's log: for a log that is not a file
/// of its own (the store's copy, an archive's member).
fn private_copy(
    set: &str,
    mut text: impl std::io::Read,
) -> std::io::Result<(PathBuf, tempfile::TempDir)> {
    let copy = tempfile::tempdir()?;
    let path = copy.path().join(format!("{set}.jsonl"));
    let mut file = std::fs::File::create(&path)?;
    std::io::copy(&mut text, &mut file)?;
    Ok((path, copy))
}

/// A page with the policy that allows its inline scripts and styles, by their hashes.
fn with_policy(html: String) -> Result<pages::Page, ApiError> {
    let scripts: Vec<String> = inline_elements(&html, "script")
        .into_iter()
        .map(inline_hash)
        .collect();
    let styles: Vec<String> = inline_elements(&html, "style")
        .into_iter()
        .map(inline_hash)
        .collect();
    let csp = format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'",
        scripts.join(" "),
        styles.join(" ")
    );
    let csp = HeaderValue::from_str(&csp)
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(pages::Page {
        html: Bytes::from(html),
        csp,
    })
}

/// The running sets this server plays (with their games so far), and `elsewhere`, the
/// sets the store says are being played by others (workers): read through the status
/// index, at most `MAX_LIST`.
async fn live(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let here = app.hub.snapshot();
    let mine = app.hub.running();
    let elsewhere: Vec<Value> = app
        .reader
        .running_sets(MAX_LIST)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?
        .into_iter()
        .filter(|r| !mine.contains(&r.key.stem()))
        .map(|r| {
            json!({
                "set": r.key.stem(),
                "bots": [r.key.a, r.key.b],
                "worker": r.worker,
                "for_s": (r.for_s * 10.0).round() / 10.0,
            })
        })
        .collect();
    Ok(Json(json!({ "sets": here, "elsewhere": elsewhere })))
}

#[derive(Clone)]
struct LiveState {
    app: Arc<AppState>,
    shutdown: watch::Receiver<Option<&'static str>>,
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
async fn events(
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

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// An admin command, if the request's token is the league's; a refusal is counted for
/// the log (`admin::RefusalLog`: one line per address a minute at most, no token).
async fn admin(
    app: &AppState,
    peer: SocketAddr,
    headers: &HeaderMap,
    command: Command,
) -> Result<Json<Value>, ApiError> {
    if let Err(refusal) = admin::check(&app.dir, bearer(headers)) {
        app.refusals.note(Client::of(peer.ip()), refusal);
        return Err(ApiError(StatusCode::UNAUTHORIZED, refusal.answer().into()));
    }
    let (tx, rx) = oneshot::channel();
    app.commands.send((command, tx)).await.map_err(|_| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping".into(),
        )
    })?;
    match rx.await {
        Ok(Ok(said)) => Ok(Json(json!({ "ok": said }))),
        Ok(Err(refused)) => Err(ApiError(StatusCode::CONFLICT, refused)),
        Err(_) => Err(ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping".into(),
        )),
    }
}

async fn pause(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::Pause).await
}

async fn resume(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::Resume).await
}

async fn add_bot(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::AddBot(name)).await
}

async fn remove_bot(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::RemoveBot(name)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_loads_nothing_from_elsewhere() {
        for source in [APP_JS, APP_CSS, referee::viewer_assets::BOARD_JS] {
            assert_eq!(referee::viewer_assets::loads_from_elsewhere(source), None);
        }
    }

    /// A set's stderr tail is read from its file, its gzip form or its archive; an
    /// archive is read once for every tail it holds (the second read finds them kept,
    /// even with the archive gone).
    #[test]
    fn stderr_tails_come_from_the_file_its_compressed_form_or_one_read_of_the_archive() {
        let dir = tempfile::tempdir().expect("tmp");
        let logs = dir.path();
        let lines: String = (1..=8).map(|i| format!("line {i}\n")).collect();
        std::fs::write(logs.join("r1-x-vs-y.a.stderr"), &lines).expect("write");
        let want: Vec<String> = (4..=8).map(|i| format!("line {i}")).collect();
        assert_eq!(
            stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"),
            Some(want.clone())
        );
        let compressed = referee::compress_log(&logs.join("r1-x-vs-y.a.stderr")).expect("compress");
        assert_eq!(
            stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"),
            Some(want.clone())
        );
        let archives = logs.join(league::ARCHIVE_DIR);
        std::fs::create_dir(&archives).expect("mkdir");
        let log = logs.join("r1-x-vs-y.jsonl");
        std::fs::write(&log, "{\"type\":\"header\"}\n").expect("write");
        referee::archive::write_archive(
            &referee::Dir::open(&archives).expect("dir"),
            "sets-000000001-000000064.tar.zst",
            &[("r1-x-vs-y".to_string(), log.as_path())],
            &[("r1-x-vs-y.a.stderr".to_string(), compressed.as_path())],
        )
        .expect("archive");
        std::fs::remove_file(&compressed).expect("remove");
        assert_eq!(
            stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"),
            Some(want.clone())
        );
        assert_eq!(stderr_tail(logs, 1, "r1-x-vs-y.b.stderr"), None);
        std::fs::remove_file(league::archive_path(logs, 1)).expect("remove");
        assert_eq!(stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"), Some(want));
    }

    /// An archived set's log is a private copy of the archive's text; a set the
    /// archive left out is read from its own file; with neither, 404.
    #[test]
    fn an_archived_log_is_copied_from_its_archive_or_read_from_its_file() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let dir = tempfile::tempdir().expect("tmp");
        let held = dir.path().join("r1-a-vs-b.jsonl");
        std::fs::write(&held, "{\"type\":\"header\"}\n").expect("write");
        let archive = dir.path().join("sets-000000001-000000064.tar.zst");
        referee::archive::write_archive(
            &referee::Dir::open(dir.path()).expect("dir"),
            "sets-000000001-000000064.tar.zst",
            &[("r1-a-vs-b".to_string(), held.as_path())],
            &[],
        )
        .expect("archive");
        let (path, copy) = runtime
            .block_on(archived_copy("r1-a-vs-b", archive.clone(), None))
            .map_err(|e| e.1)
            .expect("copied");
        assert!(copy.is_some());
        assert_eq!(
            path.file_name().and_then(|n| n.to_str()),
            Some("r1-a-vs-b.jsonl")
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\"type\":\"header\"}\n"
        );
        let own = dir.path().join("r2-b-vs-a.jsonl.gz");
        std::fs::write(&own, "x").expect("write");
        let (path, copy) = runtime
            .block_on(archived_copy(
                "r2-b-vs-a",
                archive.clone(),
                Some(own.clone()),
            ))
            .map_err(|e| e.1)
            .expect("its file");
        assert_eq!((path, copy.is_none()), (own, true));
        let missing = runtime.block_on(archived_copy("r3-a-vs-b", archive, None));
        assert_eq!(missing.err().map(|e| e.0), Some(StatusCode::NOT_FOUND));
    }

    #[test]
    fn only_plain_names_of_the_directory_are_served() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path().join("logs");
        std::fs::create_dir(&logs).expect("mkdir");
        std::fs::write(logs.join("r1-a-vs-b.jsonl"), "{}").expect("write");
        std::fs::write(dir.path().join("secret"), "no").expect("write");
        std::os::unix::fs::symlink(dir.path().join("secret"), logs.join("link")).expect("link");
        assert!(confined(&logs, "r1-a-vs-b.jsonl").is_some());
        for bad in [
            "../secret",
            "link",
            "..",
            ".",
            "/etc/passwd",
            "a/../../secret",
            ".hidden",
            "",
        ] {
            assert_eq!(confined(&logs, bad), None, "{bad}");
        }
    }

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

    #[test]
    fn inline_elements_and_their_hashes() {
        let page = "<style>a{}</style><script type=\"x\">no</script><script>go()</script>";
        assert_eq!(inline_elements(page, "script"), ["go()"]);
        assert_eq!(inline_elements(page, "style"), ["a{}"]);
        // echo -n 'go()' | openssl dgst -sha256 -binary | base64
        assert!(inline_hash("go()").starts_with("'sha256-"));
    }
}
