//! `hus league LEAGUE.toml`: checks the file, takes the directory's lock, brings the
//! store in line with the file, puts interrupted sets back, then plays the pending sets,
//! up to `concurrency` at once, each through `referee::play_set` exactly as `hus match`
//! plays it, and records each finished set in one transaction.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use referee::{play_set, Entrant, Lineup, LogWriter, Member, Record, RecordSink, SetConfig, Team};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::args::{LeagueArgs, StandingsArgs};
use crate::error::{Error, Result};
use crate::file::{cores, show_time, Anchor, BotConfig, LeagueConfig};
use crate::lock::DirLock;
use crate::progress::Reporter;
use crate::schedule::schedule;
use crate::standings::{compute, LeagueInfo, Standings};
use crate::store::{
    BotEntry, ClaimedSet, FaultRow, GameRow, SetOutcome, SqliteStore, Store, SyncReport,
};

/// The store's file in the league's directory.
pub const STORE_FILE: &str = "league.sqlite";
/// The logs' directory in the league's directory.
pub const LOGS_DIR: &str = "logs";

/// What every runner of a league's directory does before its first set, `hus league`
/// and `hus serve` alike, once it holds the directory's lock and the settings are
/// settled: puts back every set a stopped run left running (their partial logs set
/// aside, so they are kept and never overwritten), telling `say` one line per set, and
/// checks that every sandboxed bot's sandbox starts (a machine that cannot sandbox is an
/// error before any set, as in `hus match`).
pub fn prepare_run<S: Store + ?Sized>(
    config: &LeagueConfig,
    store: &mut S,
    logs: &Path,
    say: &mut dyn FnMut(String),
) -> Result<()> {
    for r in store.requeue_running()? {
        let kept = set_aside(logs, &r.key.stem())?;
        say(format!(
            "{} was interrupted; it will be played again from its start{}",
            r.key,
            match kept.first() {
                Some(log) => format!(" (its partial log is kept as {})", log.display()),
                None => String::new(),
            }
        ));
    }
    for bot in &config.bots {
        if let Some(sandbox) = &bot.limits.sandbox {
            sandbox
                .probe(&bot.spec, &bot.limits)
                .map_err(|error| Error::Sandbox {
                    bot: bot.name.clone(),
                    error,
                })?;
        }
    }
    Ok(())
}

/// `hus league`: plays a league to its end; exit 0, or 130 when stopped by Ctrl-C or
/// SIGTERM (the same command then continues it).
pub fn run_league(args: &LeagueArgs) -> Result<ExitCode> {
    let config = LeagueConfig::load(&args.file)?;
    // Remote bots connect to a server's bot port; `hus league` has none.
    if let Some(bot) = config.bots.iter().find(|b| b.is_remote()) {
        return Err(Error::File {
            place: config.path.display().to_string(),
            message: format!(
                "bot {:?} is remote: hus league runs only bots it can start; a league with remote bots runs under hus serve, which listens for them",
                bot.name
            ),
        });
    }
    if let Some(url) = store_url(args.store.url.as_deref(), &config) {
        return crate::worker::run_league_on_store(args, &config, url);
    }
    if args.no_play || args.lease_given() {
        return Err(Error::Usage(format!(
            "--no-play and --lease need a PostgreSQL store (--store URL, or a store key in {}); \
             a league in its directory is played by this command alone",
            config.path.display()
        )));
    }
    let dir = args.dir.clone().unwrap_or_else(|| config.default_dir());
    let logs = dir.join(LOGS_DIR);
    referee::create_dir(&logs).map_err(|error| Error::Io {
        what: "cannot create the league's directory",
        path: logs.clone(),
        error,
    })?;
    let _lock = DirLock::acquire(&dir)?;
    let mut store = SqliteStore::open(&dir.join(STORE_FILE), true)?;
    let seed = settle_settings(&config, &mut store, &dir)?;
    sync_with_file(&config, &mut store, seed, args.quiet)?;
    let say = |line: String| {
        if !args.quiet {
            eprintln!("{line}");
        }
    };
    prepare_run(&config, &mut store, &logs, &mut |line| {
        say(format!("hus league: {line}"))
    })?;
    if config.concurrency > cores() {
        eprintln!(
            "warning: concurrency {} exceeds the {} cores of this machine: bots will wait for a core, and may lose on time",
            config.concurrency,
            cores()
        );
    }
    let progress = store.progress()?;
    say(format!(
        "hus league: {} in {}: {} of {} sets played, {} to play, {} at a time; seed {seed}",
        config.path.display(),
        dir.display(),
        progress.done,
        progress.scheduled,
        progress.pending,
        config.concurrency
    ));

    // The referee runs a little above its bots when the system allows it, so that its
    // timing is not at the mercy of busy bots (as in `hus match`). A nice value belongs
    // to a thread and is inherited by the threads it creates: it is raised before the
    // runtime starts its worker threads, which play the sets.
    let nice = referee::raise_referee_priority();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    let stopped = runtime.block_on(play_pending(&config, &dir, &mut store, nice, args.quiet))?;
    drop(runtime);
    if let Some(signal) = stopped {
        eprintln!(
            "hus league: stopped by {signal}; finished sets are kept, and the same command continues the league"
        );
        return Ok(ExitCode::from(130));
    }
    let standings = read_standings(&store)?;
    print(&standings.render(args.format));
    Ok(ExitCode::SUCCESS)
}

