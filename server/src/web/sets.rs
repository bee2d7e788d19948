//! Finished sets as the pages and the API show them (`SetView`): the latest from the
//! runner's snapshot, older ones a page at a time from the store (through
//! `crate::reader::Reader`), of every bot, one bot, a pair, or a bot's faulted sets.

use std::future::Future;
use std::sync::Arc;

use axum::http::StatusCode;

use crate::error::ApiError;
use crate::html::{ArchiveQuery, Outcome};
use crate::state::{AppState, SetView};

/// Sets read from the store at most for one page of the archive with a filter the
/// store's indexes do not answer (a result, or any filter read towards newer sets): a
/// page of rare sets may hold fewer than its length, and its links go on from where
/// the reading stopped. The cost of a page is bounded, whatever the history.
pub(crate) const SCAN: usize = 2_000;
/// Sets read from the store at once for such a page.
const BATCH: usize = 500;

/// A page of the archive: its sets, newest first, and where the pages beside it start.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArchivePage {
    /// The sets, newest first.
    pub sets: Vec<SetView>,
    /// The newer page: the sets numbered after this one (`?after=N`); `None` on the
    /// newest page.
    pub newer: Option<u64>,
    /// The older page: the sets numbered below this one (`?before=N`); `None` on the
    /// oldest page.
    pub older: Option<u64>,
}

/// Whether `set` is one the archive's filter `q` lists.
pub(crate) fn listed(q: &ArchiveQuery, set: &SetView) -> bool {
    let has = |name: &Option<String>| name.as_ref().is_none_or(|n| set.bots.contains(n));
    let faulted = || match (&q.bot, q.faulted.is_some()) {
        (Some(bot), true) => set.faults.iter().any(|f| f.bot == *bot),
        _ => true,
    };
    let result = || match (q.outcome(), &q.bot) {
        (None, _) => true,
        (Some(Outcome::Drawn), _) => set.winner.is_none(),
        (Some(Outcome::Won), Some(bot)) => set.winner.as_ref() == Some(bot),
        (Some(Outcome::Lost), Some(bot)) => set.winner.as_ref().is_some_and(|w| w != bot),
        (Some(_), None) => false,
    };
    has(&q.bot) && has(&q.vs) && faulted() && result()
}

/// A page of the archive with the filter `q`, `limit` sets long: below `q.before`
/// (newest first, through the store's index for the filter: a bot's, a pair's, a bot's
/// faulted sets, or every set's), or after `q.after` (every set read oldest first and
/// kept by the filter). A result filter is applied as the sets are read; at most
/// [`SCAN`] sets are read either way.
pub(crate) async fn archive_page(
    app: &AppState,
    q: &ArchiveQuery,
    limit: usize,
) -> Result<ArchivePage, ApiError> {
    match q.after {
        Some(after) => {
            newer_sets(
                |after, n| set_page(app, league::FinishedQuery::After { after, limit: n }),
                q,
                after,
                limit,
            )
            .await
        }
        None => {
            older_sets(
                |before, n| {
                    let query = match (&q.bot, &q.vs, q.faulted.is_some()) {
                        (Some(a), Some(b), _) => league::FinishedQuery::Between {
                            a: a.clone(),
                            b: b.clone(),
                            before,
                            limit: n,
                        },
                        (Some(bot), None, true) => league::FinishedQuery::Faulted {
                            bot: bot.clone(),
                            before,
                            limit: n,
                        },
                        (bot, _, _) => league::FinishedQuery::Newest {
                            bot: bot.clone(),
                            before,
                            limit: n,
                        },
                    };
                    set_page(app, query)
                },
                q,
                q.before,
                limit,
            )
            .await
        }
    }
}

/// The page below `before` (`None`: the newest), read newest first by `read(before,
/// n)` (a store query that answers the filter but its result), kept by `listed`.
async fn older_sets<R, F>(
    mut read: R,
    q: &ArchiveQuery,
    before: Option<u64>,
    limit: usize,
) -> Result<ArchivePage, ApiError>
where
    R: FnMut(Option<u64>, usize) -> F,
    F: Future<Output = Result<Vec<SetView>, ApiError>>,
{
    let batch = if q.outcome().is_some() { BATCH } else { limit };
    let mut page = ArchivePage {
        // Newer: the sets from `before` on.
        newer: before.map(|b| b.saturating_sub(1)),
        ..ArchivePage::default()
    };
    let mut cursor = before;
    let mut scanned = 0;
    loop {
        let sets = read(cursor, batch).await?;
        let end = sets.len() < batch;
        for set in sets {
            scanned += 1;
            cursor = Some(set.number);
            if listed(q, &set) {
                page.sets.push(set);
                if page.sets.len() == limit {
                    page.older = cursor;
                    return Ok(page);
                }
            }
        }
        if end {
            return Ok(page);
        }
        if scanned >= SCAN {
            page.older = cursor;
            return Ok(page);
        }
    }
}

