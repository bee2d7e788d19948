//! The store: everything a league remembers between runs. [`Store`] is the set of
//! operations the league needs; [`SqliteStore`] implements it in one SQLite file in the
//! league's directory, [`PgStore`] in a PostgreSQL database that workers on many
//! machines share (with leases on the sets they play). Each operation that changes more than one row is one
//! transaction, so a crash leaves the store as it was before the operation or after
//! it, never in between. Async code (the server, the workers) holds a store only
//! through a [`StoreThread`], which runs its operations on a thread of its own.

mod gate_batches;
mod pg;
pub(crate) mod pg_url;
pub(crate) use pg::unreachable;
mod rows;
mod sqlite;
mod thread;
mod versions;

use std::collections::BTreeMap;
use std::time::Duration;

pub use gate_batches::{BatchDone, BatchState, ClaimedBatch, GateBatch, GateBatchRow, GateBatches};
pub use pg::{stuck_reason, Heartbeat, PackedLog, PgStore, StoredLog, WorkerRow, LIVE_WORKER_S};
pub use sqlite::SqliteStore;
pub use thread::{StoreCaller, StoreThread};
#[cfg(test)]
pub(crate) use versions::cut_text;
pub use versions::{
    parse_version_name, version_name, NewVersion, VersionRow, VersionState, Versions,
    MAX_VERSION_TEXT,
};

use referee::{FaultKind, GameEndReason, Side};

use crate::log_place::LogPlace;
use crate::schedule::{PlannedSet, SetKey};

/// A set's place in its life: `pending` (to be played), `running` (being played, or
/// interrupted if no league runs), `done` (its result is recorded and final).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetStatus {
    /// Not played yet, or interrupted and put back.
    Pending,
    /// Claimed by a runner.
    Running,
    /// Finished: its games are recorded and it is never played again.
    Done,
}

impl SetStatus {
    /// As stored: `pending`, `running`, `done`.
    pub fn as_str(self) -> &'static str {
        match self {
            SetStatus::Pending => "pending",
            SetStatus::Running => "running",
            SetStatus::Done => "done",
        }
    }
}

/// The store's number for a set.
pub type SetId = i64;

/// A bot as the league file currently describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotEntry {
    /// Its unique name.
    pub name: String,
    /// Its command line as written in the file.
    pub command: String,
}

/// A bot as the store knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotRow {
    /// Its unique name.
    pub name: String,
    /// Its command when it was last in the file.
    pub command: String,
    /// In the league file of the latest run; an inactive bot plays no more sets, and
    /// its finished sets still count.
    pub active: bool,
}

/// What a schedule sync changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// The store knew no bot before: the league's first run (every bot is added).
    pub first: bool,
    /// Bots seen for the first time.
    pub added_bots: Vec<String>,
    /// Bots that were active and are no longer in the file.
    pub removed_bots: Vec<String>,
    /// Bots back in the file after a run without them.
    pub returned_bots: Vec<String>,
    /// Bots whose command changed: (name, before, now).
    pub changed_commands: Vec<(String, String, String)>,
    /// Sets new to the store.
    pub added_sets: usize,
}

/// A claim on a set: the set and the attempt that holds it. Every change to a claimed
/// set takes one (noting its log, recording its result, putting it back): a stale claim,
/// one whose set was claimed again since (another runner took it over once its lease ran
/// out) or is done, changes nothing in either store, and the call says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Claim {
    /// The store's number for the set.
    pub id: SetId,
    /// The attempt that holds it (from 1).
    pub attempt: u32,
}

/// A set claimed to be played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedSet {
    /// The store's number for it.
    pub id: SetId,
    /// Round and seats.
    pub key: SetKey,
    /// Its seed.
    pub seed: u64,
    /// How many times it has been started, this time included.
    pub attempts: u32,
}

impl ClaimedSet {
    /// The claim this attempt holds.
    pub fn claim(&self) -> Claim {
        Claim {
            id: self.id,
            attempt: self.attempts,
        }
    }
}

/// A set that was interrupted (its runner was killed or stopped) and put back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requeued {
    /// The set.
    pub key: SetKey,
    /// The log of the interrupted attempt, if one was noted.
    pub log: Option<LogPlace>,
}