/// The league's PostgreSQL store, for `hus league` and `hus serve` alike: `--store`
/// (or the environment variable HUS_STORE), else the file's `store` key; `None`: the
/// SQLite file of the league's directory.
pub fn store_url<'a>(given: Option<&'a str>, config: &'a LeagueConfig) -> Option<&'a str> {
    given.or(config.store.as_deref())
}

/// Brings the store in line with the file: the bots and the schedule from `seed`, with
/// a line on stderr for each bot that left, came back or changed its command.
pub(crate) fn sync_with_file(
    config: &LeagueConfig,
    store: &mut dyn Store,
    seed: u64,
    quiet: bool,
) -> Result<()> {
    // The entrants: the bots, or the teams when the file declares them.
    let entrants = config.entrants();
    let names: Vec<String> = entrants.iter().map(|(name, _)| name.clone()).collect();
    let plan = schedule(&names, &config.format, config.rounds, seed);
    let entries: Vec<BotEntry> = entrants
        .into_iter()
        .map(|(name, command)| BotEntry { name, command })
        .collect();
    let sync = store.sync(&entries, &plan)?;
    announce_sync(&sync, &config.path, &mut |line| {
        if !quiet {
            eprintln!("hus league: {line}");
        }
    });
    Ok(())
}

/// Says what a sync of the store with the league file changed among the bots, a line
/// each (`say` adds the command's name): a bot added, removed, back, or with another
/// command. At the league's first run every bot is new: nothing is said then.
pub fn announce_sync(sync: &SyncReport, file: &Path, say: &mut dyn FnMut(String)) {
    if !sync.first {
        for name in &sync.added_bots {
            say(format!(
                "{name} is new in {}: its sets join the schedule",
                file.display()
            ));
        }
    }
    for name in &sync.removed_bots {
        say(format!(
            "{name} is no longer in {}: its finished sets still count, it plays no more",
            file.display()
        ));
    }
    for name in &sync.returned_bots {
        say(format!("{name} is back in the league"));
    }
    for (name, before, now) in &sync.changed_commands {
        say(format!(
            "{name}'s command changed from {before:?} to {now:?}; its finished sets keep their results"
        ));
    }
}

