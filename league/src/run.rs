//! `hus league LEAGUE.toml`: checks the file, takes the directory's lock, brings the
//! store in line with the file, puts interrupted sets back, then plays the pending sets,
//! up to `concurrency` at once, each through `referee::play_set` exactly as `hus match`
//! plays it, and records each finished set in one transaction.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::args::{LeagueArgs, PruneArgs, StandingsArgs};
use crate::coordinator::{
    AfterFailure, Coordinator, Finish, Link, Played, Source, Start, StoreChange,
};
use crate::disk::{DiskFloor, FloorChange};
use crate::error::{Error, Result};
use crate::file::{cores, LeagueConfig};
use crate::lock::DirLock;
use crate::log_place::{LogForm, LogPlace};
use crate::pool::{SetFailure, SetPool, Shared};
use crate::progress::Reporter;
use crate::set_files::{delete_set_files, set_aside, SetFiles, LOGS_DIR};
use crate::setup::{
    open_dir_store, prepare_run, print, read_standings, settle_settings, store_url, sync_with_file,
    STORE_FILE,
};
use crate::store::{
    ClaimedSet, Claims, Reads, Recorded, Schedule, SetOutcome, SqliteStore, StoreThread,
};

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
    let mut store = open_dir_store(&dir)?;
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
    let floor = DiskFloor::new(vec![dir.clone(), logs.clone()], args.min_free.bytes()?);
    let stopped = runtime.block_on(play_pending(&config, &dir, store, nice, args.quiet, floor))?;
    drop(runtime);
    if let Some(signal) = stopped {
        eprintln!(
            "hus league: stopped by {signal}; finished sets are kept, and the same command continues the league"
        );
        return Ok(ExitCode::from(130));
    }
    let store = open_dir_store(&dir)?;
    let standings = read_standings(&store)?;
    print(&standings.render(args.format));
    Ok(ExitCode::SUCCESS)
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

