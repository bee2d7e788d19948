//! Replay pages (`/sets/SET/replay`), built once and kept. Building a page reads and
//! checks the whole log (a second or more for 100,000 moves), so:
//!
//! - the pages of finished sets are kept, the least recently used dropped first once
//!   they hold more than `max_kept_bytes` (a running set's page is built for each
//!   request: its log grows); so are their refusals (422: a log that cannot make a
//!   page), so that a page that cannot be built costs one build, not one per request;
//! - requests for a page being built wait for that build instead of starting their own
//!   (single flight);
//! - at most `builders` pages are built at once (a semaphore; later builds wait within
//!   the request's time limit);
//! - a build stops as soon as no request waits for it any more (its requests timed out
//!   or their clients went): the waiters share the build, and when the last one is
//!   dropped the build's stop flag is set, which the builder checks at every record
//!   (`referee::viewer_page`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode};
use futures_util::future::{BoxFuture, Shared, WeakShared};
use futures_util::FutureExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// Pages built at once, by default.
pub const BUILDERS: usize = 2;
/// Moves a replay page may hold, by default (`hus serve --max-page-moves`).
pub const MAX_PAGE_MOVES: u64 = 200_000;
/// Bytes of finished sets' pages kept, by default: a page of 100,000 moves is about
/// 1.5 MB.
pub const KEPT_BYTES: usize = 32 * 1024 * 1024;

/// A built page: the HTML and the `Content-Security-Policy` that allows its inline
/// script and style.
#[derive(Debug)]
pub struct Page {
    /// The page.
    pub html: Bytes,
    /// Its policy.
    pub csp: HeaderValue,
}

/// What a build gives every request that waits for it.
pub type Built = Result<Arc<Page>, ApiError>;

type Flight = Shared<BoxFuture<'static, Built>>;

/// A build's right to run: one of the builders' places, and the flag that says nobody
/// waits for the page any more. The build holds it until it ends, so that a build that
/// is stopping still counts against the bound until it has stopped.
pub struct Ticket {
    stop: Arc<AtomicBool>,
    _place: OwnedSemaphorePermit,
}

impl Ticket {
    /// Set when no request waits for this build any more: the builder should give up.
    pub fn stop(&self) -> &AtomicBool {
        &self.stop
    }
}

/// Sets the stop flag when dropped: the build's shared future is dropped when its last
/// waiter is.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Bytes a kept refusal counts for, besides its sentence: the map's entry and key.
const REFUSAL_BYTES: usize = 256;

struct Kept {
    /// The page, or its refusal.
    built: Built,
    /// When it was last served, on `Inner::clock`.
    used: u64,
}

impl Kept {
    /// Bytes it counts for against `max_kept_bytes`.
    fn size(built: &Built) -> usize {
        match built {
            Ok(page) => page.html.len(),
            Err(refusal) => refusal.what().len() + REFUSAL_BYTES,
        }
    }
}

/// Whether a build's outcome is kept for a finished set: a page, or a refusal of the
/// log itself (422); never an error of the moment (a store out of reach, a stopped
/// build).
fn keepable(built: &Built) -> bool {
    match built {
        Ok(_) => true,
        Err(e) => e.status() == StatusCode::UNPROCESSABLE_ENTITY,
    }
}

#[derive(Default)]
struct Inner {
    /// Finished sets' pages, by set.
    kept: HashMap<String, Kept>,
    kept_bytes: usize,
    clock: u64,
    /// Builds under way, by set and whether the set is finished (a running set's page
    /// is never taken for a finished one's). Weak: a build nobody waits for is dropped.
    flights: HashMap<(String, bool), WeakShared<BoxFuture<'static, Built>>>,
}

/// The replay pages: kept ones and builds under way.
pub struct ReplayPages {
    builders: Arc<Semaphore>,
    max_kept_bytes: usize,
    inner: Mutex<Inner>,
}