/// `hus standings DIR` (or `--store URL`): the table of a league, running or not.
pub fn run_standings(args: &StandingsArgs) -> Result<ExitCode> {
    // A directory given is read even when HUS_STORE is set (the variable is only a
    // default); with --store on the command line too, the command is ambiguous. (clap's
    // derived arguments do not say where a value came from: one equal to the
    // variable's is taken to be the variable.)
    let from_env = |url: &str| std::env::var_os("HUS_STORE").is_some_and(|v| v == url);
    let usage = |what: &str| Err(Error::Usage(format!("hus standings {what}")));
    let dir = match (&args.dir, args.store.url.as_deref()) {
        (Some(_), Some(url)) if !from_env(url) => {
            return usage("takes the league's directory (DIR) or --store URL, not both")
        }
        (Some(dir), _) => dir,
        (None, Some(url)) => return standings_of_store(url, args),
        (None, None) => {
            return usage("needs the league's directory (DIR), or --store URL (or HUS_STORE)")
        }
    };
    let path = dir.join(STORE_FILE);
    if !path.is_file() {
        return Err(Error::NoLeague { dir: dir.clone() });
    }
    let store = SqliteStore::open(&path, false)?;
    let standings = read_standings(&store)?;
    print(&standings.render(args.format));
    Ok(ExitCode::SUCCESS)
}

/// `hus standings --store URL`.
fn standings_of_store(url: &str, args: &StandingsArgs) -> Result<ExitCode> {
    let store = crate::store::PgStore::connect(url)?;
    // A database `hus league --store` never wrote to (a typo in its name): not a
    // league of no sets.
    if store.settings()?.is_empty() {
        return Err(Error::NoLeagueInStore {
            place: store.place().to_string(),
        });
    }
    let standings = read_standings(&store)?;
    print(&standings.render(args.format));
    Ok(ExitCode::SUCCESS)
}

/// The standings from everything in a store.
pub fn read_standings(store: &dyn Store) -> Result<Standings> {
    let info = LeagueInfo::from_settings(&store.settings()?);
    let progress = store.progress()?;
    let bots = store.bots()?;
    let sets = store.finished()?;
    Ok(compute(info, progress, &bots, &sets))
}

pub(crate) fn print(text: &str) {
    use std::io::Write;
    // A closed stdout (`hus standings DIR | head`) is a normal end.
    let _ = std::io::stdout().write_all(text.as_bytes());
}

/// Compares the file's settings with those the league was played with (refusing a
/// change that makes results incomparable), stores them at the first run, and returns
/// the league's seed: the file's, else the stored one, else a fresh one.
pub fn settle_settings(config: &LeagueConfig, store: &mut dyn Store, dir: &Path) -> Result<u64> {
    let stored = store.settings()?;
    let time_key = match config.time {
        referee::TimeControl::PerMove(_) => "move_time",
        referee::TimeControl::Clock { .. } => "clock",
    };
    let fixed: [(&str, &str, String); 5] = [
        (
            "rules",
            "rules",
            format!("rules = \"{}\"", config.rules.preset().name()),
        ),
        (
            "width",
            "width",
            format!("width = {}", config.rules.width()),
        ),
        ("time", time_key, show_time(&config.time)),
        ("games", "games", format!("games = {}", config.games)),
        (
            "openings",
            "openings",
            shown("openings", &raw_value("openings", config)),
        ),
    ];
    let mut settings = BTreeMap::new();
    for (key, file_key, now) in fixed {
        // A league played before openings were stored played none.
        let before = match (key, stored.get(key)) {
            ("openings", None) if stored.contains_key("rules") => Some(""),
            (_, before) => before.map(String::as_str),
        };
        if let Some(before) = before {
            let before = shown(key, before);
            if before != now {
                return Err(Error::Incompatible {
                    place: config.place(file_key),
                    now,
                    before,
                    dir: dir.to_path_buf(),
                });
            }
        }
        settings.insert(key.to_string(), raw_value(key, config));
    }
    let stored_seed = stored.get("seed").and_then(|s| s.parse::<u64>().ok());
    let seed = match (config.seed, stored_seed) {
        (Some(file), Some(before)) if file != before => {
            return Err(Error::Incompatible {
                place: config.place("seed"),
                now: format!("seed = {file}"),
                before: format!("seed = {before}"),
                dir: dir.to_path_buf(),
            })
        }
        (Some(file), _) => file,
        (None, Some(before)) => before,
        (None, None) => {
            let fresh = rand::random::<u64>() % 1_000_000_000;
            eprintln!(
                "hus league: the file gives no seed; this league's seed is {fresh} (kept in {})",
                dir.join(STORE_FILE).display()
            );
            fresh
        }
    };
    settings.insert("seed".into(), seed.to_string());
    let (anchor, rating) = match &config.anchor {
        Anchor::PoolAverage(r) => (String::new(), *r),
        Anchor::Bot { name, rating } => (name.clone(), *rating),
    };
    settings.insert("anchor".into(), anchor);
    settings.insert("anchor_rating".into(), rating.to_string());
    settings.insert("file".into(), config.path.display().to_string());
    // Not compared: a league of teams names them in its standings.
    settings.insert(
        "teams".into(),
        crate::standings::teams_setting(&config.teams),
    );
    store.save_settings(&settings)?;
    Ok(seed)
}