/// One game of a finished set. The store keeps a side as the logs number it, 0 (A)
/// and 1 (B), a reason and a fault kind as their wire names; a row that holds anything
/// else is [`StoreError::Invalid`] when it is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRow {
    /// Games count from 1.
    pub game: u32,
    /// The side that moved first.
    pub first: Side,
    /// The winning side; `None` for a draw.
    pub winner: Option<Side>,
    /// Points of A and B.
    pub points: [u32; 2],
    /// An end rule (`no-moves`, `repetition`, `no-capture-limit`) or the kind of the
    /// fault that ended the game.
    pub reason: GameEndReason,
    /// Moves played.
    pub plies: u32,
    /// The loser had no seeds at all.
    pub double: bool,
    /// The sides that faulted in the game.
    pub faulted: Vec<Side>,
}

/// A fault of a finished set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRow {
    /// The game it cost.
    pub game: u32,
    /// The ply at which it happened.
    pub ply: u32,
    /// The side that faulted.
    pub bot: Side,
    /// A fault kind of PROTOCOL.md.
    pub kind: FaultKind,
    /// In plain words.
    pub detail: String,
}

/// Everything recorded about a finished set.
#[derive(Clone, Debug, PartialEq)]
pub struct SetOutcome {
    /// Every game, in order.
    pub games: Vec<GameRow>,
    /// Every fault, in order.
    pub faults: Vec<FaultRow>,
    /// Points of A and B over the set.
    pub points: [u32; 2],
    /// The side with more points; `None` for a drawn set.
    pub winner: Option<Side>,
    /// Moves made by A and by B.
    pub moves: [u64; 2],
    /// Total time A and B took over their moves, in milliseconds.
    pub move_ms: [f64; 2],
    /// Where its log is.
    pub log: LogPlace,
}

impl SetOutcome {
    /// A set with no game yet whose log is at `log`.
    pub fn new(log: LogPlace) -> SetOutcome {
        SetOutcome {
            games: Vec::new(),
            faults: Vec::new(),
            points: [0; 2],
            winner: None,
            moves: [0; 2],
            move_ms: [0.0; 2],
            log,
        }
    }
}

/// A finished set with its key.
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedSet {
    /// Round and seats.
    pub key: SetKey,
    /// Its seed.
    pub seed: u64,
    /// What happened.
    pub outcome: SetOutcome,
    /// Its log was deleted by a retention rule ([`Store::prune_logs`]); its result
    /// stays.
    pub pruned: bool,
    /// When its result was recorded, in RFC 3339 (UTC): the store's `finished`
    /// column, written by `record`; `None` where a row has none.
    pub finished: Option<String>,
}

/// How many finished sets [`Store::each_finished`] reads at once.
pub const FINISHED_BATCH: usize = 2_000;

/// Which finished sets [`Store::finished_sets`] reads; each read is a bounded page,
/// found through an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinishedQuery {
    /// Those numbered after `after`, oldest first, at most `limit`: what is new since a
    /// reader's last read.
    After {
        /// The last number the reader saw (0: none).
        after: u64,
        /// At most this many.
        limit: usize,
    },
    /// The newest first, numbered below `before` (`None`: from the newest), of `bot`
    /// (either seat; `None`: any), at most `limit`: a page of a list.
    Newest {
        /// Only this bot's sets.
        bot: Option<String>,
        /// Only sets numbered below this one (the last of the previous page).
        before: Option<u64>,
        /// At most this many.
        limit: usize,
    },
    /// The newest first, numbered below `before` (`None`: from the newest), between
    /// `a` and `b` (either seating), at most `limit`: a cell of the cross-table.
    Between {
        /// One bot.
        a: String,
        /// The other.
        b: String,
        /// Only sets numbered below this one (the last of the previous page).
        before: Option<u64>,
        /// At most this many.
        limit: usize,
    },
    /// The finished set with this key, if there is one.
    Key(SetKey),
    /// The newest first, numbered below `before` (`None`: from the newest), in which
    /// `bot` faulted, at most `limit`.
    Faulted {
        /// The bot (either seat).
        bot: String,
        /// Only sets numbered below this one.
        before: Option<u64>,
        /// At most this many.
        limit: usize,
    },
}

/// The most points a series of the rating history keeps (each bot's rating, the
/// first-move advantage): whatever the number of sets, at most this many and one.
pub const HISTORY_POINTS: u64 = 128;

/// The spacing of the rating history's points once `number` sets have finished: the
/// least power of two that leaves at most [`HISTORY_POINTS`] buckets below `number`.
/// A point is kept for the first recorded set of each bucket `number / stride`; when
/// the stride doubles, each new bucket keeps its first point.
pub fn history_stride(number: u64) -> u64 {
    number.div_ceil(HISTORY_POINTS).max(1).next_power_of_two()
}

