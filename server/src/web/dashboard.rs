//! The dashboard's pages (`/`, `/bots/NAME`, `/sets`, `/sets/SET`, `/workers`): the
//! handlers that fill `crate::html`'s pages from the snapshot and the store, and send
//! them (a problem in the page's frame when something is missing).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};
use serde::Deserialize;

use super::{sets, stderr};
use crate::html::{
    archive_main, bot_main_with, page, pair_main, set_main, standings_main, workers_main,
    ArchiveQuery, Status, ARCHIVE_SETS,
};
use crate::state::{AppState, SetView};

/// Recent sets on the standings page.
pub const RECENT_SETS: usize = 20;
/// Sets on a bot's page.
pub const BOT_SETS: usize = 100;

pub(super) fn respond(status: StatusCode, markup: Markup) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        markup.into_string(),
    )
        .into_response()
}

/// A page that says what went wrong, in the frame.
pub(super) fn problem_page(app: &AppState, status: StatusCode, what: &str) -> Response {
    respond(
        status,
        page(
            "not found",
            &Status::of(app),
            html! { p class="problem" { (what) } },
        ),
    )
}

/// `/`: the standings page.
pub async fn standings_page(State(app): State<Arc<AppState>>) -> Response {
    let s = app.snapshot();
    let recent: Vec<SetView> = s
        .sets
        .iter()
        .rev()
        .take(RECENT_SETS)
        .map(|v| (**v).clone())
        .collect();
    let total = s.standings.progress.sets_done + s.standings.progress.sets_done_elsewhere;
    // The workers of a shared store; none with SQLite (or when the store does not
    // answer: the page says so).
    // The rating history (bounded: at most 129 points); none when the store does not
    // answer (the charts then say there is nothing yet).
    let history = app.reader.rating_history().await.unwrap_or_default();
    let (workers, stuck, unread) = match app.reader.workers().await {
        Ok((rows, stuck)) => (rows, stuck, None),
        Err(e) => (Vec::new(), None, Some(e)),
    };
    let main = html! {
        (standings_main(&s.standings, &recent, total, &workers, stuck.as_deref(), &s.problems, &history))
        @if let Some(e) = unread { p class="problem" { "workers: " (e) } }
    };
    respond(StatusCode::OK, page("standings", &Status::of(&app), main))
}

/// The query of a bot's page.
#[derive(Deserialize)]
pub struct BotQuery {
    /// Only the sets against this bot.
    vs: Option<String>,
}

/// `/bots/NAME`: a bot's page (`?vs=OTHER`: the head-to-head page of the two; 404 for
/// an unknown OTHER or NAME itself).
pub async fn bot_page(
    State(app): State<Arc<AppState>>,
    Path(name): Path<String>,
    Query(q): Query<BotQuery>,
) -> Response {
    let s = app.snapshot();
    let Some(line) = s.standings.bots.iter().find(|b| b.name == name) else {
        return problem_page(
            &app,
            StatusCode::NOT_FOUND,
            &format!("no bot named {name:?}"),
        );
    };
    let history = app.reader.rating_history().await.unwrap_or_default();
    if let Some(vs) = &q.vs {
        let Some(other) = s
            .standings
            .bots
            .iter()
            .find(|b| b.name == *vs && b.name != name)
        else {
            return problem_page(
                &app,
                StatusCode::NOT_FOUND,
                &format!("no other bot named {vs:?} to compare {name:?} with"),
            );
        };
        return match sets::pair_page(&app, &name, vs, None, BOT_SETS).await {
            Ok(sets) => respond(
                StatusCode::OK,
                page(
                    &format!("{name} vs {vs}"),
                    &Status::of(&app),
                    pair_main(line, other, &s.standings, &history, &sets),
                ),
            ),
            Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
        };
    }
    let sets = sets::stored_page(&app, Some(name.clone()), None, BOT_SETS).await;
    let faulted = stderr::faulted_sets(&app, &name).await;
    match (sets, faulted) {
        (Ok(sets), Ok(faulted)) => respond(
            StatusCode::OK,
            page(
                &name,
                &Status::of(&app),
                bot_main_with(
                    line,
                    &sets,
                    &faulted,
                    &s.standings.head_to_head,
                    s.standings.ratings.as_ref(),
                    &history,
                    s.standings.bots.len(),
                ),
            ),
        ),
        (Err(e), _) | (_, Err(e)) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
    }
}

/// `/sets`: the archive, every finished set by pages (`?before=N`, `?after=N`),
/// filtered by bot, pair, a bot's faults or a result; an unknown bot is 404, a query
/// that cannot be answered 400.
pub async fn archive_page(
    State(app): State<Arc<AppState>>,
    Query(q): Query<ArchiveQuery>,
) -> Response {
    let s = app.snapshot();
    for name in q.bot.iter().chain(&q.vs) {
        if !s.standings.bots.iter().any(|b| b.name == *name) {
            return problem_page(
                &app,
                StatusCode::NOT_FOUND,
                &format!("no bot named {name:?}"),
            );
        }
    }
    if let Some(why) = q.refusal() {
        return problem_page(&app, StatusCode::BAD_REQUEST, why);
    }
    match sets::archive_page(&app, &q, ARCHIVE_SETS).await {
        Ok(p) => respond(
            StatusCode::OK,
            page(
                "sets",
                &Status::of(&app),
                archive_main(&s.standings, &q, &p.sets, p.newer, p.older),
            ),
        ),
        Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
    }
}

/// `/workers`: the workers of a shared store.
pub async fn workers_page(State(app): State<Arc<AppState>>) -> Response {
    match app.reader.workers().await {
        Ok((rows, stuck)) => respond(
            StatusCode::OK,
            page(
                "workers",
                &Status::of(&app),
                workers_main(&rows, stuck.as_deref()),
            ),
        ),
        Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, &e),
    }
}

/// `/sets/SET`: a finished set's page.
pub async fn set_page(State(app): State<Arc<AppState>>, Path(set): Path<String>) -> Response {
    match sets::finished_set(&app, &set).await {
        Ok(Some(v)) => respond(StatusCode::OK, page(&set, &Status::of(&app), set_main(&v))),
        Ok(None) => problem_page(
            &app,
            StatusCode::NOT_FOUND,
            &format!("no finished set named {set:?}"),
        ),
        Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
    }
}