impl ReplayPages {
    /// At most `builders` builds at once, and `max_kept_bytes` of kept pages.
    pub fn new(builders: usize, max_kept_bytes: usize) -> ReplayPages {
        ReplayPages {
            builders: Arc::new(Semaphore::new(builders)),
            max_kept_bytes,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The page of `set`: kept (a finished set's), or from the build under way, or from
    /// a new build by `build`, which is given its ticket once a builder's place is free.
    /// A finished set's page is kept once built.
    pub async fn get<F>(&self, set: &str, finished: bool, build: F) -> Built
    where
        F: FnOnce(Ticket) -> BoxFuture<'static, Result<Page, ApiError>> + Send + 'static,
    {
        let flight = {
            let mut inner = self.lock();
            inner.clock += 1;
            let now = inner.clock;
            if finished {
                if let Some(kept) = inner.kept.get_mut(set) {
                    kept.used = now;
                    return kept.built.clone();
                }
            }
            let key = (set.to_string(), finished);
            match inner.flights.get(&key).and_then(WeakShared::upgrade) {
                Some(flight) => flight,
                None => {
                    let flight = self.start(build);
                    inner.flights.retain(|_, f| f.upgrade().is_some());
                    if let Some(weak) = flight.downgrade() {
                        inner.flights.insert(key, weak);
                    }
                    flight
                }
            }
        };
        let mine = flight.clone();
        let built = flight.await;
        let mut inner = self.lock();
        let key = (set.to_string(), finished);
        if let Some(current) = inner.flights.get(&key).and_then(WeakShared::upgrade) {
            if current.ptr_eq(&mine) {
                inner.flights.remove(&key);
            }
        }
        drop(mine);
        if finished && keepable(&built) {
            self.keep(&mut inner, set, &built);
        }
        built
    }

    /// A build, shared by every request that waits for it.
    fn start<F>(&self, build: F) -> Flight
    where
        F: FnOnce(Ticket) -> BoxFuture<'static, Result<Page, ApiError>> + Send + 'static,
    {
        let builders = self.builders.clone();
        async move {
            let place = builders.acquire_owned().await.map_err(|_| {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping")
            })?;
            let stop = Arc::new(AtomicBool::new(false));
            let _stop_on_drop = StopOnDrop(stop.clone());
            let page = build(Ticket {
                stop,
                _place: place,
            })
            .await?;
            Ok(Arc::new(page))
        }
        .boxed()
        .shared()
    }

    /// Keeps a finished set's page or refusal, dropping the least recently used ones to
    /// make room; a page larger than the whole room is not kept.
    fn keep(&self, inner: &mut Inner, set: &str, built: &Built) {
        let size = Kept::size(built);
        if size > self.max_kept_bytes || inner.kept.contains_key(set) {
            return;
        }
        while inner.kept_bytes + size > self.max_kept_bytes {
            let Some(oldest) = inner
                .kept
                .iter()
                .min_by_key(|(_, k)| k.used)
                .map(|(name, _)| name.clone())
            else {
                break;
            };
            if let Some(gone) = inner.kept.remove(&oldest) {
                inner.kept_bytes -= Kept::size(&gone.built);
            }
        }
        inner.kept_bytes += size;
        let used = inner.clock;
        inner.kept.insert(
            set.to_string(),
            Kept {
                built: built.clone(),
                used,
            },
        );
    }

    /// Bytes of the pages (and refusals) kept, and how many.
    pub fn kept(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.kept_bytes, inner.kept.len())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    use super::*;

    fn page(text: &str) -> Page {
        Page {
            html: Bytes::from(text.to_string()),
            csp: HeaderValue::from_static("default-src 'none'"),
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime")
    }

    /// A build that takes `secs` seconds (tokio's clock), counting its starts in
    /// `started` and its stops (the flag seen set) in `stopped`.
    fn slow(
        text: &'static str,
        secs: u64,
        started: Arc<AtomicUsize>,
        stopped: Arc<AtomicUsize>,
    ) -> impl FnOnce(Ticket) -> BoxFuture<'static, Result<Page, ApiError>> {
        move |ticket| {
            started.fetch_add(1, Ordering::SeqCst);
            async move {
                for _ in 0..secs * 10 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(page(text))
            }
            .then(move |page| async move {
                if ticket.stop().load(Ordering::SeqCst) {
                    stopped.fetch_add(1, Ordering::SeqCst);
                }
                page
            })
            .boxed()
        }
    }

    #[test]
    fn forty_requests_for_one_page_share_one_build_and_later_ones_get_the_kept_page() {
        let rt = runtime();
        rt.block_on(async {
            let pages = Arc::new(ReplayPages::new(2, 1000));
            let started = Arc::new(AtomicUsize::new(0));
            let stopped = Arc::new(AtomicUsize::new(0));
            let mut waiting = Vec::new();
            for _ in 0..40 {
                let pages = pages.clone();
                let build = slow("P1", 2, started.clone(), stopped.clone());
                waiting.push(tokio::spawn(
                    async move { pages.get("s1", true, build).await },
                ));
            }
            for w in waiting {
                let built = w.await.expect("joined").expect("built");
                assert_eq!(built.html, "P1");
            }
            assert_eq!(started.load(Ordering::SeqCst), 1);
            assert_eq!(pages.kept(), (2, 1));
            let again = pages
                .get(
                    "s1",
                    true,
                    slow("other", 2, started.clone(), stopped.clone()),
                )
                .await
                .expect("kept");
            assert_eq!(
                (again.html.as_ref(), started.load(Ordering::SeqCst)),
                (b"P1".as_ref(), 1)
            );
            // A running set's page is built again for each request, and not kept.
            for _ in 0..2 {
                let run = pages
                    .get("s2", false, slow("R", 1, started.clone(), stopped.clone()))
                    .await
                    .expect("built");
                assert_eq!(run.html, "R");
            }
            assert_eq!(started.load(Ordering::SeqCst), 3);
            assert_eq!(pages.kept(), (2, 1));
        });
    }

    /// A build that fails with `status`, counting its starts.
    fn failing(
        status: StatusCode,
        started: Arc<AtomicUsize>,
    ) -> impl FnOnce(Ticket) -> BoxFuture<'static, Result<Page, ApiError>> {
        move |_ticket| {
            started.fetch_add(1, Ordering::SeqCst);
            async move { Err(ApiError::new(status, "no page")) }.boxed()
        }
    }

    #[test]
    fn a_refused_page_costs_one_build_and_an_error_of_the_moment_is_not_kept() {
        let rt = runtime();
        rt.block_on(async {
            let pages = ReplayPages::new(2, 1000);
            let started = Arc::new(AtomicUsize::new(0));
            for _ in 0..5 {
                let refused = pages
                    .get(
                        "s1",
                        true,
                        failing(StatusCode::UNPROCESSABLE_ENTITY, started.clone()),
                    )
                    .await
                    .expect_err("refused");
                assert_eq!(
                    (refused.status(), refused.what()),
                    (StatusCode::UNPROCESSABLE_ENTITY, "no page")
                );
            }
            assert_eq!(started.load(Ordering::SeqCst), 1);
            assert_eq!(pages.kept(), ("no page".len() + REFUSAL_BYTES, 1));
            // A running set's refusal is not kept (its log grows), nor a store out of
            // reach.
            for (set, finished, status) in [
                ("s2", false, StatusCode::UNPROCESSABLE_ENTITY),
                ("s3", true, StatusCode::SERVICE_UNAVAILABLE),
            ] {
                for _ in 0..2 {
                    let error = pages
                        .get(set, finished, failing(status, started.clone()))
                        .await
                        .expect_err("failed");
                    assert_eq!(error.status(), status);
                }
            }
            assert_eq!(started.load(Ordering::SeqCst), 5);
            assert_eq!(pages.kept().1, 1);
        });
    }

    #[test]
    fn a_build_nobody_waits_for_is_stopped_and_frees_its_place() {
        let rt = runtime();
        rt.block_on(async {
            let pages = Arc::new(ReplayPages::new(1, 1000));
            let flag = Arc::new(Mutex::new(None::<Arc<AtomicBool>>));
            let seen = flag.clone();
            // As the server's builds do, the work runs apart from the request (there on
            // a blocking thread) and holds the only place until it sees the stop flag.
            let build = move |ticket: Ticket| {
                *seen.lock().expect("lock") = Some(ticket.stop.clone());
                let work = tokio::spawn(async move {
                    while !ticket.stop().load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    drop(ticket);
                });
                async move {
                    let _ = work.await;
                    Err(ApiError::new(StatusCode::GONE, "stopped"))
                }
                .boxed()
            };
            let waiter = {
                let pages = pages.clone();
                tokio::spawn(async move { pages.get("s1", true, build).await })
            };
            tokio::time::sleep(Duration::from_secs(1)).await;
            let stop = flag
                .lock()
                .expect("lock")
                .clone()
                .expect("the build started");
            assert!(!stop.load(Ordering::SeqCst));
            // The request goes (its client left, its time ran out).
            waiter.abort();
            let _ = waiter.await;
            assert!(stop.load(Ordering::SeqCst), "the build was told to stop");
            // Its place is free: another set's page is built.
            let started = Arc::new(AtomicUsize::new(0));
            let stopped = Arc::new(AtomicUsize::new(0));
            let other = tokio::time::timeout(
                Duration::from_secs(10),
                pages.get("s2", true, slow("P2", 1, started.clone(), stopped.clone())),
            )
            .await
            .expect("not stuck behind the stopped build")
            .expect("built");
            assert_eq!(other.html, "P2");
            assert_eq!(stopped.load(Ordering::SeqCst), 0);
            assert_eq!(pages.kept(), (2, 1));
        });
    }

    #[test]
    fn kept_pages_stay_within_their_bytes_dropping_the_least_recently_used() {
        let rt = runtime();
        rt.block_on(async {
            let pages = ReplayPages::new(2, 10);
            let started = Arc::new(AtomicUsize::new(0));
            let stopped = Arc::new(AtomicUsize::new(0));
            let get = |set: &'static str, text: &'static str| {
                pages.get(set, true, slow(text, 0, started.clone(), stopped.clone()))
            };
            assert_eq!(get("a", "aaaa").await.expect("a").html, "aaaa");
            assert_eq!(get("b", "bbbb").await.expect("b").html, "bbbb");
            // a is used again: b is now the least recently used.
            assert_eq!(get("a", "new").await.expect("a").html, "aaaa");
            assert_eq!(get("c", "cccc").await.expect("c").html, "cccc");
            assert_eq!(pages.kept(), (8, 2));
            assert_eq!(
                get("b", "BBBB").await.expect("b").html,
                "BBBB",
                "built again"
            );
            assert_eq!(
                get("a", "new").await.expect("a").html,
                "new",
                "a made room for b"
            );
            // Too big to keep at all.
            assert_eq!(get("d", "ddddddddddd").await.expect("d").html.len(), 11);
            assert_eq!(pages.kept().1, 2);
            assert_eq!(started.load(Ordering::SeqCst), 6);
        });
    }
}