/// What the rating history does with a point after the set numbered `number`, its last
/// point being after the set numbered `last` (`None`: it is empty): the one rule both
/// stores run their SQL around.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HistoryStep {
    /// Not kept: its bucket has a point already (or it is not newer than the last).
    Skip,
    /// Kept.
    Keep,
    /// Kept, after thinning the older points to the first of each bucket of this
    /// stride (the stride grew).
    ThinAndKeep(u64),
}

pub(crate) fn history_step(last: Option<u64>, number: u64) -> HistoryStep {
    let stride = history_stride(number);
    match last {
        None => HistoryStep::Keep,
        Some(last) if last >= number || last / stride == number / stride => HistoryStep::Skip,
        Some(last) if history_stride(last) != stride => HistoryStep::ThinAndKeep(stride),
        Some(_) => HistoryStep::Keep,
    }
}

/// One point of the rating history: after the set numbered `number`, each rated bot's
/// rating with its standard error, and the first-move advantage (its series' name is
/// the empty string).
#[derive(Clone, Debug, PartialEq)]
pub struct RatingPoint {
    /// The number of the last set counted.
    pub number: u64,
    /// (bot, rating, standard error); the bot `""` is the first-move advantage.
    pub ratings: Vec<(String, f64, f64)>,
}

/// A set being played, as the store knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningSet {
    /// Round and seats.
    pub key: SetKey,
    /// Who plays it: a worker's name (PostgreSQL); `None` for SQLite's one runner.
    pub worker: Option<String>,
    /// Seconds since it was claimed.
    pub for_s: f64,
}

/// How far the league is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Sets of the current schedule, whatever their status.
    pub scheduled: u64,
    /// Sets of the current schedule that are done.
    pub done: u64,
    /// Sets running now (or interrupted, when no league runs).
    pub running: u64,
    /// Sets of the current schedule still to play (their bots are in the file).
    pub pending: u64,
    /// Finished sets outside the current schedule (a removed bot's, an earlier round
    /// count's): they still count in the standings.
    pub done_elsewhere: u64,
}

/// The store's errors.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed. The message has the database error's causes (a TLS
    /// handshake's reason, an operating system's error), so it is not the `source` of
    /// this one: each cause is said once.
    #[error("the league store {place}: {what}: {}", with_causes(cause.as_ref()))]
    Backend {
        /// The store (a file path, a database name).
        place: String,
        /// What was being done.
        what: String,
        /// The database's error.
        cause: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The store was written by a newer `hus`.
    #[error(
        "the league store {place} has schema version {found}, newer than the {known} this hus \
         knows: use the hus that made it, or a newer one"
    )]
    NewerSchema {
        /// The store.
        place: String,
        /// Its version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// The store's URL cannot be used (the message never repeats it: it may hold a
    /// password).
    #[error("the league store URL: {what}")]
    BadUrl {
        /// What is wrong with it.
        what: String,
    },
    /// A row holds something this code never writes.
    #[error("the league store {place} is inconsistent: {what}")]
    Invalid {
        /// The store.
        place: String,
        /// What was found.
        what: String,
    },
    /// The store's thread ([`StoreThread`]) stopped: an operation panicked there, and
    /// the store was closed.
    #[error("the league store's thread stopped: {why}")]
    ThreadStopped {
        /// What stopped it.
        why: String,
    },
    /// An operation named a version the store does not have
    /// ([`Versions::activate_version`]).
    #[error("the league store {place} has no version {number} of the bot {bot}")]
    NoVersion {
        /// The store.
        place: String,
        /// The bot.
        bot: String,
        /// The version's number.
        number: u32,
    },
}

/// An error's message followed by its causes', each once (a message that already
/// holds its cause's is not repeated). A PostgreSQL server's own error is said as the
/// server says it, on one line: its severity and message, then its detail and hint
/// (the client's word for it, `db error`, says nothing more).
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    if let Some(db) = e
        .downcast_ref::<postgres::Error>()
        .and_then(|pg| pg.as_db_error())
    {
        return db_error_text(db);
    }
    let mut text = e.to_string();
    let mut last = text.clone();
    let mut next = e.source();
    while let Some(cause) = next {
        let said = cause.to_string();
        if !said.is_empty() && !last.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        last = said;
        next = cause.source();
    }
    text
}

