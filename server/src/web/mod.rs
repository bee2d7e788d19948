//! The web server: the router of the dashboard, the JSON API (docs/api.md) and the
//! live stream, the security headers, the `Host` check and the request limits that do
//! not belong to the connection (`http.rs` has those). Each job has a module:
//!
//! - `dashboard`: the pages' handlers (the HTML of `crate::html`, filled from the
//!   snapshot and the store);
//! - `api`: the JSON API;
//! - `sets`: finished sets from the snapshot or the store, as the pages and the API
//!   show them;
//! - `logs`: where a set's log is (its file, an archive, the shared store) and its
//!   downloads; `stderr`: the excerpts of a bot's stderr on its page;
//! - `replay`: the replay pages; `events`: the live stream (server-sent events);
//!   `feed`: what changed on the pages (results, standings rows, the status line),
//!   sent on the live stream;
//! - `versions`: bots by upload (`crate::uploads`): submitting, reading and
//!   activating versions, and the SPRT of one version against another (`crate::gate`);
//! - `admin`: the admin endpoints; `assets`: the dashboard's script, style and icon.
//!
//! `crate::html` renders pages and never calls into this module.

mod admin;
mod api;
mod assets;
mod dashboard;
mod events;
mod feed;
mod logs;
mod replay;
mod sets;
mod stderr;
mod versions;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use tokio::sync::watch;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;

use crate::error::not_found_error;
pub use crate::error::ApiError;
use crate::state::AppState;
use events::LiveState;
pub use feed::feed;
pub use logs::confined;

/// Largest request body accepted (admin requests carry none), but for an upload's.
pub const MAX_BODY: usize = 16 * 1024;
/// Time a request other than the live stream and an upload may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Time an upload may take (an archive of the largest size over a slow link).
pub const UPLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// The pages' policy: only this origin's scripts, styles and connections; no frames,
/// no forms, no plugins, no base element (the same for every page `hus` serves).
pub use referee::viewer_assets::PAGE_CSP as CSP;

/// The whole application: dashboard, API, live stream. `shutdown` ends live streams.
/// Every request must be for one of `app.hosts` (421 otherwise), and carry its peer as
/// `ConnectInfo<SocketAddr>` (`http::serve` puts it there).
pub fn router(app: Arc<AppState>, shutdown: watch::Receiver<Option<&'static str>>) -> Router {
    let timed = Router::new()
        .route("/", get(dashboard::standings_page))
        .route("/bots/{name}", get(dashboard::bot_page))
        .route("/sets", get(dashboard::archive_page))
        .route("/sets/{set}", get(dashboard::set_page))
        .route("/favicon.svg", get(assets::favicon))
        .route("/favicon.ico", get(assets::favicon))
        .route("/workers", get(dashboard::workers_page))
        .route("/app.js", get(assets::app_js))
        .route("/app.css", get(assets::app_css))
        .route("/board.js", get(assets::board_js))
        .route("/sets/{set}/replay", get(replay::replay))
        .route("/api/status", get(api::status))
        .route("/api/standings", get(api::standings))
        .route("/api/bots", get(api::bots))
        .route("/api/bots/{name}", get(api::bot))
        .route("/api/sets", get(api::sets))
        .route("/api/sets/{set}", get(api::one_set))
        .route("/api/sets/{set}/log", get(logs::set_log))
        .route("/api/logs/{file}", get(logs::log_file))
        .route("/api/live", get(api::live))
        .route("/api/workers", get(api::workers))
        .route("/api/history", get(api::history))
        .route("/api/admin/pause", post(admin::pause))
        .route("/api/admin/resume", post(admin::resume))
        .route("/api/admin/bots/{name}/add", post(admin::add_bot))
        .route("/api/admin/bots/{name}/remove", post(admin::remove_bot))
        .route("/bots/{name}/versions", get(versions::versions_page))
        .route(
            "/bots/{name}/versions/{number}",
            get(versions::version_page),
        )
        .route("/api/bots/{name}/versions/{number}", get(versions::one))
        .route(
            "/api/bots/{name}/versions/{number}/activate",
            post(versions::activate),
        )
        .route(
            "/api/bots/{name}/versions/{number}/sprt",
            post(versions::sprt).get(versions::sprt_results),
        )
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(RequestBodyLimitLayer::new(MAX_BODY));
    // An upload's body is an archive, read by its handler up to the archive's bound,
    // over a slow link too.
    let uploads = Router::new()
        .route(
            "/api/bots/{name}/versions",
            post(versions::submit).get(versions::list),
        )
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            UPLOAD_TIMEOUT,
        ));
    let live = Router::new()
        .route("/api/live/events", get(events::events))
        .with_state(LiveState {
            app: app.clone(),
            shutdown,
        });
    timed
        .merge(uploads)
        .with_state(app.clone())
        .merge(live)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(app, check_host))
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

async fn not_found() -> ApiError {
    not_found_error("no such page: see docs/api.md for the API".into())
}
