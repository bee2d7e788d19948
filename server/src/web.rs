//! The dashboard and the JSON API (docs/api.md): the routes, the security headers and
//! the request limits that do not belong to the connection (`http.rs` has those).

use std::convert::Infallible;
use std::path::{Component, Path as FsPath, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use futures_util::stream::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::sync::{oneshot, watch};
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;

use crate::admin;
use crate::state::{AppState, Command, SetView};

/// Largest request body accepted (admin requests carry none).
pub const MAX_BODY: usize = 16 * 1024;
/// Time a request other than the live stream may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Moves a replay page may hold.
const MAX_PAGE_MOVES: u64 = 200_000;
/// Sets one list returns at most.
const MAX_LIST: usize = 500;

/// The pages' policy: only this origin's scripts, styles and connections; no frames,
/// no forms, no plugins, no base element.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// The whole application: dashboard, API, live stream. `shutdown` ends live streams.
pub fn router(app: Arc<AppState>, shutdown: watch::Receiver<Option<&'static str>>) -> Router {
    let timed = Router::new()
        .route("/", get(index))
        .route("/app.js", get(app_js))
        .route("/app.css", get(app_css))
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
        .with_state(app)
        .merge(live)
        .fallback(not_found)
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
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
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

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

async fn status(State(app): State<Arc<AppState>>) -> Json<Value> {
    let s = app.snapshot();
    let live = app.hub.snapshot();
    Json(json!({
        "paused": s.paused,
        "concurrency": app.concurrency,
        "running": live.iter().map(|l| l.set.clone()).collect::<Vec<_>>(),
        "sets_done": s.sets.len(),
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
    let sets: Vec<&SetView> = s
        .sets
        .iter()
        .rev()
        .filter(|v| v.bots.contains(&name))
        .take(limit)
        .collect();
    Ok(Json(json!({ "bot": line, "sets": sets })))
}

async fn sets(State(app): State<Arc<AppState>>, Query(q): Query<ListQuery>) -> Json<Value> {
    let s = app.snapshot();
    let limit = q.limit.unwrap_or(20).min(MAX_LIST);
    let list: Vec<&SetView> = s.sets.iter().rev().take(limit).collect();
    Json(json!({ "total": s.sets.len(), "sets": list }))
}

async fn one_set(
    State(app): State<Arc<AppState>>,
    Path(set): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let s = app.snapshot();
    match s.sets.iter().find(|v| v.set == set) {
        Some(v) => Ok(Json(serde_json::to_value(v).unwrap_or(Value::Null))),
        None => Err(not_found_error(format!("no finished set named {set:?}"))),
    }
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

/// A set's log file: the finished set's, or a running set's.
fn set_log_path(app: &AppState, set: &str) -> Result<PathBuf, ApiError> {
    let s = app.snapshot();
    let known =
        s.sets.iter().any(|v| v.set == set) || app.hub.snapshot().iter().any(|l| l.set == set);
    if !known {
        return Err(not_found_error(format!("no set named {set:?}")));
    }
    confined(&logs_dir(app), &format!("{set}.jsonl"))
        .ok_or_else(|| not_found_error(format!("the log of {set:?} is missing")))
}

async fn download(path: PathBuf) -> Result<Response, ApiError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let body = tokio::fs::read(&path).await.map_err(|e| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read {name}: {e}"),
        )
    })?;
    let kind = if name.ends_with(".jsonl") {
        "application/jsonl; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    Ok((
        [
            (header::CONTENT_TYPE, kind.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"{}\"",
                    name.replace(['"', '\\'], "_")
                ),
            ),
        ],
        body,
    )
        .into_response())
}

async fn set_log(
    State(app): State<Arc<AppState>>,
    Path(set): Path<String>,
) -> Result<Response, ApiError> {
    download(set_log_path(&app, &set)?).await
}

async fn log_file(
    State(app): State<Arc<AppState>>,
    Path(file): Path<String>,
) -> Result<Response, ApiError> {
    match confined(&logs_dir(&app), &file) {
        Some(path) => download(path).await,
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
/// inline: the page's policy allows exactly those, by their SHA-256.
async fn replay(
    State(app): State<Arc<AppState>>,
    Path(set): Path<String>,
) -> Result<Response, ApiError> {
    let path = set_log_path(&app, &set)?;
    let page = tokio::task::spawn_blocking(move || referee::viewer_page(&path, MAX_PAGE_MOVES))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("{e:#}")))?;
    let scripts: Vec<String> = inline_elements(&page, "script")
        .into_iter()
        .map(inline_hash)
        .collect();
    let styles: Vec<String> = inline_elements(&page, "style")
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
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CONTENT_SECURITY_POLICY, csp),
        ],
        page,
    )
        .into_response())
}

async fn live(State(app): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({ "sets": app.hub.snapshot() }))
}

#[derive(Clone)]
struct LiveState {
    app: Arc<AppState>,
    shutdown: watch::Receiver<Option<&'static str>>,
}

/// Server-sent events: every record of every running set, as one JSON object per
/// event; `lagged` when this watcher lost events (it should read `/api/live` again).
async fn events(
    State(live): State<LiveState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let receiver = live.app.hub.subscribe();
    let mut shutdown = live.shutdown.clone();
    let end = async move {
        let _ = shutdown.wait_for(|s| s.is_some()).await;
    };
    let stream = BroadcastStream::new(receiver)
        .map(|item| {
            Ok(match item {
                Ok(text) => Event::default().data(&*text),
                Err(BroadcastStreamRecvError::Lagged(n)) => Event::default()
                    .event("lagged")
                    .data(json!({ "lost": n }).to_string()),
            })
        })
        .take_until(Box::pin(end));
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

async fn admin(
    app: &AppState,
    headers: &HeaderMap,
    command: Command,
) -> Result<Json<Value>, ApiError> {
    if let Err(refusal) = admin::check(&app.dir, bearer(headers)) {
        let why = match refusal {
            admin::Refusal::Missing => {
                "an admin action needs the header Authorization: Bearer TOKEN"
            }
            admin::Refusal::NoToken => {
                "this league has no admin token: make one with hus serve-token"
            }
            admin::Refusal::Wrong => "wrong admin token",
        };
        eprintln!("hus serve: refused an admin request ({command:?}): {why}");
        return Err(ApiError(StatusCode::UNAUTHORIZED, why.into()));
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
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    admin(&app, &headers, Command::Pause).await
}

async fn resume(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    admin(&app, &headers, Command::Resume).await
}

async fn add_bot(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    admin(&app, &headers, Command::AddBot(name)).await
}

async fn remove_bot(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    admin(&app, &headers, Command::RemoveBot(name)).await
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn inline_elements_and_their_hashes() {
        let page = "<style>a{}</style><script type=\"x\">no</script><script>go()</script>";
        assert_eq!(inline_elements(page, "script"), ["go()"]);
        assert_eq!(inline_elements(page, "style"), ["a{}"]);
        // echo -n 'go()' | openssl dgst -sha256 -binary | base64
        assert!(inline_hash("go()").starts_with("'sha256-"));
    }
}