/// `FATAL: database "l1" does not exist`, with `; DETAIL` and `; HINT` when the server
/// gives them (each on the line, not under it as the client's own text puts them).
fn db_error_text(db: &postgres::error::DbError) -> String {
    let mut text = format!("{}: {}", db.severity(), db.message());
    for more in [db.detail(), db.hint()].into_iter().flatten() {
        text.push_str("; ");
        text.push_str(&more.replace('\n', " "));
    }
    text
}

/// What became of a result sent to the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// It was the set's current attempt: the set is done and its result counts.
    Counted,
    /// The set had been claimed again (this attempt's lease was lost) or was already
    /// done: the result counts for nothing (PostgreSQL keeps it as a duplicate).
    Duplicate,
}

/// What a runner does with the sets it holds: renewing their claims, recording them,
/// putting them back. The coordinator (`coordinator`) needs only this.
pub trait Claims {
    /// Puts these sets back to `pending` (they were stopped part-way), each only if its
    /// claim still holds it; returns how many were put back (a stale claim changes
    /// nothing). One transaction.
    fn requeue(&mut self, claims: &[Claim]) -> Result<usize, StoreError>;

    /// Notes where the running set's log is written (relative to the league's
    /// directory), if `claim` still holds it; false (nothing changed) otherwise.
    fn set_log(&mut self, claim: Claim, log: &LogPlace) -> Result<bool, StoreError>;

    /// Records a finished set: its games, faults and move times, and marks it `done`,
    /// all in one transaction, if `claim` still holds it (the set is `running` under
    /// that attempt); false, with nothing changed, for a stale claim: a set done
    /// already, or claimed again since.
    fn record(&mut self, claim: Claim, outcome: &SetOutcome) -> Result<bool, StoreError>;

    /// Records a finished set claimed as `set`, as [`Store::record`] does, with its log
    /// (`log`, the file's bytes) where the store keeps logs.
    /// PostgreSQL: [`PgStore::record_attempt`] (the log kept compressed; a result whose
    /// attempt no longer holds the set is kept as a duplicate). SQLite: the log stays a
    /// file; `record` (a stale claim keeps nothing, and says `Duplicate`).
    fn record_played(
        &mut self,
        set: &ClaimedSet,
        outcome: &SetOutcome,
        log: &[u8],
    ) -> Result<Recorded, StoreError> {
        let _ = log;
        Ok(match self.record(set.claim(), outcome)? {
            true => Recorded::Counted,
            false => Recorded::Duplicate,
        })
    }

    /// Whether other processes (`hus worker`) play this store's sets too: then its
    /// runner keeps its claims alive ([`Claims::renew_claims`]) and reads the finished
    /// sets again from time to time. SQLite: no.
    fn is_shared(&self) -> bool {
        false
    }

    /// How long a claim holds its set unless renewed ([`Claims::renew_claims`]);
    /// `None`: until it is given back or recorded (SQLite: one runner holds the
    /// league's directory, and no one else claims its sets).
    fn lease(&self) -> Option<Duration> {
        None
    }

    /// Renews these claims by the store's lease ([`Claims::lease`]); false for a claim
    /// that no longer holds its set (another took it over). SQLite: nothing to do.
    fn renew_claims(&mut self, held: &[Claim]) -> Result<Vec<bool>, StoreError> {
        Ok(vec![true; held.len()])
    }

    /// Whether `error` is the store out of reach (a lost connection, a server that
    /// restarts), which a runner waits out with a backoff, rather than an end.
    /// SQLite: never.
    fn is_outage(&self, error: &StoreError) -> bool {
        let _ = error;
        false
    }

