//! The store on a thread of its own, for async code: [`StoreThread`] owns a store on
//! a plain thread (no async runtime there) and runs the operations its async callers
//! send it, one at a time, in the order they were sent.
//!
//! Why: the stores are synchronous. `rusqlite` just blocks, but the PostgreSQL client
//! (`postgres`) drives a runtime of its own and panics when it is called, or dropped,
//! inside another one. Code that holds only a `StoreThread` cannot make that mistake:
//! the store is out of its reach, and every operation runs on the store's thread. The
//! thread ends when its handle is shut down or dropped, and closes the store there.
//!
//! An operation that panics ends the thread (the store, perhaps half-way through an
//! operation, is closed); its caller and every later one get
//! [`StoreError::ThreadStopped`], never a hang or a panic of their own.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use tokio::sync::{mpsc, oneshot};

use super::StoreError;

/// An operation sent to the thread: it answers its caller itself; false when it
/// panicked (the thread then stops).
type Job<S> = Box<dyn FnOnce(&mut S) -> bool + Send>;

/// Operations waiting for the thread at most; a caller beyond waits its turn.
const QUEUE: usize = 64;

/// The handle of a store that lives on a thread of its own (see the module's doc).
pub struct StoreThread<S> {
    jobs: mpsc::Sender<Job<S>>,
    /// Answered (or dropped) once the thread has closed its store.
    closed: oneshot::Receiver<()>,
}

/// One more caller of a [`StoreThread`]'s store, for a second owner of calls (the
/// server's reads for its pages beside the coordinator's claims). The thread ends once
/// its handle is shut down and every caller is dropped.
pub struct StoreCaller<S> {
    jobs: mpsc::Sender<Job<S>>,
}

impl<S> Clone for StoreCaller<S> {
    fn clone(&self) -> Self {
        StoreCaller {
            jobs: self.jobs.clone(),
        }
    }
}

impl<S: Send + 'static> StoreCaller<S> {
    /// As [`StoreThread::call`].
    pub async fn call<T, E>(
        &self,
        op: impl FnOnce(&mut S) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        call(&self.jobs, op).await
    }
}

impl<S: Send + 'static> StoreThread<S> {
    /// Starts the thread, which owns `store` from now on. Fails only when the
    /// operating system cannot start a thread.
    pub fn spawn(store: S) -> std::io::Result<StoreThread<S>> {
        let (jobs, mut queue) = mpsc::channel::<Job<S>>(QUEUE);
        let (closed_tx, closed) = oneshot::channel();
        std::thread::Builder::new()
            .name("league store".into())
            .spawn(move || {
                let mut store = store;
                // `blocking_recv`: this thread belongs to no runtime.
                while let Some(job) = queue.blocking_recv() {
                    if !job(&mut store) {
                        break;
                    }
                }
                // Closed here, on this thread, before anyone hears it is: waiting
                // callers' answers are dropped with the queue (they get an error).
                drop(queue);
                drop(store);
                let _ = closed_tx.send(());
            })?;
        Ok(StoreThread { jobs, closed })
    }

    /// Runs `op` on the store's thread and returns its answer. `op`'s error type takes
    /// [`StoreError::ThreadStopped`] too: when the thread is gone (an earlier operation
    /// panicked) or `op` itself panics.
    pub async fn call<T, E>(
        &self,
        op: impl FnOnce(&mut S) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        call(&self.jobs, op).await
    }

    /// One more caller of this store (see [`StoreCaller`]).
    pub fn caller(&self) -> StoreCaller<S> {
        StoreCaller {
            jobs: self.jobs.clone(),
        }
    }

    /// Ends the thread once the operations already sent are done, and waits until it
    /// has closed the store. (Dropping the handle ends it too, without waiting.)
    pub async fn shutdown(self) {
        let StoreThread { jobs, closed } = self;
        drop(jobs);
        // An error here is a thread that already ended (a panic): its store is closed.
        let _ = closed.await;
    }
}

/// Sends `op` to the thread behind `jobs` and waits for its answer.
async fn call<S: Send + 'static, T, E>(
    jobs: &mpsc::Sender<Job<S>>,
    op: impl FnOnce(&mut S) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    let (answer, answered) = oneshot::channel();
    let job: Job<S> = Box::new(
        move |store| match catch_unwind(AssertUnwindSafe(|| op(store))) {
            Ok(result) => {
                let _ = answer.send(result);
                true
            }
            Err(panic) => {
                let _ = answer.send(Err(E::from(StoreError::ThreadStopped {
                    why: format!("a store operation panicked: {}", panic_text(&*panic)),
                })));
                false
            }
        },
    );
    if jobs.send(job).await.is_err() {
        return Err(E::from(stopped()));
    }
    match answered.await {
        Ok(result) => result,
        Err(_) => Err(E::from(stopped())),
    }
}

fn stopped() -> StoreError {
    StoreError::ThreadStopped {
        why: "an earlier operation panicked".into(),
    }
}

