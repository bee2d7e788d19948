//! The batches of the SPRT gate's tests in the store (docs/upload.md, "The SPRT
//! gate"), table `gate_batches`: the match server queues a test's batches, the workers
//! (and the server's own threads) claim them with a lease as they claim sets, play
//! them (`crate::gate::play_batch`) and record each batch's pentanomial with its log
//! (gzip); the server reads them back, keeps the tally and ends the test, which
//! deletes its rows. A batch whose lease ran out (its worker went silent) is queued
//! again at the next claim. Gate games are never sets: they count in no standings
//! and no rating.
//!
//! Times are Unix seconds given by the callers (`now`, `until`), read from
//! [`GateBatches::gate_clock`] (PostgreSQL's clock on a shared store): the lease's end is
//! written by the claimer and compared by the next claimer, as with sets the store's
//! own clock would be; passing them keeps the store's tests free of waiting.

use super::StoreError;

/// A batch to queue: which test, which batch, and what the worker needs to play it
/// (`crate::gate::BatchPlan`: the test's seed, bound of games and pairs a batch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateBatch {
    /// The test's name (`NEW-vs-ACTIVE`, unique among the server's tests).
    pub test: String,
    /// The batch's number k, from 0.
    pub batch: u32,
    /// The new version, bot A (`NAME.vN`).
    pub candidate: String,
    /// The active version, bot B (`NAME.vM`).
    pub active: String,
    /// The test's seed.
    pub seed: u64,
    /// The test's bound of games.
    pub games: u32,
    /// Game pairs a batch.
    pub pairs: u32,
}

/// A batch claimed: the batch and the attempt that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedBatch {
    /// The batch.
    pub batch: GateBatch,
    /// The claim's attempt (1 for the first): renewals and the result name it, so a
    /// worker whose lease ran out and was taken over changes nothing.
    pub attempt: u32,
}

/// How a batch ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchDone {
    /// Its pairs by bot A's points: 0, 1/2, 1, 3/2, 2.
    pub pentanomial: [u64; 5],
    /// Games played.
    pub games: u32,
    /// Its log, gzip, as a worker sends a set's.
    pub log: Option<Vec<u8>>,
    /// Why it could not be played (then it counts for nothing and fails its test).
    pub error: Option<String>,
}

/// Where a batch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchState {
    /// Waiting for a player.
    Queued,
    /// Claimed, its lease running.
    Running,
    /// Played: its pentanomial is in.
    Done,
    /// It could not be played (`error`).
    Failed,
}

impl BatchState {
    /// As stored: `queued`, `running`, `done`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            BatchState::Queued => "queued",
            BatchState::Running => "running",
            BatchState::Done => "done",
            BatchState::Failed => "failed",
        }
    }

    /// The state stored as `text`.
    pub fn parse(text: &str) -> Option<BatchState> {
        Some(match text {
            "queued" => BatchState::Queued,
            "running" => BatchState::Running,
            "done" => BatchState::Done,
            "failed" => BatchState::Failed,
            _ => return None,
        })
    }
}

/// A batch of a test as the server reads it back (without its log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateBatchRow {
    /// Its number.
    pub batch: u32,
    /// Where it is.
    pub state: BatchState,
    /// Who claimed it last (empty: nobody yet).
    pub worker: String,
    /// Claims so far.
    pub attempts: u32,
    /// Its pairs, once done.
    pub pentanomial: [u64; 5],
    /// Games played, once done.
    pub games: u32,
    /// Why it failed.
    pub error: String,
    /// Its place among the test's ended batches (1 for the first to end), once ended.
    pub ended: Option<u32>,
}

/// The gate's batches. Each call that changes more than one row is one transaction.
pub trait GateBatches {
    /// Queues `batches` (of one test or several). A batch already there is left as it
    /// is.
    fn queue_gate_batches(&mut self, batches: &[GateBatch]) -> Result<(), StoreError>;

    /// Claims the queued batch with the lowest number (of test `test`, or of any test)
    /// for `worker`, its lease running to `now + lease` seconds; first, batches whose
    /// lease ended before `now` are queued again.
    fn claim_gate_batch(
        &mut self,
        worker: &str,
        test: Option<&str>,
        now: f64,
        lease: f64,
    ) -> Result<Option<ClaimedBatch>, StoreError>;

    /// Renews attempt `attempt`'s lease of a batch to `until`; false if that attempt no
    /// longer holds it (taken over, or its test ended).
    fn renew_gate_batch(
        &mut self,
        test: &str,
        batch: u32,
        attempt: u32,
        until: f64,
    ) -> Result<bool, StoreError>;

    /// Records how attempt `attempt` of a batch ended; false (nothing recorded) if that
    /// attempt no longer holds it.
    fn finish_gate_batch(
        &mut self,
        test: &str,
        batch: u32,
        attempt: u32,
        done: &BatchDone,
    ) -> Result<bool, StoreError>;

    /// The batches of test `test`, by number.
    fn gate_batch_rows(&self, test: &str) -> Result<Vec<GateBatchRow>, StoreError>;

    /// The log (gzip) of a batch played, if its player sent one.
    fn gate_batch_log(&self, test: &str, batch: u32) -> Result<Option<Vec<u8>>, StoreError>;

    /// Ends test `test`: its batches go (a player still on one loses it); returns how
    /// many.
    fn end_gate_test(&mut self, test: &str) -> Result<usize, StoreError>;

