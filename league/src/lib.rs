//! `league`: leagues of Hus bots, played, stored and ranked.
//!
//! A league is described by a TOML file ([`LeagueConfig`]): the bots, the rules, the
//! time control, games per set, round-robin or gauntlet, rounds, concurrency and seed.
//! The [`schedule`] follows from the file and the seed alone; each set is known by its
//! [`SetKey`] (round and seats) and its seed derives from the league's seed and that
//! key. A [`Store`] (SQLite: [`SqliteStore`]; PostgreSQL: [`PgStore`]) keeps the settings, the bots, every set's
//! status and every finished set's games and faults; each change is one transaction.
//! [`run_league`] (`hus league`) plays the pending sets through `referee::play_set`,
//! several at once, and resumes after any interruption without losing or repeating a
//! result; [`run_standings`] (`hus standings`) prints the table ([`Standings`]), with
//! ratings fitted by the `ratings` crate to every game at once ([`pair_counts`] gives
//! the fit its input: results per ordered pair of first and second mover).
//! [`run_worker`] (`hus worker`) plays a PostgreSQL store's sets on any number of
//! machines, with leases that a dead or cut-off worker loses; [`run_workers`] lists the
//! workers and [`run_export`] writes the logs the store keeps. [`uploaded`] makes an
//! uploaded version (a row of [`Versions`]) playable on a machine: fetched by hash,
//! built in the sandbox, for the match server and the workers alike.
//!
//! ```
//! use league::{schedule, Format};
//! let bots = ["alpha".to_string(), "greedy".to_string(), "random".to_string()];
//! let sets = schedule(&bots, &Format::RoundRobin, 2, 42);
//! // Every pair once per round; the seats swap in the second round.
//! assert_eq!(sets.len(), 6);
//! assert_eq!(sets[0].key.stem(), "r1-alpha-vs-greedy");
//! assert_eq!(sets[3].key.stem(), "r2-greedy-vs-alpha");
//! ```

#![deny(missing_docs)]

mod after_set;
mod archive;
mod args;
pub mod coordinator;
pub mod disk;
mod error;
mod file;
pub mod gate;
mod lock;
mod log_place;
mod pool;
mod progress;
mod run;
mod schedule;
mod set_files;
mod setup;
mod standings;
mod store;
mod tally;
pub mod uploaded;
mod worker;

pub use archive::{
    archive_logs, archive_path, archive_range, delete_archives_up_to, ArchiveReport, ARCHIVE_DIR,
    ARCHIVE_SETS,
};
pub use args::{
    positive_duration, ExportArgs, LeagueArgs, MinFreeArg, PruneArgs, StandingsArgs, StoreArg,
    UploadsArg, WorkerArgs, WorkersArgs, WorkersFormat,
};
pub use disk::{free_space, DiskFloor, FloorChange, LowSpace, DEFAULT_MIN_FREE_SPACE};
pub use error::{Error, Result};
pub use file::{
    parse_gate, parse_sha256, Anchor, BotConfig, Format, Gate, LeagueConfig, Openings, Transport,
    DEFAULT_GATE, DEFAULT_GATE_BATCH, DEFAULT_GATE_GAMES, DEFAULT_LAG_CAP, MAX_GATE_BATCH,
};
pub use lock::DirLock;
pub use log_place::{LogForm, LogPlace};
pub use pool::{play_claimed, Ending, SetFailure, SetPool, Shared, Tap};
pub use progress::fault_lines;
pub use run::{run_league, run_prune, run_standings};
pub use schedule::{schedule, set_seed, PlannedSet, SetKey};
pub use set_files::{delete_set_files, set_aside, SetFiles, LOGS_DIR};
pub use setup::{
    announce_sync, open_dir_store, prepare_run, read_standings, settle_settings, store_url,
    STORE_FILE,
};
pub use standings::{
    compute as compute_standings, pair_counts, BotStanding, Faults, FirstMover, HeadToHead,
    LeagueInfo, OutputFormat, PairComparison, PairCounts, ProgressView, RatingView, RatingsView,
    Record3, Standings,
};
pub use store::{
    history_stride, stuck_reason, BotEntry, BotRow, Claim, ClaimedSet, Claims, FaultRow,
    FinishedQuery, FinishedSet, GameRow, Heartbeat, PackedLog, PgStore, Progress, RatingPoint,
    Reads, Recorded, Requeued, RunningSet, Schedule, SetId, SetOutcome, SetStatus, SqliteStore,
    Store, StoreCaller, StoreError, StoreThread, StoredLog, SyncReport, WorkerRow, HISTORY_POINTS,
    LIVE_WORKER_S,
};
pub use store::{
    parse_version_name, version_name, NewVersion, VersionRow, VersionState, Versions,
    MAX_VERSION_TEXT,
};
pub use store::{BatchDone, BatchState, ClaimedBatch, GateBatch, GateBatchRow, GateBatches};
pub use tally::Tally;
pub use worker::{carry_file, run_export, run_worker, run_workers, workers_json};