/// The page after `after`: every set read oldest first by `read(after, n)`, kept by
/// `listed`, shown newest first.
async fn newer_sets<R, F>(
    mut read: R,
    q: &ArchiveQuery,
    after: u64,
    limit: usize,
) -> Result<ArchivePage, ApiError>
where
    R: FnMut(u64, usize) -> F,
    F: Future<Output = Result<Vec<SetView>, ApiError>>,
{
    let mut page = ArchivePage {
        // Older: the sets up to `after`.
        older: Some(after + 1),
        ..ArchivePage::default()
    };
    let mut cursor = after;
    let mut scanned = 0;
    'read: loop {
        let sets = read(cursor, BATCH).await?;
        let end = sets.len() < BATCH;
        for set in sets {
            scanned += 1;
            cursor = set.number;
            if listed(q, &set) {
                page.sets.push(set);
                if page.sets.len() == limit {
                    page.newer = Some(cursor);
                    break 'read;
                }
            }
        }
        if end {
            break;
        }
        if scanned >= SCAN {
            page.newer = Some(cursor);
            break;
        }
    }
    page.sets.reverse();
    Ok(page)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// 300 sets numbered 1 to 300 between x and y; x wins those numbered by a multiple
    /// of 10, every 7th is drawn, y wins the rest.
    fn history() -> Vec<SetView> {
        (1..=300u64)
            .map(|n| {
                let mut v = crate::html::test_data::set_view(1);
                v.number = n;
                v.set = format!("r{n}-x-vs-y");
                v.winner = if n % 10 == 0 {
                    Some("x".into())
                } else if n % 7 == 0 {
                    None
                } else {
                    Some("y".into())
                };
                v
            })
            .collect()
    }

    fn numbers(page: &ArchivePage) -> Vec<u64> {
        page.sets.iter().map(|s| s.number).collect()
    }

    /// The archive's pages read from a store of 300 sets: the newest 50, the page below
    /// it and the page after it are each other's neighbours; a result filter reads
    /// batches and keeps the sets it names, and its links go on from where it stopped.
    #[test]
    fn archive_pages_go_older_and_newer_and_filter_by_result() {
        let all = history();
        let older = |before: Option<u64>, n: usize| {
            let page: Vec<SetView> = all
                .iter()
                .rev()
                .filter(|s| before.is_none_or(|b| s.number < b))
                .take(n)
                .cloned()
                .collect();
            std::future::ready(Ok(page))
        };
        let newer = |after: u64, n: usize| {
            let page: Vec<SetView> = all
                .iter()
                .filter(|s| s.number > after)
                .take(n)
                .cloned()
                .collect();
            std::future::ready(Ok(page))
        };
        let run =
            |f: std::pin::Pin<Box<dyn Future<Output = Result<ArchivePage, ApiError>> + '_>>| {
                tokio::runtime::Builder::new_current_thread()
                    .build()
                    .expect("runtime")
                    .block_on(f)
                    .expect("a page")
            };
        let q = ArchiveQuery::default();
        let first = run(Box::pin(older_sets(older, &q, None, 50)));
        assert_eq!(numbers(&first), (251..=300).rev().collect::<Vec<_>>());
        assert_eq!((first.newer, first.older), (None, Some(251)));
        let second = run(Box::pin(older_sets(older, &q, first.older, 50)));
        assert_eq!(numbers(&second), (201..=250).rev().collect::<Vec<_>>());
        assert_eq!((second.newer, second.older), (Some(250), Some(201)));
        // Back to the newer page: the same sets as the first page's, newest first.
        let back = run(Box::pin(newer_sets(newer, &q, 250, 50)));
        assert_eq!(numbers(&back), numbers(&first));
        assert_eq!((back.newer, back.older), (Some(300), Some(251)));
        // From its newer link on: nothing newer, the newest page says so.
        let none = run(Box::pin(newer_sets(newer, &q, 300, 50)));
        assert_eq!(
            (numbers(&none), none.newer, none.older),
            (vec![], None, Some(301))
        );
        // x's wins: the 30 multiples of 10, newest first, on one page (300 sets read
        // in batches of 500: the end of the store, no older page).
        let won = ArchiveQuery {
            bot: Some("x".into()),
            result: Some("won".into()),
            ..Default::default()
        };
        let wins = run(Box::pin(older_sets(older, &won, None, 50)));
        assert_eq!(
            numbers(&wins),
            (1..=30).rev().map(|k| 10 * k).collect::<Vec<_>>()
        );
        assert_eq!((wins.newer, wins.older), (None, None));
        // Drawn sets, 10 a page: older below the tenth, newer after the first.
        let drawn = ArchiveQuery {
            result: Some("drawn".into()),
            ..Default::default()
        };
        let page = run(Box::pin(older_sets(older, &drawn, Some(200), 10)));
        let want: Vec<u64> = (1..200)
            .rev()
            .filter(|n| n % 7 == 0 && n % 10 != 0)
            .take(10)
            .collect();
        assert_eq!(numbers(&page), want);
        assert_eq!(page.older, want.last().copied());
        assert_eq!(page.newer, Some(199));
        let above = run(Box::pin(newer_sets(newer, &drawn, 199, 10)));
        let want: Vec<u64> = (200..=300)
            .filter(|n| n % 7 == 0 && n % 10 != 0)
            .take(10)
            .collect();
        assert_eq!(
            numbers(&above),
            want.iter().rev().copied().collect::<Vec<_>>()
        );
        assert_eq!(above.newer, want.last().copied());
    }
}