/// A panic's message, when it has one.
fn panic_text(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc as std_mpsc;

    use super::*;
    use crate::log_place::{LogForm, LogPlace};
    use crate::schedule::{PlannedSet, SetKey};
    use crate::store::{BotEntry, Claims, Reads, Schedule, SetOutcome, SqliteStore};

    /// A real SQLite store that says which thread closes it.
    struct Noted {
        store: SqliteStore,
        closed_on: std_mpsc::Sender<String>,
    }

    impl Drop for Noted {
        fn drop(&mut self) {
            let name = std::thread::current().name().unwrap_or("").to_string();
            let _ = self.closed_on.send(name);
        }
    }

    fn entries() -> Vec<BotEntry> {
        ["alpha", "beta"]
            .iter()
            .map(|n| BotEntry {
                name: n.to_string(),
                command: format!("./{n}"),
            })
            .collect()
    }

    fn planned(rounds: u32) -> Vec<PlannedSet> {
        (1..=rounds)
            .map(|round| PlannedSet {
                key: SetKey {
                    round,
                    a: "alpha".into(),
                    b: "beta".into(),
                },
                seed: u64::from(round),
            })
            .collect()
    }

    fn noted(dir: &tempfile::TempDir) -> (Noted, std_mpsc::Receiver<String>) {
        let (closed_on, closed) = std_mpsc::channel();
        let store = SqliteStore::open(&dir.path().join("league.sqlite"), true).unwrap();
        (Noted { store, closed_on }, closed)
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn answers_come_back_in_the_order_sent() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _closed) = noted(&dir);
        let thread = StoreThread::spawn(store).unwrap();
        runtime().block_on(async {
            let report = thread
                .call(|s| s.store.sync(&entries(), &planned(3)))
                .await
                .unwrap();
            assert_eq!(report.added_sets, 3);
            // Three claims sent at once, answered in the order sent: rounds 1, 2, 3.
            let (a, b, c) = tokio::join!(
                thread.call(|s| s.store.claim_next()),
                thread.call(|s| s.store.claim_next()),
                thread.call(|s| s.store.claim_next()),
            );
            let rounds: Vec<u32> = [a, b, c]
                .into_iter()
                .map(|r| r.unwrap().unwrap().key.round)
                .collect();
            assert_eq!(rounds, [1, 2, 3]);
            assert_eq!(thread.call(|s| s.store.claim_next()).await.unwrap(), None);
            let progress = thread.call(|s| s.store.progress()).await.unwrap();
            assert_eq!((progress.scheduled, progress.running), (3, 3));
            thread.shutdown().await;
        });
    }

    #[test]
    fn a_store_error_comes_back_as_that_error() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _closed) = noted(&dir);
        let thread = StoreThread::spawn(store).unwrap();
        runtime().block_on(async {
            // A failure inside an operation comes back as the store's error, and the
            // thread goes on.
            let refused = thread
                .call(|s| {
                    s.store.sync(&entries(), &planned(1))?;
                    let set = s.store.claim_next()?.expect("a set");
                    s.store.fail_at(Some("record-after-games"));
                    let log = LogPlace::file(&set.key.stem(), LogForm::Plain);
                    let refused = s.store.record(set.claim(), &SetOutcome::new(log));
                    s.store.fail_at(None);
                    refused
                })
                .await;
            match refused {
                Err(StoreError::Invalid { what, .. }) => {
                    assert_eq!(what, "injected failure at record-after-games")
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(thread.call(|s| s.store.bots()).await.unwrap().len(), 2);
            thread.shutdown().await;
        });
    }

    #[test]
    fn a_panicking_operation_is_an_error_and_the_thread_stops_for_everyone() {
        let dir = tempfile::tempdir().unwrap();
        let (store, closed) = noted(&dir);
        let thread = StoreThread::spawn(store).unwrap();
        runtime().block_on(async {
            let panicked = thread
                .call(|_| -> Result<(), StoreError> { panic!("broken on purpose") })
                .await;
            match panicked {
                Err(StoreError::ThreadStopped { why }) => {
                    assert_eq!(why, "a store operation panicked: broken on purpose")
                }
                other => panic!("{other:?}"),
            }
            // Every later call: an error, not a hang.
            for _ in 0..3 {
                match thread.call(|s| s.store.bots()).await {
                    Err(StoreError::ThreadStopped { why }) => {
                        assert_eq!(why, "an earlier operation panicked")
                    }
                    other => panic!("{other:?}"),
                }
            }
            thread.shutdown().await;
        });
        assert_eq!(closed.try_recv().as_deref(), Ok("league store"));
    }

    #[test]
    fn shutdown_closes_the_store_on_its_thread_after_the_sent_operations() {
        let dir = tempfile::tempdir().unwrap();
        let (store, closed) = noted(&dir);
        let thread = StoreThread::spawn(store).unwrap();
        runtime().block_on(async {
            thread
                .call(|s| s.store.sync(&entries(), &planned(2)))
                .await
                .unwrap();
            assert!(closed.try_recv().is_err());
            thread.shutdown().await;
        });
        // Closed by the store's own thread, not by the runtime's, before shutdown
        // returned.
        assert_eq!(closed.try_recv().as_deref(), Ok("league store"));
        // What it wrote is in the file.
        let again = SqliteStore::open(&dir.path().join("league.sqlite"), false).unwrap();
        assert_eq!(again.progress().unwrap().pending, 2);
    }

    #[test]
    fn a_dropped_handle_closes_the_store_on_its_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (store, closed) = noted(&dir);
        let thread = StoreThread::spawn(store).unwrap();
        drop(thread);
        assert_eq!(closed.recv().as_deref(), Ok("league store"));
    }
}
