//! Finished sets as the pages and the API show them (`SetView`): the latest from the
//! runner's snapshot, older ones a page at a time from the store (through
//! `crate::reader::Reader`), of every bot, one bot, a pair, or a bot's faulted sets.

use std::sync::Arc;

use axum::http::StatusCode;

use crate::error::ApiError;
use crate::state::{AppState, SetView};

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
