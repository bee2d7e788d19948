//! The admin endpoints (`/api/admin/...`): pause, resume, add and remove a bot, for the
//! holder of the league's admin token (`crate::admin`); refusals counted for the log.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::Json;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::capacity::Client;
use crate::error::ApiError;
use crate::state::{AppState, Command};

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
    if let Err(refusal) = crate::admin::check(&app.dir, bearer(headers)) {
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

pub(super) async fn pause(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::Pause).await
}

pub(super) async fn resume(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::Resume).await
}

pub(super) async fn add_bot(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::AddBot(name)).await
}

pub(super) async fn remove_bot(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    admin(&app, peer, &headers, Command::RemoveBot(name)).await
}