/// `hus prune DIR [--keep-logs N] [--archive]`, once no league or server holds the
/// directory: deletes the logs (and stderr files, and archives) of every finished set
/// but the N most recent, the store keeping every result and marking those logs
/// pruned; then archives the logs of every whole range of 64 finished sets.
pub fn run_prune(args: &PruneArgs) -> Result<ExitCode> {
    let dir = &args.dir;
    let path = dir.join(STORE_FILE);
    if !path.is_file() {
        return Err(Error::NoLeague { dir: dir.clone() });
    }
    let _lock = DirLock::acquire(dir)?;
    let mut store = SqliteStore::open(&path, false)?;
    let p = store.progress()?;
    let finished = p.done + p.done_elsewhere;
    let logs_dir = dir.join(LOGS_DIR);
    if let Some(keep) = args.keep_logs {
        let up_to = finished.saturating_sub(keep);
        let logs = store.prune_logs(up_to)?;
        let (mut files, mut bytes) = (0, 0);
        for log in &logs {
            let (deleted, size) = delete_set_files(&logs_dir, log);
            files += deleted.len();
            bytes += size;
        }
        let (archives, size) =
            crate::archive::delete_archives_up_to(&logs_dir, up_to).map_err(|error| Error::Io {
                what: "cannot delete pruned archives",
                path: logs_dir.join(crate::archive::ARCHIVE_DIR),
                error,
            })?;
        files += archives.len();
        bytes += size;
        println!(
            "hus prune: {} of {finished} finished sets had their logs deleted now ({files} files, {bytes} bytes); the logs of the last {} are kept; every result stays",
            logs.len(),
            keep.min(finished)
        );
    }
    if args.archive {
        let report = crate::archive::archive_logs(&mut store, &logs_dir, finished, usize::MAX)?;
        println!(
            "hus prune: {} logs archived in {} under {}/{} ({} log files deleted); the last {} finished sets' logs wait for a whole 64",
            report.logs,
            if report.archives == 1 { "1 file".to_string() } else { format!("{} files", report.archives) },
            LOGS_DIR,
            crate::archive::ARCHIVE_DIR,
            report.deleted,
            finished % crate::archive::ARCHIVE_SETS
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `hus standings --store URL`.
fn standings_of_store(url: &str, args: &StandingsArgs) -> Result<ExitCode> {
    let mut store = crate::store::PgStore::connect(url)?;
    // A database `hus league --store` never wrote to (a typo in its name): not a
    // league of no sets.
    if store.settings()?.is_empty() {
        return Err(Error::NoLeagueInStore {
            place: store.place().to_string(),
        });
    }
    let standings = read_standings(&store)?;
    print(&standings.render(args.format));
    // Every live worker gave up every pending set: said on stderr (the standings on
    // stdout keep their documented shape).
    if let Some(stuck) = store.stuck()? {
        eprintln!("hus standings: {stuck}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Plays pending sets until none is left; returns the signal's name when stopped. The
/// store moves to a thread of its own for the run, and is closed at its end.
async fn play_pending(
    config: &LeagueConfig,
    dir: &Path,
    store: SqliteStore,
    nice: Option<i32>,
    quiet: bool,
    floor: DiskFloor,
) -> Result<Option<&'static str>> {
    let shared = Arc::new(Shared::new(config, dir.join(LOGS_DIR), nice));
    let progress = store.progress()?;
    let start = read_standings(&store)?;
    let points = start
        .bots
        .iter()
        .filter(|b| b.active)
        .map(|b| (b.name.clone(), b.points))
        .collect();
    let reporter = Reporter::new(progress.scheduled, progress.done, points, quiet);
    let thread = StoreThread::spawn(store)
        .map_err(|e| Error::Runtime(format!("cannot start the store's thread: {e}")))?;
    let source = LeagueSource {
        shared,
        reporter,
        quiet,
    };
    let coordinator = Coordinator::new(
        Link::new(thread),
        source,
        SetPool::new(),
        config.concurrency,
        floor,
    )
    .await?;
    let ended = coordinator.run(referee::stop_signal).await;
    ended.source.reporter.finish();
    // Closed on its thread, once its last operation is done.
    ended.link.shutdown().await;
    match ended.result? {
        Finish::Done => Ok(None),
        Finish::Stopped(signal) => Ok(Some(signal)),
    }
}

/// `hus league`'s sets: the store's pending sets in order, each recorded as it
/// finishes; the first set that cannot be played stops the league (the others are
/// stopped, those that finished recorded), and the same command continues it.
struct LeagueSource {
    shared: Arc<Shared>,
    reporter: Reporter,
    quiet: bool,
}

impl Source<SqliteStore> for LeagueSource {
    type Outside = std::convert::Infallible;

    async fn claim(
        &mut self,
        link: &mut Link<SqliteStore>,
        _running: &[ClaimedSet],
    ) -> Result<Option<Start>> {
        let logs = self.shared.logs.clone();
        let claimed = link
            .call(move |store| -> Result<Option<ClaimedSet>> {
                let Some(set) = store.claim_next()? else {
                    return Ok(None);
                };
                let files = SetFiles::new(&logs, &set.key.stem());
                files.set_aside()?;
                store.set_log(set.claim(), &LogPlace::file(files.stem(), LogForm::Plain))?;
                Ok(Some(set))
            })
            .await?;
        Ok(claimed.map(|set| Start {
            set,
            shared: self.shared.clone(),
            tap: None,
        }))
    }

    async fn finished(&mut self, _set: &ClaimedSet, outcome: SetOutcome) -> Result<Played> {
        Ok(Played::without_log(outcome))
    }

    async fn recorded(
        &mut self,
        _link: &mut Link<SqliteStore>,
        set: &ClaimedSet,
        played: &Played,
        recorded: Recorded,
    ) -> Result<()> {
        if recorded != Recorded::Counted {
            // One runner holds the directory's lock: a claim cannot go stale under it.
            return Err(Error::Runtime(format!(
                "{}: the store no longer holds its claim; its result is not recorded",
                set.key
            )));
        }
        self.reporter.finished(&set.key, &played.outcome);
        Ok(())
    }

    async fn failed(
        &mut self,
        _link: &mut Link<SqliteStore>,
        set: &ClaimedSet,
        failure: SetFailure,
    ) -> Result<AfterFailure> {
        Ok(AfterFailure::Fatal(Error::Set {
            set: set.key.to_string(),
            error: failure,
        }))
    }

    async fn given_back(
        &mut self,
        _link: &mut Link<SqliteStore>,
        sets: &[ClaimedSet],
        _put_back: usize,
    ) -> Result<()> {
        for set in sets {
            if let Some(log) = set_aside(&self.shared.logs, &set.key.stem())?.first() {
                if !self.quiet {
                    self.reporter.note(&format!(
                        "hus league: {} was stopped; its partial log is kept as {}",
                        set.key,
                        log.display()
                    ));
                }
            }
        }
        Ok(())
    }

    fn abandoned(&mut self, _set: &ClaimedSet) {}

    fn lost(&mut self, _set: &ClaimedSet) {}

    fn say(&mut self, line: &str) {
        self.reporter.note(&format!("hus league: {line}"));
    }

    /// Nothing left to play: the league is over, unless it waits for room with sets
    /// still to play (a league with nothing left ends as ever, whatever the disk).
    async fn done(&mut self, link: &mut Link<SqliteStore>) -> Result<bool> {
        let progress = link.call(|s| s.progress()).await?;
        Ok(progress.pending == 0)
    }

    fn store_changed(&mut self, _change: &StoreChange) {}

    fn floor_changed(&mut self, change: &FloorChange) {
        match change {
            FloorChange::Same => {}
            FloorChange::Low(low) => self.reporter.note(&format!("hus league: paused: {low}")),
            FloorChange::Back(free) => self.reporter.note(&format!(
                "hus league: {}: sets start again",
                FloorChange::back_words(*free)
            )),
        }
    }
}
