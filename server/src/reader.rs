//! The pages' own reader of a shared store (PostgreSQL): the workers and the logs the
//! workers sent, read on a connection of its own, on a thread of its own (the runner
//! owns its store; a read never waits for a set's result, and the synchronous client
//! never runs inside the async runtime). Without a shared store there is no reader: no
//! workers, and every log is a file of the league's directory.

use std::sync::mpsc;

use league::{Store, StoredLog, WorkerRow};
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce(&mut dyn Store) + Send>;

/// A connection to the store on a thread; dropped, the thread ends and closes it.
pub struct Reader {
    jobs: mpsc::Sender<Job>,
}

impl Reader {
    /// Starts the thread that owns `store`.
    pub fn start(mut store: Box<dyn Store + Send>) -> std::io::Result<Reader> {
        let (jobs, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("store reader".into())
            .spawn(move || {
                for job in rx {
                    job(&mut *store);
                }
            })?;
        Ok(Reader { jobs })
    }

    async fn ask<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut dyn Store) -> Result<T, league::StoreError> + Send + 'static,
    ) -> Result<T, String> {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Box::new(move |store| {
                let _ = tx.send(job(store).map_err(|e| e.to_string()));
            }))
            .map_err(|_| "the store's reader has stopped".to_string())?;
        rx.await
            .map_err(|_| "the store's reader has stopped".to_string())?
    }

    /// The workers, as `hus workers` lists them.
    pub async fn workers(&self) -> Result<Vec<WorkerRow>, String> {
        self.ask(|store| store.worker_rows()).await
    }

    /// The kept log of set `id`.
    pub async fn log(&self, id: league::SetId) -> Result<Option<StoredLog>, String> {
        self.ask(move |store| store.stored_log(id)).await
    }
}
