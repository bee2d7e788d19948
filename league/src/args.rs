//! The raw arguments of the league's commands, as clap parses them; the `hus` binary
//! only gathers them into subcommands.

use std::path::PathBuf;

use clap::Args;

use crate::standings::OutputFormat;
use crate::{Error, Result};

/// `--store URL`, one definition for every command that takes it (`hus league`,
/// `standings`, `serve`, `worker`, `workers`, `export`): each reads the environment
/// variable HUS_STORE when the option is not given, so that a password need not be on
/// the command line, where `ps` shows it. A command that needs it makes it required
/// (`mut_arg("store", |a| a.required(true))`), and may give it a help of its own.
#[derive(Clone, Debug, Args)]
pub struct StoreArg {
    /// The league's PostgreSQL store (postgres://USER:PASSWORD@HOST:PORT/DB), or the
    /// environment variable HUS_STORE, which keeps a password out of the process list.
    /// See docs/deploy.md.
    #[arg(
        id = "store",
        long = "store",
        value_name = "URL",
        env = "HUS_STORE",
        hide_env_values = true
    )]
    pub url: Option<String>,
}

impl StoreArg {
    /// The URL of a command that requires it (clap has checked that it is given, as
    /// the option or the variable).
    pub fn required(&self, command: &str) -> Result<&str> {
        self.url.as_deref().ok_or_else(|| {
            Error::Usage(format!(
                "{command} needs the league's store: give --store URL, or set HUS_STORE"
            ))
        })
    }
}

/// The raw arguments of `hus league`.
#[derive(Debug, Args)]
#[command(mut_arg("store", |a| a.help(
    "Keep the league in this PostgreSQL database instead of the directory's SQLite file \
     (postgres://USER@HOST:PORT/DB), so that `hus worker` processes on any number of \
     machines play its sets. This command then plays sets too, as a worker, until none is \
     left (unless --no-play). Overrides the league file's `store` key; the environment \
     variable HUS_STORE does the same and keeps a password out of the process list. See \
     docs/deploy.md"
)))]
pub struct LeagueArgs {
    /// The league file (TOML): bots, rules, time control, format, rounds, seed. Its keys
    /// are described in docs/league.md.
    #[arg(value_name = "LEAGUE.toml")]
    pub file: PathBuf,
    /// The league's directory: its store (league.sqlite), the sets' logs and its lock.
    /// Default: beside the file, named after it (leagues/sample.toml: leagues/sample).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// How the final standings are printed: text, json, csv or markdown.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: OutputFormat,
    /// No progress on stderr (warnings and errors only).
    #[arg(long)]
    pub quiet: bool,
    /// The league's PostgreSQL store.
    #[command(flatten)]
    pub store: StoreArg,
    /// With a PostgreSQL store (--store, or the file's `store` key): put the league in
    /// the store and return at once, leaving the sets to the workers.
    #[arg(long)]
    pub no_play: bool,
    /// With a PostgreSQL store: the lease of each set this command plays, in seconds
    /// (as `hus worker --lease`; default 30).
    #[arg(long, value_name = "SECONDS")]
    pub lease: Option<f64>,
    /// The free-space floor.
    #[command(flatten)]
    pub min_free: MinFreeArg,
    /// With a PostgreSQL store: where uploaded versions are built.
    #[command(flatten)]
    pub uploads: UploadsArg,
}

/// `--uploads-dir` and `--upload-user`, of the commands that play a PostgreSQL store's
/// sets as a worker (`hus worker`, `hus league --store`): where and as whom the
/// uploaded versions the store names are built and played (docs/upload.md, "Across
/// machines").
#[derive(Clone, Debug, Args)]
pub struct UploadsArg {
    /// With a PostgreSQL store: the directory where this machine builds the uploaded
    /// versions it plays, fetched by hash from the store (each built once per machine).
    /// The sandbox's user must be able to pass through every directory above it.
    /// Default: $XDG_CACHE_HOME/hus/uploads, else ~/.cache/hus/uploads.
    #[arg(long, value_name = "DIR")]
    pub uploads_dir: Option<PathBuf>,
    /// With a PostgreSQL store: the unprivileged user uploaded versions are built and
    /// played as when hus runs as root (default: nobody); never root.
    #[arg(long, value_name = "USER")]
    pub upload_user: Option<String>,
    /// With a PostgreSQL store: how often this machine's built versions no longer
    /// played (retired and their sets ended, refused by the gate) are looked for, at a
    /// heartbeat; each goes at the second look that finds it unneeded.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = positive_duration)]
    pub prune_every: std::time::Duration,
}

/// A duration as `hus match --move-time` takes it (`5m`, `30s`), longer than zero: the
/// value parser of every such option of `hus league`, `hus worker` and `hus serve`.
pub fn positive_duration(text: &str) -> std::result::Result<std::time::Duration, String> {
    match referee::parse_duration(text) {
        Ok(d) if d.is_zero() => Err("it must be longer than zero".to_string()),
        Ok(d) => Ok(d),
        Err(e) => Err(format!("{e:#}")),
    }
}