/// The stored form of a compared setting: the same text the messages show. Openings
/// are stored as the path the file writes, the number of openings and a hash of them
/// (`book.txt 64 0123456789abcdef`), or empty for none.
fn raw_value(key: &str, config: &LeagueConfig) -> String {
    match key {
        "rules" => config.rules.preset().name().to_string(),
        "width" => config.rules.width().to_string(),
        "time" => show_time(&config.time),
        "openings" => match &config.openings {
            Some(o) => format!("{} {} {}", o.book.len(), o.hash(), o.written),
            None => String::new(),
        },
        _ => config.games.to_string(),
    }
}

/// A stored setting as the file would write it.
fn shown(key: &str, value: &str) -> String {
    match key {
        "rules" => format!("rules = \"{value}\""),
        "time" => value.to_string(),
        "openings" => {
            let mut parts = value.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(count), Some(hash), Some(path)) => format!(
                    "openings = {} ({count} openings, content hash {hash})",
                    toml_string(path)
                ),
                _ => "no openings".to_string(),
            }
        }
        _ => format!("{key} = {value}"),
    }
}

/// A string as TOML writes it (a basic string, escaped).
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Renames the files an interrupted attempt of a set left (its log and the bots'
/// stderr) to `STEM.partial-N.*`, so the next attempt starts afresh and nothing is
/// deleted. Returns the new names, the log first.
pub fn set_aside(logs: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    let suffixes = ["jsonl", "a.stderr", "b.stderr"];
    // A link among them is refused before anything moves: the set's files are opened
    // without following links, and the link itself is the user's to look at.
    for s in suffixes {
        let path = logs.join(format!("{stem}.{s}"));
        referee::refuse_symlink(&path).map_err(|error| Error::Io {
            what: "cannot use the set's file",
            path,
            error,
        })?;
    }
    if !suffixes
        .iter()
        .any(|s| logs.join(format!("{stem}.{s}")).exists())
    {
        return Ok(Vec::new());
    }
    let n = (1..)
        .find(|n| {
            suffixes
                .iter()
                .all(|s| !logs.join(format!("{stem}.partial-{n}.{s}")).exists())
        })
        .unwrap_or(1);
    let mut kept = Vec::new();
    for s in suffixes {
        let from = logs.join(format!("{stem}.{s}"));
        if from.exists() {
            let to = logs.join(format!("{stem}.partial-{n}.{s}"));
            std::fs::rename(&from, &to).map_err(|error| Error::Io {
                what: "cannot keep a partial log",
                path: from.clone(),
                error,
            })?;
            kept.push(to);
        }
    }
    Ok(kept)
}

/// What one set's task ends with.
pub enum Ending {
    /// Played to its end.
    Finished(SetOutcome),
    /// Cut off by a stop; its log ends with `aborted`.
    Stopped,
    /// A bot could not be started: nothing was played, and its log was removed.
    CannotStart(anyhow::Error),
    /// Could not be played (a log that cannot be written, a set that broke off).
    Failed(anyhow::Error),
}

/// What every set of a run shares: the league, where logs go, the bots (with the
/// referee's nice value) and the referee's version for the logs' headers.
#[derive(Clone)]
pub struct Shared {
    /// The league file, checked.
    pub config: LeagueConfig,
    /// Where the sets' logs and the bots' stderr are written.
    pub logs: PathBuf,
    /// The bots by name.
    pub bots: HashMap<String, BotConfig>,
    /// The referee's version.
    pub referee: String,
    /// Where a remote bot's links come from, by name (`hus serve` fills it from its bot
    /// port); a bot without one is started as a process.
    pub links: HashMap<String, Arc<dyn referee::Connect>>,
}

impl Shared {
    /// The league's bots at the referee's nice value (see
    /// `referee::raise_referee_priority`), their logs in `logs`.
    pub fn new(config: &LeagueConfig, logs: PathBuf, nice: Option<i32>) -> Shared {
        Shared {
            config: config.clone(),
            logs,
            bots: config
                .bots
                .iter()
                .map(|b| {
                    let mut b = b.clone();
                    b.limits.nice = nice;
                    (b.name.clone(), b)
                })
                .collect(),
            referee: referee::referee_version(),
            links: HashMap::new(),
        }
    }
}

/// Plays pending sets until none is left; returns the signal's name when stopped.
async fn play_pending(
    config: &LeagueConfig,
    dir: &Path,
    store: &mut SqliteStore,
    nice: Option<i32>,
    quiet: bool,
) -> Result<Option<&'static str>> {
    let shared = Arc::new(Shared::new(config, dir.join(LOGS_DIR), nice));
    let progress = store.progress()?;
    let start = read_standings(store)?;
    let points = start
        .bots
        .iter()
        .filter(|b| b.active)
        .map(|b| (b.name.clone(), b.points))
        .collect();
    let mut reporter = Reporter::new(progress.scheduled, progress.done, points, quiet);

    // The name of the signal that stops the league (or of the failure), once there is one.
    let (stop_tx, stop_rx) = watch::channel(None::<&'static str>);
    let mut tasks: JoinSet<(ClaimedSet, Ending)> = JoinSet::new();
    // Declared after `tasks`, so dropped before it: whatever way this function is left,
    // the sets still running are stopped (their bots killed) before it returns.
    let mut threads = SetThreads::new(stop_tx.clone());
    let signal = referee::stop_signal();
    tokio::pin!(signal);
    let mut stopped: Option<&'static str> = None;
    let mut failure: Option<Error> = None;
    let mut interrupted: Vec<ClaimedSet> = Vec::new();
    loop {
        while stopped.is_none() && failure.is_none() && tasks.len() < config.concurrency {
            let Some(set) = store.claim_next()? else {
                break;
            };
            set_aside(&shared.logs, &set.key.stem())?;
            store.set_log(set.id, &format!("{LOGS_DIR}/{}.jsonl", set.key.stem()))?;
            tasks.spawn(threads.start(set, shared.clone(), stop_rx.clone()));
        }
        if tasks.is_empty() {
            break;
        }
        tokio::select! {
            name = &mut signal, if stopped.is_none() => {
                stopped = Some(name);
                let _ = stop_tx.send(Some(name));
                reporter.note(&format!("hus league: {name}: stopping the running sets"));
            }
            joined = tasks.join_next() => {
                let Some(joined) = joined else { continue };
                let (set, ending) = joined.map_err(|e| Error::Runtime(format!("a set's task failed: {e}")))?;
                match ending {
                    Ending::Finished(outcome) => {
                        store.record(set.id, &outcome)?;
                        reporter.finished(&set.key, &outcome);
                    }
                    Ending::Stopped => interrupted.push(set),
                    Ending::Failed(error) | Ending::CannotStart(error) => {
                        if failure.is_none() {
                            failure = Some(Error::Set { set: set.key.to_string(), error });
                            let _ = stop_tx.send(Some("the failure of another set"));
                        }
                        interrupted.push(set);
                    }
                }
            }
        }
    }
    reporter.finish();
    if !interrupted.is_empty() {
        let ids: Vec<_> = interrupted.iter().map(|s| s.id).collect();
        store.requeue(&ids)?;
        for set in &interrupted {
            if let Some(log) = set_aside(&shared.logs, &set.key.stem())?.first() {
                if !quiet {
                    eprintln!(
                        "hus league: {} was stopped; its partial log is kept as {}",
                        set.key,
                        log.display()
                    );
                }
            }
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(stopped),
    }
}

/// The threads of the running sets. Each set runs on a thread of its own with a
/// single-threaded runtime, as `hus match` runs its one set: a set's tasks (the set
/// and its bots' readers) then hand each ply to each other on one thread, with no
/// wake-up of another thread in between, and the sets of a league are independent
/// threads that the kernel spreads over the cores. On a multi-threaded runtime, the
/// sets shared its worker threads and a ply crossed threads (docs/league.md, Speed).
/// `hus worker` plays its sets the same way (league/src/worker.rs).
pub(crate) struct SetThreads {
    stop: watch::Sender<Option<&'static str>>,
    running: Vec<std::thread::JoinHandle<()>>,
}

impl SetThreads {
    /// No set yet; when dropped with sets still running, a stop is sent on `stop`
    /// (their sets must listen to it, or be stopped otherwise) and their threads are
    /// waited for.
    pub(crate) fn new(stop: watch::Sender<Option<&'static str>>) -> SetThreads {
        SetThreads {
            stop,
            running: Vec::new(),
        }
    }

    /// Starts `set` on a new thread; the returned future ends with its ending. A set
    /// whose thread cannot start, or ends without an ending, has failed (and is put
    /// back into the queue like any interrupted set).
    pub(crate) fn start(
        &mut self,
        set: ClaimedSet,
        shared: Arc<Shared>,
        stop: watch::Receiver<Option<&'static str>>,
    ) -> impl std::future::Future<Output = (ClaimedSet, Ending)> {
        self.running.retain(|t| !t.is_finished());
        let (tx, rx) = tokio::sync::oneshot::channel();
        let played = set.clone();
        // The thread inherits this thread's scheduling priority (the referee's, raised
        // above its bots' before the runtime started), and its bots inherit it in turn,
        // lowered again for them by their limits.
        let spawned = std::thread::Builder::new()
            .name(format!("set {}", set.key))
            .spawn(move || {
                let ending = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(play_one(played, shared, stop)),
                    Err(e) => (
                        played,
                        Ending::Failed(anyhow::anyhow!("cannot start a set's runtime: {e}")),
                    ),
                };
                let _ = tx.send(ending);
            });
        let started = match spawned {
            Ok(thread) => {
                self.running.push(thread);
                Ok(())
            }
            Err(e) => Err(e),
        };
        async move {
            if let Err(e) = started {
                return (
                    set,
                    Ending::Failed(anyhow::anyhow!("cannot start a set's thread: {e}")),
                );
            }
            match rx.await {
                Ok(ended) => ended,
                Err(_) => (
                    set,
                    Ending::Failed(anyhow::anyhow!("a set's thread ended without a result")),
                ),
            }
        }
    }
}

impl Drop for SetThreads {
    /// Stops the sets still running and waits for their threads: a set cut off this
    /// way ends its log with `aborted` and kills its bots, as on Ctrl-C.
    fn drop(&mut self) {
        if self.running.iter().any(|t| !t.is_finished()) {
            let _ = self.stop.send_if_modified(|stop| {
                if stop.is_none() {
                    *stop = Some("the end of the league's run");
                    true
                } else {
                    false
                }
            });
        }
        for thread in self.running.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Plays one set through `play_set`, exactly as `hus match` does, writing its log and
/// collecting what the store keeps; a stop cuts it off and ends its log with `aborted`.
async fn play_one(
    set: ClaimedSet,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<Option<&'static str>>,
) -> (ClaimedSet, Ending) {
    let ending = play_claimed(&set, &shared, &mut stop, None).await;
    (set, ending)
}

/// Plays a claimed set through `play_set`, as `hus league` does: its log in the logs'
/// directory (named after the set's key), what the store keeps collected into the
/// `Ending`. Each record also goes to `tap` after the log has it (`hus serve` shows
/// live games with it; a tap's error is ignored: watchers never stop a set). A stop
/// on `stop` cuts the set off and ends its log with `aborted`.
pub async fn play_claimed(
    set: &ClaimedSet,
    shared: &Shared,
    stop: &mut watch::Receiver<Option<&'static str>>,
    tap: Option<&mut (dyn RecordSink + Send)>,
) -> Ending {
    let stem = set.key.stem();
    let (log, stem) = match LogWriter::create(&shared.logs, &stem) {
        Ok(created) => created,
        Err(e) => return Ending::Failed(e),
    };
    // Each side: a bot, or a team of the file's bots (each member its own process and
    // stderr file, `STEM.a1.stderr`...), exactly as `hus match --team-a` builds them.
    let mut lineups = Vec::with_capacity(2);
    for (name, letter) in [(&set.key.a, "a"), (&set.key.b, "b")] {
        let entrant = |bot: &BotConfig, suffix: String| Entrant {
            spec: bot.spec.clone(),
            stderr_path: shared.logs.join(format!("{stem}.{suffix}.stderr")),
            limits: bot.limits.clone(),
            // A remote bot plays over its link, as a member of a team too.
            link: shared.links.get(bot.name.as_str()).cloned(),
            time: None,
        };
        if let Some(team) = shared.config.team(name) {
            let mut members = Vec::with_capacity(team.members.len());
            for (i, m) in team.members.iter().enumerate() {
                let Some(bot) = shared.bots.get(m) else {
                    return Ending::Failed(anyhow::anyhow!(
                        "no bot named {m} (of team {name}) in the league file"
                    ));
                };
                members.push(Member {
                    name: m.clone(),
                    entrant: entrant(bot, format!("{letter}{}", i + 1)),
                });
            }
            lineups.push(Lineup::Team(Team {
                name: name.clone(),
                members,
            }));
        } else {
            let Some(bot) = shared.bots.get(name) else {
                return Ending::Failed(anyhow::anyhow!("no bot named {name} in the league file"));
            };
            lineups.push(Lineup::from(entrant(bot, letter.to_string())));
        }
    }
    let Ok(lineups) = <[Lineup; 2]>::try_from(lineups) else {
        return Ending::Failed(anyhow::anyhow!("a set needs two sides"));
    };
    let c = &shared.config;
    let set_config = SetConfig {
        rules: c.rules,
        games: c.games,
        seed: set.seed,
        time: c.time,
        ready_time: c.ready_time,
        early_stop: false,
        // From the set's seed, itself from the league's seed and the set's key: adding
        // a bot changes no other set's openings.
        openings: c
            .openings
            .as_ref()
            .map(|o| referee::openings_for_set(&o.book, set.seed, c.games))
            .unwrap_or_default(),
        sprt: None,
    };
    let mut sink = Collector {
        log,
        outcome: SetOutcome {
            log: format!("{LOGS_DIR}/{stem}.jsonl"),
            ..SetOutcome::default()
        },
        first: 0,
        tap,
    };
    let result = tokio::select! {
        result = play_set(&set_config, lineups, &shared.referee, &mut sink) => Some(result),
        _ = stop.wait_for(|stop| stop.is_some()) => None,
    };
    match result {
        None => {
            // The set's future is gone, and with it both bots (dropping a bot process
            // kills its process group).
            let why = stop.borrow().unwrap_or("hus league");
            sink.log.end_aborted(format!("stopped by {why}"));
            Ending::Stopped
        }
        // A bot that cannot start: the log holds only its header, and goes.
        Some(Err(e)) => match sink.log.discard_unstarted(&e, &[]) {
            Some(_) => Ending::CannotStart(e),
            None => Ending::Failed(e),
        },
        Some(Ok(end)) => {
            let mut outcome = sink.outcome;
            outcome.points = end.points;
            outcome.winner = end.winner.map(|w| w as u8);
            Ending::Finished(outcome)
        }
    }
}

/// The sink of a league's set: the log first (as `hus match` writes it), then what the
/// store keeps.
struct Collector<'t> {
    log: LogWriter,
    outcome: SetOutcome,
    first: u8,
    tap: Option<&'t mut (dyn RecordSink + Send)>,
}

impl RecordSink for Collector<'_> {
    fn record(&mut self, record: &Record) -> anyhow::Result<()> {
        self.log.record(record)?;
        if let Some(tap) = self.tap.as_mut() {
            let _ = tap.record(record);
        }
        let o = &mut self.outcome;
        match record {
            Record::GameStart(g) => self.first = g.first as u8,
            Record::Move(m) => {
                let seat = m.bot & 1;
                o.moves[seat] += 1;
                o.move_ms[seat] += m.ms;
            }
            Record::Fault(f) => o.faults.push(FaultRow {
                game: f.game,
                ply: f.ply,
                bot: (f.bot & 1) as u8,
                kind: f.kind.clone(),
                detail: f.detail.clone(),
            }),
            Record::GameEnd(g) => o.games.push(GameRow {
                game: g.game,
                first: self.first,
                winner: g.winner.map(|w| w as u8),
                points: g.points,
                reason: g.reason.clone(),
                plies: g.plies,
                double: g.double,
                faulted: g.faulted.iter().map(|&b| b as u8).collect(),
            }),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn partial_logs_are_renamed_never_overwritten() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path();
        assert_eq!(
            set_aside(logs, "r1-a-vs-b").expect("nothing to do"),
            Vec::<PathBuf>::new()
        );
        for attempt in 1..=2 {
            for s in ["jsonl", "a.stderr", "b.stderr"] {
                std::fs::write(
                    logs.join(format!("r1-a-vs-b.{s}")),
                    format!("attempt {attempt}"),
                )
                .expect("write");
            }
            let kept = set_aside(logs, "r1-a-vs-b").expect("set aside");
            assert_eq!(
                kept[0],
                logs.join(format!("r1-a-vs-b.partial-{attempt}.jsonl"))
            );
        }
        // Only a log (the bots never started): it is kept alone.
        std::fs::write(logs.join("r1-a-vs-b.jsonl"), "attempt 3").expect("write");
        set_aside(logs, "r1-a-vs-b").expect("set aside");
        assert_eq!(
            names(logs),
            [
                "r1-a-vs-b.partial-1.a.stderr",
                "r1-a-vs-b.partial-1.b.stderr",
                "r1-a-vs-b.partial-1.jsonl",
                "r1-a-vs-b.partial-2.a.stderr",
                "r1-a-vs-b.partial-2.b.stderr",
                "r1-a-vs-b.partial-2.jsonl",
                "r1-a-vs-b.partial-3.jsonl",
            ]
        );
        let first = std::fs::read_to_string(logs.join("r1-a-vs-b.partial-1.jsonl")).expect("read");
        assert_eq!(first, "attempt 1");
    }
}
