//! `hus league LEAGUE.toml`: checks the file, takes the directory's lock, brings the
//! store in line with the file, puts interrupted sets back, then plays the pending sets,
//! up to `concurrency` at once, each through `referee::play_set` exactly as `hus match`
//! plays it, and records each finished set in one transaction.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::args::{LeagueArgs, StandingsArgs};
use crate::error::{Error, Result};
use crate::file::{cores, show_time, Anchor, LeagueConfig};
use crate::lock::DirLock;
use crate::pool::{Ending, SetPool, Shared};
use crate::progress::Reporter;
use crate::schedule::schedule;
use crate::set_files::{set_aside, SetFiles};
use crate::standings::{compute, LeagueInfo, Standings};
use crate::store::{BotEntry, ClaimedSet, SqliteStore, Store, SyncReport};

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
    let mut pool = SetPool::new();
    let mut interrupted: Vec<ClaimedSet> = Vec::new();
    let played = fill_pool(
        config,
        &shared,
        store,
        &mut pool,
        &mut reporter,
        &mut interrupted,
    )
    .await;
    // Whatever way the loop was left, the sets still running are stopped (their logs
    // end with `aborted`, their bots are killed) and their threads ended. After a
    // failure they stay running in the store, and the next run puts them back.
    pool.shutdown("the end of the league's run").await;
    let (stopped, failure) = played?;
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

/// `hus league`'s side of the pool: the store's pending sets go in, `concurrency` at
/// a time; each finished set is recorded, a stopped or failed one goes to
/// `interrupted`. Returns the name of the signal that stopped the sets, and the first
/// set's failure (which stopped the others), once every set has ended; an error of the
/// store ends it at once.
async fn fill_pool(
    config: &LeagueConfig,
    shared: &Arc<Shared>,
    store: &mut SqliteStore,
    pool: &mut SetPool,
    reporter: &mut Reporter,
    interrupted: &mut Vec<ClaimedSet>,
) -> Result<(Option<&'static str>, Option<Error>)> {
    let signal = referee::stop_signal();
    tokio::pin!(signal);
    let mut stopped: Option<&'static str> = None;
    let mut failure: Option<Error> = None;
    loop {
        while stopped.is_none() && failure.is_none() && pool.len() < config.concurrency {
            let Some(set) = store.claim_next()? else {
                break;
            };
            let files = SetFiles::new(&shared.logs, &set.key.stem());
            files.set_aside()?;
            store.set_log(set.id, &format!("{LOGS_DIR}/{}.jsonl", files.stem()))?;
            pool.start(set, shared.clone(), None);
        }
        if pool.is_empty() {
            break;
        }
        tokio::select! {
            name = &mut signal, if stopped.is_none() => {
                stopped = Some(name);
                pool.stop_all(name);
                reporter.note(&format!("hus league: {name}: stopping the running sets"));
            }
            Some((set, ending)) = pool.next_ended() => match ending {
                Ending::Finished(outcome) => {
                    store.record(set.id, &outcome)?;
                    reporter.finished(&set.key, &outcome);
                }
                Ending::Stopped => interrupted.push(set),
                Ending::Failed(error) | Ending::CannotStart(error) => {
                    if failure.is_none() {
                        failure = Some(Error::Set { set: set.key.to_string(), error });
                        pool.stop_all("the failure of another set");
                    }
                    interrupted.push(set);
                }
            },
        }
    }
    Ok((stopped, failure))
}
