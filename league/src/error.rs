//! The errors of the league: one variant per cause, each message complete enough to act
//! on (the file and line, the directory, the running league that holds the lock).
//!
//! A variant's message holds its cause's (the `error` fields), and none of them is a
//! `source`: `hus` prints an error with its chain of sources, which would say the
//! cause twice.

use std::path::PathBuf;

/// Everything that can stop `hus league` or `hus standings`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The league file is malformed or holds a bad value. `place` is `FILE line N`
    /// (or just `FILE` when no line applies).
    #[error("{place}: {message}")]
    File {
        /// `leagues/sample.toml line 7`.
        place: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The league file cannot be read at all.
    #[error("cannot read the league file {path}: {error}")]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file asks for a setting that differs from the one the league's finished
    /// sets were played with, so old and new results could not be compared.
    #[error(
        "{place}: {now}, but the league in {dir} was played with {before}; results under \
         other settings cannot be compared: restore {before}, or start a new league in \
         another directory (--dir)"
    )]
    Incompatible {
        /// Where the key is (`FILE line N`, or `FILE` for a default).
        place: String,
        /// The file's setting, as TOML (`games = 5`).
        now: String,
        /// The stored setting, as TOML (`games = 7`).
        before: String,
        /// The league's directory.
        dir: PathBuf,
    },
    /// Another `hus league` runs in this directory.
    #[error(
        "{dir} is in use by another hus league ({holder}); wait for it to finish or stop it \
         (Ctrl-C), then run this command again"
    )]
    Locked {
        /// The league's directory.
        dir: PathBuf,
        /// The running league as its lock file describes it: pid, host, start, command.
        holder: String,
    },
    /// `hus standings DIR` on a directory without a league.
    #[error(
        "{dir} holds no league (no {dir}/league.sqlite); give the directory `hus league` used"
    )]
    NoLeague {
        /// The directory given.
        dir: PathBuf,
    },
    /// The directory's store lost its league (missing, a file of 0 bytes, or one without the
    /// league's settings) while its logs directory holds the logs of sets played there:
    /// starting anew would draw a new seed and set every log aside.
    #[error(
        "the league store {store} {what}, but {logs} holds {} played in this directory: the \
         store that recorded them is lost. Restore {store} from a backup, or move {logs} away \
         to start a new league in this directory; nothing was changed",
        if *count == 1 { "the log of 1 set".to_string() } else { format!("the logs of {count} sets") }
    )]
    LostStore {
        /// The store's file.
        store: PathBuf,
        /// What is wrong with it: `is missing`, `is empty (0 bytes)`, `holds no league settings`.
        what: &'static str,
        /// The logs' directory.
        logs: PathBuf,
        /// How many sets' logs it holds.
        count: usize,
    },
    /// A file or directory of the league cannot be created, renamed or written.
    #[error("{what} {path}: {error}")]
    Io {
        /// What was being done: `cannot create the league directory`.
        what: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A sandboxed bot cannot run in its sandbox on this machine (checked before any
    /// set, as `hus match --sandbox` does).
    #[error("bot {bot}: sandbox = true, but it cannot run in its sandbox: {error}")]
    Sandbox {
        /// The bot's name.
        bot: String,
        /// Why.
        error: referee::SandboxError,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A set could not be played at all (a bot that cannot be started, a log that
    /// cannot be written). The set stays pending; the league stops.
    #[error("the set {set} could not be played: {error}")]
    Set {
        /// The set: `round 1, alpha vs greedy`.
        set: String,
        /// Why.
        error: crate::SetFailure,
    },
    /// A command line that cannot be run as given.
    #[error("{0}")]
    Usage(String),
    /// The PostgreSQL store holds no league yet (`hus worker` before `hus league`).
    #[error(
        "the league store {place} holds no league yet: run `hus league LEAGUE.toml --store URL` \
         first, which puts the league's file and schedule in it"
    )]
    NoLeagueInStore {
        /// The store.
        place: String,
    },
    /// The async runtime could not be started, or a set's task failed.
    #[error("{0}")]
    Runtime(String),
}

/// The league's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