    /// Opens a new connection if the store's was lost (PostgreSQL restarted or out of
    /// reach); SQLite: nothing to do.
    fn reconnect_if_lost(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A boxed store (the server's `Box<dyn Store + Send>`) claims as its store does.
impl<S: Claims + ?Sized> Claims for Box<S> {
    fn requeue(&mut self, claims: &[Claim]) -> Result<usize, StoreError> {
        (**self).requeue(claims)
    }
    fn set_log(&mut self, claim: Claim, log: &LogPlace) -> Result<bool, StoreError> {
        (**self).set_log(claim, log)
    }
    fn record(&mut self, claim: Claim, outcome: &SetOutcome) -> Result<bool, StoreError> {
        (**self).record(claim, outcome)
    }
    fn record_played(
        &mut self,
        set: &ClaimedSet,
        outcome: &SetOutcome,
        log: &[u8],
    ) -> Result<Recorded, StoreError> {
        (**self).record_played(set, outcome, log)
    }
    fn is_shared(&self) -> bool {
        (**self).is_shared()
    }
    fn lease(&self) -> Option<Duration> {
        (**self).lease()
    }
    fn renew_claims(&mut self, held: &[Claim]) -> Result<Vec<bool>, StoreError> {
        (**self).renew_claims(held)
    }
    fn is_outage(&self, error: &StoreError) -> bool {
        (**self).is_outage(error)
    }
    fn reconnect_if_lost(&mut self) -> Result<(), StoreError> {
        (**self).reconnect_if_lost()
    }
}

/// What a league's store answers: its settings, bots, finished sets, progress, rating
/// history and (PostgreSQL) workers.
pub trait Reads {
    /// The league's settings (rules, width, time, games, seed, anchor), as strings.
    fn settings(&self) -> Result<BTreeMap<String, String>, StoreError>;

    /// Every bot ever in the league.
    fn bots(&self) -> Result<Vec<BotRow>, StoreError>;

    /// Every finished set with its games and faults, in the order they finished: read
    /// in batches of [`FINISHED_BATCH`] ([`Store::finished_sets`]).
    fn finished(&self) -> Result<Vec<FinishedSet>, StoreError> {
        let mut all = Vec::new();
        self.each_finished(0, &mut |_, set| all.push(set))?;
        Ok(all)
    }

    /// Calls `each` with every set that finished after the one numbered `after` (0:
    /// every set), in the order they finished, with its number; returns the last number
    /// seen (`after` when none). Reads in batches: what is held at once is one batch,
    /// whatever the store's size.
    fn each_finished(
        &self,
        after: u64,
        each: &mut dyn FnMut(u64, FinishedSet),
    ) -> Result<u64, StoreError> {
        let mut last = after;
        loop {
            let batch = self.finished_sets(&FinishedQuery::After {
                after: last,
                limit: FINISHED_BATCH,
            })?;
            let full = batch.len() == FINISHED_BATCH;
            for (seq, set) in batch {
                last = seq;
                each(seq, set);
            }
            if !full {
                return Ok(last);
            }
        }
    }

    /// The finished sets that `query` asks for, each with its number in the order the
    /// sets finished (1, 2, ...: a number is given once, when the result is recorded,
    /// and a reader that saw number n has seen every set numbered below it).
    fn finished_sets(&self, query: &FinishedQuery) -> Result<Vec<(u64, FinishedSet)>, StoreError>;

    /// Counts of sets by status (every set is read: for a command's one look, not for a
    /// server's every result).
    fn progress(&self) -> Result<Progress, StoreError>;

    /// How many sets are being played (or were, by a runner that died): read from the
    /// status index, whatever the store's size.
    fn running(&self) -> Result<u64, StoreError>;

    /// The sets being played, oldest claim first (at most `limit`), through the status
    /// index.
    fn running_sets(&self, limit: usize) -> Result<Vec<RunningSet>, StoreError>;

    /// The rating history, oldest first.
    fn rating_history(&self) -> Result<Vec<RatingPoint>, StoreError>;

    /// The workers the store has heard of (`hus workers`); SQLite: none.
    fn worker_rows(&mut self) -> Result<Vec<WorkerRow>, StoreError> {
        Ok(Vec::new())
    }

    /// Why the league is stuck, when every live worker has given up every pending set
    /// ([`pg::stuck_reason`]); SQLite (no workers): never.
    fn stuck(&mut self) -> Result<Option<String>, StoreError> {
        Ok(None)
    }

    /// A finished set's log kept in the store (a worker's set), still packed; `None`
    /// when the store keeps none (SQLite: the logs are files in the league's directory).
    fn stored_log(&mut self, id: SetId) -> Result<Option<PackedLog>, StoreError> {
        let _ = id;
        Ok(None)
    }
}

/// What a league's runner writes besides its claims: the settings, the bots and the
/// schedule in line with the file, claims in schedule order, the rating history and
/// the retention mark. Each is one transaction.
pub trait Schedule {
    /// Writes these settings (others keep their values), in one transaction.
    fn save_settings(&mut self, settings: &BTreeMap<String, String>) -> Result<(), StoreError>;

    /// Makes the store agree with the file: `bots` are the active bots (others become
    /// inactive, new ones are added), `sets` the current schedule (new sets are added as
    /// pending; sets no longer in it are kept, and a pending one is not played). One
    /// transaction.
    fn sync(&mut self, bots: &[BotEntry], sets: &[PlannedSet]) -> Result<SyncReport, StoreError>;

    /// Puts every `running` set back to `pending` (at the start of a run, a running set
    /// is one whose runner died). One transaction; returns the sets.
    fn requeue_running(&mut self) -> Result<Vec<Requeued>, StoreError>;

    /// Takes the next pending set of the current schedule whose bots are both active,
    /// marks it `running` and counts the attempt; `None` when there is none.
    fn claim_next(&mut self) -> Result<Option<ClaimedSet>, StoreError> {
        self.claim_next_except(&[])
    }

    /// As [`Store::claim_next`], passing over the sets of these pairs (either seating):
    /// a pair held back after a failure waits without holding up the sets behind it,
    /// and without a claim (an attempt) counted against it.
    fn claim_next_except(
        &mut self,
        pairs: &[(String, String)],
    ) -> Result<Option<ClaimedSet>, StoreError>;

    /// Puts `set`, the one a server's pairing chose, in the schedule in place of
    /// `replaces` (the one it chose before, when that one is not the league file's), and
    /// claims it if it is pending and its bots are active, as [`Store::claim_next`]
    /// would; `None` otherwise. One transaction whose cost does not grow with the
    /// schedule: it is what a [`Store::sync`] of the whole schedule and one set more,
    /// then a claim, did at every pick.
    fn schedule_and_claim(
        &mut self,
        set: &PlannedSet,
        replaces: Option<&SetKey>,
    ) -> Result<Option<ClaimedSet>, StoreError>;

    /// Marks the logs of the finished sets numbered up to `up_to` pruned (those above
    /// the last call's mark, which the store keeps: each set is pruned once, and a call
    /// reads only the sets since the last), and returns their logs as the store names
    /// them (a file, `logs/STEM.jsonl.zst`; or one the store keeps, `store:ID`, which it
    /// drops), for the caller to delete. One transaction.
    fn prune_logs(&mut self, up_to: u64) -> Result<Vec<LogPlace>, StoreError>;

    /// Keeps `point` in the rating history if it is the first of its bucket
    /// ([`history_stride`]), thinning the older points when the stride grows: the history
    /// never holds more than [`HISTORY_POINTS`] + 1 points per series. True if kept.
    /// One transaction.
    fn record_ratings(&mut self, point: &RatingPoint) -> Result<bool, StoreError>;
}

/// A league's store, by concern: [`Reads`], [`Schedule`], [`Claims`] (whose leases
/// only a shared store has), [`Versions`] (uploaded bots) and [`GateBatches`] (the
/// SPRT gate's batches). Every type with the five is a store.
pub trait Store: Reads + Schedule + Claims + Versions + GateBatches {}

impl<T: Reads + Schedule + Claims + Versions + GateBatches> Store for T {}

/// A boxed store (the server's `Box<dyn Store + Send>`) keeps versions as its store does.
impl<S: Versions + ?Sized> Versions for Box<S> {
    fn add_version(&mut self, version: &NewVersion) -> Result<u32, StoreError> {
        (**self).add_version(version)
    }
    fn set_version_state(
        &mut self,
        bot: &str,
        number: u32,
        state: VersionState,
        output: Option<&str>,
        detail: Option<&str>,
        now: &str,
    ) -> Result<bool, StoreError> {
        (**self).set_version_state(bot, number, state, output, detail, now)
    }
    fn activate_version(
        &mut self,
        bot: &str,
        number: u32,
        now: &str,
    ) -> Result<Option<u32>, StoreError> {
        (**self).activate_version(bot, number, now)
    }
    fn versions_of(&self, bot: &str) -> Result<Vec<VersionRow>, StoreError> {
        (**self).versions_of(bot)
    }
    fn version(&self, bot: &str, number: u32) -> Result<Option<VersionRow>, StoreError> {
        (**self).version(bot, number)
    }
    fn versions_in(&self, states: &[VersionState]) -> Result<Vec<VersionRow>, StoreError> {
        (**self).versions_in(states)
    }
    fn archive(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).archive(hash)
    }
    fn drop_refused_archive(&mut self, hash: &str, kept_refusal: &str) -> Result<bool, StoreError> {
        (**self).drop_refused_archive(hash, kept_refusal)
    }
    fn submitted_since(&self, author: &str, since: &str) -> Result<Vec<String>, StoreError> {
        (**self).submitted_since(author, since)
    }
}
