//! The JSON API (docs/api.md): status, standings, bots, sets, the rating history,
//! the workers and the running sets. Thin handlers over the snapshot and `sets`.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::sets::{finished_set, pair_page, stored_page};
use super::stderr::faulted_sets;
use crate::error::{not_found_error, ApiError};
use crate::state::{AppState, SetView, Z95};

/// Sets one list returns at most.
const MAX_LIST: usize = 500;

pub(super) async fn status(State(app): State<Arc<AppState>>) -> Json<Value> {
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

pub(super) async fn standings(State(app): State<Arc<AppState>>) -> Json<Value> {
    Json(serde_json::to_value(&app.snapshot().standings).unwrap_or(Value::Null))
}

pub(super) async fn bots(State(app): State<Arc<AppState>>) -> Json<Value> {
    Json(serde_json::to_value(&app.snapshot().standings.bots).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
pub(super) struct ListQuery {
    limit: Option<usize>,
    /// Sets numbered below this one: the next page after a set of that number.
    before: Option<u64>,
    /// `/api/sets`: only this bot's sets (with `vs`: its sets against that bot).
    bot: Option<String>,
    /// With `bot`: only the sets between the two.
    vs: Option<String>,
}

pub(super) async fn bot(
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

pub(super) async fn sets(
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

pub(super) async fn one_set(
    State(app): State<Arc<AppState>>,
    Path(set): Path<String>,
) -> Result<Json<Value>, ApiError> {
    match finished_set(&app, &set).await? {
        Some(v) => Ok(Json(serde_json::to_value(&*v).unwrap_or(Value::Null))),
        None => Err(not_found_error(format!("no finished set named {set:?}"))),
    }
}

/// The rating history (docs/api.md): per point, the number of the last set counted,
/// the first-move advantage and each rated bot's rating, each with its standard error
/// and 95% interval. At most `league::HISTORY_POINTS` + 1 points.
pub(super) async fn history(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
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
pub(super) async fn workers(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let (rows, stuck) = app
        .reader
        .workers()
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?;
    Ok(Json(league::workers_json(&rows, stuck.as_deref())))
}

/// The running sets this server plays (with their games so far), and `elsewhere`, the
/// sets the store says are being played by others (workers): read through the status
/// index, at most `MAX_LIST`.
pub(super) async fn live(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
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