impl UploadsArg {
    /// The uploads' directory: the option, else the default
    /// ([`crate::uploaded::default_uploads_dir`]); `None` when neither is known.
    pub fn dir(&self) -> Option<PathBuf> {
        self.uploads_dir
            .clone()
            .or_else(crate::uploaded::default_uploads_dir)
    }
}

/// `--min-free-space`, of every command that plays sets.
#[derive(Clone, Debug, Args)]
pub struct MinFreeArg {
    /// Start no new set while a directory hus writes (the league's, its logs) has less
    /// free space than this on its file system: say why, and go on once there is more
    /// (running sets finish). 0 turns the check off.
    #[arg(long = "min-free-space", value_name = "BYTES", default_value = "1G")]
    pub min_free_space: String,
}

impl MinFreeArg {
    /// The floor in bytes.
    pub fn bytes(&self) -> crate::Result<u64> {
        if self.min_free_space.trim() == "0" {
            return Ok(0);
        }
        referee::parse_bytes(&self.min_free_space).map_err(|e| {
            crate::Error::Usage(format!(
                "invalid --min-free-space {:?}: {e:#}",
                self.min_free_space
            ))
        })
    }
}

impl LeagueArgs {
    /// Whether `--lease` was given.
    pub fn lease_given(&self) -> bool {
        self.lease.is_some()
    }
}

/// The raw arguments of `hus standings`.
#[derive(Debug, Args)]
#[command(mut_arg("store", |a| a.help(
    "The league's PostgreSQL store instead of a directory (postgres://USER:PASSWORD@HOST:PORT/DB); \
     without DIR, the environment variable HUS_STORE does the same and keeps a password \
     out of the process list"
)))]
pub struct StandingsArgs {
    /// The league's directory (where its league.sqlite is). Given, it is read even
    /// when HUS_STORE is set.
    #[arg(value_name = "DIR", required_unless_present = "store")]
    pub dir: Option<PathBuf>,
    /// The league's PostgreSQL store.
    #[command(flatten)]
    pub store: StoreArg,
    /// text, json, csv or markdown.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: OutputFormat,
}

/// The raw arguments of `hus prune`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("what").required(true).multiple(true).args(["keep_logs", "archive"]))]
pub struct PruneArgs {
    /// The league's directory (where its league.sqlite and logs/ are). No league or
    /// server may be running on it.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Keep the logs of this many most recently finished sets; delete the older ones'
    /// logs and stderr files. Every result stays in the store and the standings.
    #[arg(long, value_name = "N")]
    pub keep_logs: Option<u64>,
    /// Archive the finished sets' logs 64 sets to a file
    /// (`logs/archive/sets-FROM-TO.tar.zst`), as `hus serve` does: every whole range of
    /// 64 finished sets not archived yet (after --keep-logs, when both are given).
    #[arg(long)]
    pub archive: bool,
}

/// The raw arguments of `hus worker`.
#[derive(Debug, Args)]
#[command(mut_arg("store", |a| a.required(true).help(
    "The league's PostgreSQL store (postgres://USER:PASSWORD@HOST:PORT/DB), where `hus \
     league LEAGUE.toml --store URL` put the league. Or the environment variable \
     HUS_STORE, which keeps a password out of the process list"
)))]
pub struct WorkerArgs {
    /// The league's PostgreSQL store.
    #[command(flatten)]
    pub store: StoreArg,
    /// Sets played at once (each takes two bots: at most half the machine's cores for
    /// timed games).
    #[arg(long, default_value = "1", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: u32,
    /// The worker's name in `hus workers` (default: HOST:PID). Names must be unique.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The lease of each set, in seconds: renewed every quarter of it while the set is
    /// played; a worker silent for longer loses the set to another.
    #[arg(long, default_value = "30", value_name = "SECONDS")]
    pub lease: f64,
    /// The free-space floor of the worker's scratch directory.
    #[command(flatten)]
    pub min_free: MinFreeArg,
    /// Where uploaded versions are built.
    #[command(flatten)]
    pub uploads: UploadsArg,
    /// Exit when the league has no set left to play or being played (default: wait
    /// for new sets).
    #[arg(long)]
    pub until_done: bool,
    /// Only warnings and errors on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// The raw arguments of `hus workers`.
#[derive(Debug, Args)]
#[command(mut_arg("store", |a| a.required(true)))]
pub struct WorkersArgs {
    /// The league's PostgreSQL store.
    #[command(flatten)]
    pub store: StoreArg,
    /// text (a table) or json (as the match server's /api/workers).
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: WorkersFormat,
}

/// How `hus workers` prints its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkersFormat {
    /// A table, one line per worker.
    Text,
    /// `{"workers": [...]}`, as the match server's `/api/workers`.
    Json,
}

/// The raw arguments of `hus export`.
#[derive(Debug, Args)]
#[command(mut_arg("store", |a| a.required(true)))]
pub struct ExportArgs {
    /// The league's PostgreSQL store.
    #[command(flatten)]
    pub store: StoreArg,
    /// The set's number (as `hus workers` and the store number them); without it, every
    /// finished set.
    #[arg(long, value_name = "ID")]
    pub set: Option<i64>,
    /// The directory the logs are written to (ROUND-A-vs-B.jsonl, as `hus league` names
    /// them). Without it, the one set's log goes to stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}
