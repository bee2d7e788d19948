//! The pages' own reader of the store: the finished sets older than the snapshot's
//! latest (a page at a time), and with a shared store (PostgreSQL) the workers and the
//! logs the workers sent, read on a connection of its own, on a thread of its own (the
//! runner owns its store; a read never waits for a set's result, and the synchronous
//! client never runs inside the async runtime). A read that fails drops the
//! connection; the next read connects again (a database restart costs the pages one
//! error). SQLite: a second connection to the directory's file (its WAL mode lets it
//! read while the runner writes); no workers, and every log is a file of the league's
//! directory.

use std::sync::mpsc;

use league::{PackedLog, Store, StoreError, WorkerRow};
use tokio::sync::oneshot;

/// A read: given the store (or why there is none), it answers its caller and says
/// whether the store failed.
type Job = Box<dyn FnOnce(Result<&mut dyn Store, String>) -> bool + Send>;

/// Opens a connection to the store.
pub type Connect = Box<dyn Fn() -> Result<Box<dyn Store + Send>, StoreError> + Send>;

/// Reads that may wait for the reader at once; past them a page is told the store is
/// busy (503) rather than queued without end: a client that floods the pages with
/// store reads cannot grow the server's memory or delay the others' reads for long.
pub const QUEUED_READS: usize = 64;

/// A connection to the store on a thread; dropped, the thread ends and closes it.
pub struct Reader {
    jobs: mpsc::SyncSender<Job>,
}

impl Reader {
    /// Starts the thread, which connects with `connect` now and after any failure.
    pub fn start(connect: Connect) -> std::io::Result<Reader> {
        let (jobs, rx) = mpsc::sync_channel::<Job>(QUEUED_READS);
        std::thread::Builder::new()
            .name("store reader".into())
            .spawn(move || {
                let mut store: Option<Box<dyn Store + Send>> = connect().ok();
                for job in rx {
                    if store.is_none() {
                        match connect() {
                            Ok(s) => store = Some(s),
                            Err(e) => {
                                job(Err(e.to_string()));
                                continue;
                            }
                        }
                    }
                    if let Some(s) = store.as_mut() {
                        if job(Ok(&mut **s)) {
                            store = None;
                        }
                    }
                }
            })?;
        Ok(Reader { jobs })
    }

    async fn ask<T: Send + 'static>(
        &self,
        read: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, String> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |store| {
            let (answer, failed) = match store {
                Ok(store) => match read(store) {
                    Ok(v) => (Ok(v), false),
                    Err(e) => (Err(e.to_string()), true),
                },
                Err(e) => (Err(e), false),
            };
            let _ = tx.send(answer);
            failed
        });
        self.jobs.try_send(job).map_err(|e| match e {
            mpsc::TrySendError::Full(_) => {
                format!("the store's reader is busy ({QUEUED_READS} reads wait): try again")
            }
            mpsc::TrySendError::Disconnected(_) => "the store's reader has stopped".to_string(),
        })?;
        rx.await
            .map_err(|_| "the store's reader has stopped".to_string())?
    }

    /// The workers, as `hus workers` lists them, and why the league is stuck if it is.
    pub async fn workers(&self) -> Result<(Vec<WorkerRow>, Option<String>), String> {
        self.ask(|store| Ok((store.worker_rows()?, store.stuck()?)))
            .await
    }

    /// The finished sets `query` asks for (a page of a list, or one set by its key).
    pub async fn sets(
        &self,
        query: league::FinishedQuery,
    ) -> Result<Vec<(u64, league::FinishedSet)>, String> {
        self.ask(move |store| store.finished_sets(&query)).await
    }

    /// The sets being played, as the store knows them (the workers' too).
    pub async fn running_sets(&self, limit: usize) -> Result<Vec<league::RunningSet>, String> {
        self.ask(move |store| store.running_sets(limit)).await
    }

    /// The rating history, oldest first.
    pub async fn rating_history(&self) -> Result<Vec<league::RatingPoint>, String> {
        self.ask(|store| store.rating_history()).await
    }

    /// The finished set named `stem`, if there is one.
    pub async fn set(&self, stem: &str) -> Result<Option<(u64, league::FinishedSet)>, String> {
        let keys = league::SetKey::from_stem(stem);
        self.ask(move |store| {
            for key in keys {
                if let Some(found) = store
                    .finished_sets(&league::FinishedQuery::Key(key))?
                    .into_iter()
                    .next()
                {
                    return Ok(Some(found));
                }
            }
            Ok(None)
        })
        .await
    }

    /// Every version of uploaded bot `bot`, oldest first.
    pub async fn versions_of(&self, bot: &str) -> Result<Vec<league::VersionRow>, String> {
        let bot = bot.to_string();
        self.ask(move |store| store.versions_of(&bot)).await
    }

    /// Version `number` of uploaded bot `bot`.
    pub async fn version(
        &self,
        bot: &str,
        number: u32,
    ) -> Result<Option<league::VersionRow>, String> {
        let bot = bot.to_string();
        self.ask(move |store| store.version(&bot, number)).await
    }

    /// The kept log of set `id`, still packed (gzip).
    pub async fn log(&self, id: league::SetId) -> Result<Option<PackedLog>, String> {
        self.ask(move |store| store.stored_log(id)).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{mpsc, Arc, Mutex};

    use futures_util::FutureExt;

    use super::{Reader, QUEUED_READS};

    /// While a read holds the store, QUEUED_READS more may wait; the next one is told
    /// at once that the store is busy, and the waiting ones are answered afterwards.
    #[tokio::test(flavor = "current_thread")]
    async fn past_the_queue_a_read_is_busy_rather_than_kept_waiting() {
        let reader = Reader::start(Box::new(|| {
            league::SqliteStore::in_memory().map(|s| Box::new(s) as Box<dyn league::Store + Send>)
        }))
        .expect("reader");
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let holding = reader.ask(move |_| {
            let _ = started_tx.send(());
            let _ = release_rx.lock().map(|rx| rx.recv());
            Ok(1)
        });
        let mut holding = Box::pin(holding);
        assert!((&mut holding).now_or_never().is_none());
        started_rx.recv().expect("the read started");
        let mut waiting = Vec::new();
        for i in 0..QUEUED_READS {
            let mut read = Box::pin(reader.ask(move |_| Ok(i)));
            assert!(
                (&mut read).now_or_never().is_none(),
                "read {i} is answered later"
            );
            waiting.push(read);
        }
        let busy = reader.ask(|_| Ok(0)).await;
        assert_eq!(
            busy,
            Err(format!(
                "the store's reader is busy ({QUEUED_READS} reads wait): try again"
            ))
        );
        release_tx.send(()).expect("release");
        assert_eq!(holding.await, Ok(1));
        for (i, read) in waiting.into_iter().enumerate() {
            assert_eq!(read.await, Ok(i));
        }
    }
}