    /// Removes every test's batches (a server starting: the tests it ran are over).
    fn clear_gate_batches(&mut self) -> Result<usize, StoreError>;

    /// Now, as the leases of batches count it (Unix seconds): the store's own clock
    /// where players on many machines share it (PostgreSQL's, as for the sets'
    /// leases), so that no machine's skew lets it take over a batch still played;
    /// this machine's clock otherwise.
    fn gate_clock(&mut self) -> Result<f64, StoreError> {
        Ok(crate::gate::unix_now())
    }
}

/// A count stored as a signed integer, read back; a negative one is invalid.
pub(crate) fn count_of(place: &str, what: &str, n: i64) -> Result<u64, StoreError> {
    u64::try_from(n).map_err(|_| StoreError::Invalid {
        place: place.to_string(),
        what: format!("a gate batch's {what} is {n}"),
    })
}

/// A state stored as `text`, or invalid.
pub(crate) fn batch_state(place: &str, text: &str) -> Result<BatchState, StoreError> {
    BatchState::parse(text).ok_or_else(|| StoreError::Invalid {
        place: place.to_string(),
        what: format!("a gate batch's state is {text:?}"),
    })
}

/// A stored row's fields, as both stores read them.
pub(crate) struct RawBatchRow {
    pub batch: i64,
    pub state: String,
    pub worker: String,
    pub attempts: i64,
    pub counts: [i64; 5],
    pub games: i64,
    pub error: String,
    pub ended: Option<i64>,
}

impl RawBatchRow {
    /// The row, checked.
    pub(crate) fn check(self, place: &str) -> Result<GateBatchRow, StoreError> {
        let mut pentanomial = [0u64; 5];
        for (p, c) in pentanomial.iter_mut().zip(self.counts) {
            *p = count_of(place, "count", c)?;
        }
        let small = |what: &str, n: i64| -> Result<u32, StoreError> {
            u32::try_from(n).map_err(|_| StoreError::Invalid {
                place: place.to_string(),
                what: format!("a gate batch's {what} is {n}"),
            })
        };
        Ok(GateBatchRow {
            batch: small("number", self.batch)?,
            state: batch_state(place, &self.state)?,
            worker: self.worker,
            attempts: small("attempts", self.attempts)?,
            pentanomial,
            games: small("games", self.games)?,
            error: self.error,
            ended: self.ended.map(|e| small("end", e)).transpose()?,
        })
    }
}

/// The claimed row's fields, as both stores read them.
pub(crate) struct RawClaim {
    pub test: String,
    pub batch: i64,
    pub candidate: String,
    pub active: String,
    pub seed: i64,
    pub games: i64,
    pub pairs: i64,
    pub attempts: i64,
}

impl RawClaim {
    /// The claim, checked.
    pub(crate) fn check(self, place: &str) -> Result<ClaimedBatch, StoreError> {
        let small = |what: &str, n: i64| -> Result<u32, StoreError> {
            u32::try_from(n).map_err(|_| StoreError::Invalid {
                place: place.to_string(),
                what: format!("a gate batch's {what} is {n}"),
            })
        };
        Ok(ClaimedBatch {
            batch: GateBatch {
                test: self.test,
                batch: small("number", self.batch)?,
                candidate: self.candidate,
                active: self.active,
                // The seed is kept as its 64 bits.
                seed: self.seed as u64,
                games: small("games", self.games)?,
                pairs: small("pairs", self.pairs)?,
            },
            attempt: small("attempts", self.attempts)?,
        })
    }
}

/// Counts as the stores keep them (BIGINT); a count past `i64::MAX` is kept as the
/// largest (never reached: at most 1000 pairs a batch).
pub(crate) fn stored_counts(counts: [u64; 5]) -> [i64; 5] {
    counts.map(|c| i64::try_from(c).unwrap_or(i64::MAX))
}

/// The boxed store's batches are its store's.
impl<S: GateBatches + ?Sized> GateBatches for Box<S> {
    fn queue_gate_batches(&mut self, batches: &[GateBatch]) -> Result<(), StoreError> {
        (**self).queue_gate_batches(batches)
    }
    fn claim_gate_batch(
        &mut self,
        worker: &str,
        test: Option<&str>,
        now: f64,
        lease: f64,
    ) -> Result<Option<ClaimedBatch>, StoreError> {
        (**self).claim_gate_batch(worker, test, now, lease)
    }
    fn renew_gate_batch(
        &mut self,
        test: &str,
        batch: u32,
        attempt: u32,
        until: f64,
    ) -> Result<bool, StoreError> {
        (**self).renew_gate_batch(test, batch, attempt, until)
    }
    fn finish_gate_batch(
        &mut self,
        test: &str,
        batch: u32,
        attempt: u32,
        done: &BatchDone,
    ) -> Result<bool, StoreError> {
        (**self).finish_gate_batch(test, batch, attempt, done)
    }
    fn gate_batch_rows(&self, test: &str) -> Result<Vec<GateBatchRow>, StoreError> {
        (**self).gate_batch_rows(test)
    }
    fn gate_batch_log(&self, test: &str, batch: u32) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).gate_batch_log(test, batch)
    }
    fn end_gate_test(&mut self, test: &str) -> Result<usize, StoreError> {
        (**self).end_gate_test(test)
    }
    fn clear_gate_batches(&mut self) -> Result<usize, StoreError> {
        (**self).clear_gate_batches()
    }
    fn gate_clock(&mut self) -> Result<f64, StoreError> {
        (**self).gate_clock()
    }
}
