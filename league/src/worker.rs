//! `hus worker --store URL`: plays a PostgreSQL store's sets on this machine, any number
//! of workers on any number of machines at once; `hus league FILE --store URL` puts a
//! league in the store and plays as one more worker; `hus workers` lists them; `hus
//! export` writes the kept logs out.
//!
//! A worker claims a set with a lease (see `store::pg`), plays it through
//! `referee::play_set` exactly as `hus league` does (the same `play_claimed`, each set
//! on a thread of its own with a single-threaded runtime: `pool::SetPool`), renews
//! its leases every quarter of their length, and sends the result with the whole log
//! (gzip) in one transaction. A set whose lease it lost (it was silent for a lease, and
//! another worker took the set) is dropped, its bots killed. A bot it cannot start:
//! the set is given back at once and the worker leaves that bot's sets to others. The
//! store unreachable (a restart, a network cut): claims, renewals and results wait and
//! are retried with a backoff from 0.2 s to 5 s; the sets in play go on meanwhile.
//!
//! An uploaded version (`NAME.vN`, not in the league file): the first set that names
//! it goes back to the store at once, and the worker leaves the version's sets to the
//! others while it makes it playable in a task of its own (`crate::uploaded`: the row
//! read, the archive fetched by hash and checked, built in this machine's sandbox into
//! its cache; a build takes minutes, and the coordinator goes on renewing leases and
//! playing meanwhile). Once built, the version is one more bot of this worker's; a
//! version that cannot be played here (never passed its checks, a wrong hash, a build
//! that fails here) is left to the others for good, said once.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::args::{ExportArgs, LeagueArgs, UploadsArg, WorkerArgs, WorkersArgs, WorkersFormat};
use crate::coordinator::{
    AfterFailure, Coordinator, Ended, Finish, Link, Played, Source, Start, StoreChange,
    BACKOFF_MAX, BACKOFF_MIN,
};
use crate::disk::{DiskFloor, FloorChange};
use crate::error::{Error, Result};
use crate::file::{BotConfig, LeagueConfig};
use crate::log_place::{LogForm, LogPlace};
use crate::pool::{SetFailure, SetPool, Shared};
use crate::set_files::SetFiles;
use crate::setup::{print, read_standings, settle_settings, sync_with_file};
use crate::store::{
    parse_version_name, unreachable, ClaimedSet, Heartbeat, PgStore, Reads, Recorded, Schedule,
    SetId, SetOutcome, Store, StoreCaller, StoreThread, Versions, WorkerRow,
};
use crate::uploaded::{
    needed_hashes, prune_once, BuildSettings, LocalBuilds, PrepareError, Pruned, Pruner,
};
use referee::SetError;
use tokio::sync::mpsc;

/// The settings that carry the league file to the workers.
const LEAGUE_TEXT: &str = "league_text";
const LEAGUE_PATH: &str = "league_path";

/// The lease of `hus league --store` without `--lease`, in seconds.
const DEFAULT_LEASE_S: f64 = 30.0;

/// How a worker runs.
struct Plan {
    concurrency: usize,
    lease: Duration,
    until_done: bool,
    quiet: bool,
    /// `hus worker` or `hus league`, for messages.
    who: &'static str,
    /// The free-space floor of the scratch directory, in bytes (0: none).
    min_free: u64,
    /// Where uploaded versions are built (`None`: no directory known, and no
    /// `--uploads-dir`), and as whom.
    uploads: Option<PathBuf>,
    /// The sandbox's user of the uploaded versions when `hus` is root.
    upload_user: Option<String>,
    /// How often the built versions no longer played are looked for.
    prune_every: Duration,
}

impl Plan {
    fn uploads(&mut self, args: &UploadsArg) {
        self.uploads = args.dir();
        self.upload_user = args.upload_user.clone();
        self.prune_every = args.prune_every;
    }
}

fn lease_of(seconds: f64) -> Result<Duration> {
    if !(seconds.is_finite() && (0.2..=86_400.0).contains(&seconds)) {
        return Err(Error::Usage(format!(
            "--lease {seconds}: a lease is between 0.2 and 86400 seconds"
        )));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `hus league FILE --store URL`: puts the league in the store (settings, bots,
/// schedule, the file itself for the workers), then plays as a worker until no set is
/// left, and prints the standings; with `--no-play`, returns after putting it there.
pub(crate) fn run_league_on_store(
    args: &LeagueArgs,
    config: &LeagueConfig,
    url: &str,
) -> Result<ExitCode> {
    let lease = lease_of(args.lease.unwrap_or(DEFAULT_LEASE_S))?;
    let mut store = PgStore::connect(url)?;
    let place = PathBuf::from(store.place());
    let seed = settle_settings(config, &mut store, &place)?;
    carry_file(config, &mut store)?;
    sync_with_file(config, &mut store, seed, args.quiet)?;
    for r in store.requeue_running()? {
        if !args.quiet {
            eprintln!(
                "hus league: {} was interrupted (its lease expired); it will be played again from its start",
                r.key
            );
        }
    }
    let progress = store.progress()?;
    if !args.quiet {
        eprintln!(
            "hus league: {} in {}: {} of {} sets played, {} to play; seed {seed}",
            config.path.display(),
            store.place(),
            progress.done,
            progress.scheduled,
            progress.pending,
        );
    }
    if args.no_play {
        if !args.quiet {
            eprintln!(
                "hus league: the sets wait for workers: hus worker --store {}",
                store.place()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    store.set_name(&format!("league@{}", store.name()));
    let mut plan = Plan {
        concurrency: config.concurrency,
        lease,
        until_done: true,
        quiet: args.quiet,
        who: "hus league",
        min_free: args.min_free.bytes()?,
        uploads: None,
        upload_user: None,
        prune_every: Duration::MAX,
    };
    plan.uploads(&args.uploads);
    if let Some(code) = work(store, Some(config.clone()), plan)? {
        return Ok(code);
    }
    let store = PgStore::connect(url)?;
    let standings = read_standings(&store)?;
    print(&standings.render(args.format));
    Ok(ExitCode::SUCCESS)
}

/// Puts the league file itself in the store, for the workers (they play with its
/// bots' commands): `hus league --store` and `hus serve --store` alike.
pub fn carry_file(config: &LeagueConfig, store: &mut dyn Store) -> Result<()> {
    let text = std::fs::read_to_string(&config.path).map_err(|error| Error::ReadFile {
        path: config.path.clone(),
        error,
    })?;
    let path = std::fs::canonicalize(&config.path).map_err(|error| Error::ReadFile {
        path: config.path.clone(),
        error,
    })?;
    let mut carried = std::collections::BTreeMap::new();
    carried.insert(LEAGUE_TEXT.to_string(), text);
    carried.insert(LEAGUE_PATH.to_string(), path.display().to_string());
    store.save_settings(&carried)?;
    Ok(())
}

/// `hus worker --store URL`.
pub fn run_worker(args: &WorkerArgs) -> Result<ExitCode> {
    let lease = lease_of(args.lease)?;
    let mut store = connect_patiently(args.store.required("hus worker")?, args.quiet)?;
    if let Some(name) = &args.name {
        store.set_name(name);
    }
    let mut plan = Plan {
        concurrency: args.concurrency as usize,
        lease,
        until_done: args.until_done,
        quiet: args.quiet,
        who: "hus worker",
        min_free: args.min_free.bytes()?,
        uploads: None,
        upload_user: None,
        prune_every: Duration::MAX,
    };
    plan.uploads(&args.uploads);
    Ok(work(store, None, plan)?.unwrap_or(ExitCode::SUCCESS))
}

/// Connects, waiting with a backoff while the server is not there (a worker started
/// before its database, or during a restart). A URL that is not one, a refused login or
/// a newer schema fail at once.
fn connect_patiently(url: &str, quiet: bool) -> Result<PgStore> {
    let mut backoff = BACKOFF_MIN;
    loop {
        match PgStore::connect(url) {
            Ok(store) => return Ok(store),
            Err(e) if unreachable(&e) => {
                if !quiet {
                    eprintln!(
                        "hus worker: {e}; trying again in {:.1} s",
                        backoff.as_secs_f64()
                    );
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The league as the store carries it.
fn league_from_store(store: &PgStore) -> Result<LeagueConfig> {
    let settings = store.settings()?;
    let (Some(text), Some(path)) = (settings.get(LEAGUE_TEXT), settings.get(LEAGUE_PATH)) else {
        return Err(Error::NoLeagueInStore {
            place: store.place().to_string(),
        });
    };
    LeagueConfig::parse(Path::new(path), text)
}

/// Plays the store's sets until stopped (or, with `until_done`, until none is left);
/// `Some(130)` when stopped by a signal.
fn work(mut store: PgStore, config: Option<LeagueConfig>, plan: Plan) -> Result<Option<ExitCode>> {
    let config = match config {
        Some(c) => c,
        None => league_from_store(&store)?,
    };
    let scratch = tempfile_dir()?;
    let nice = referee::raise_referee_priority();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    let who = plan.who;
    if !plan.quiet {
        eprintln!(
            "{who}: {} plays sets of {} ({} at a time, leases of {:.1} s)",
            store.name(),
            store.place(),
            plan.concurrency,
            plan.lease.as_secs_f64()
        );
    }
    store.set_lease(plan.lease);
    let name = store.name().to_string();
    // From here on the store lives on its own thread: the runtime only has the handle.
    let thread = StoreThread::spawn(store)
        .map_err(|e| Error::Runtime(format!("cannot start the store's thread: {e}")))?;
    let floor = DiskFloor::new(vec![scratch.path().to_path_buf()], plan.min_free);
    let concurrency = plan.concurrency;
    let builds = plan.uploads.clone().map(|dir| {
        Arc::new(LocalBuilds::new(
            dir,
            BuildSettings::with_user(plan.upload_user.clone()),
        ))
    });
    // The gate's batches, one at a time besides the sets, when uploaded versions can
    // be built here.
    let gate = builds.clone().map(|builds| {
        let (quiet, who) = (plan.quiet, plan.who);
        runtime.spawn(crate::gate::work_gate_batches(
            thread.caller(),
            builds,
            Arc::new(config.clone()),
            scratch.path().to_path_buf(),
            name,
            plan.lease,
            move |line| {
                if !quiet {
                    eprintln!("{who}: {line}");
                }
            },
        ))
    });
    let (ready_tx, ready_rx) = mpsc::unbounded_channel();
    let source = WorkerSource {
        store: thread.caller(),
        builds,
        versions: HashMap::new(),
        preparing: HashSet::new(),
        ready_tx,
        ready_rx,
        pruner: Some(Pruner::default()),
        last_prune: None,
        shared: Arc::new(Shared {
            compress_logs: false,
            ..Shared::new(&config, scratch.path().to_path_buf(), nice)
        }),
        config,
        scratch: scratch.path().to_path_buf(),
        nice,
        skip: Vec::new(),
        problem: None,
        floor_problem: None,
        finished: HashMap::new(),
        in_flight: 0,
        plan,
    };
    let result = runtime.block_on(async {
        let coordinator = Coordinator::new(
            Link::new(thread),
            source,
            SetPool::new(),
            concurrency,
            floor,
        )
        .await?;
        let Ended {
            result, mut link, ..
        } = coordinator.run(referee::stop_signal).await;
        // A batch in play is dropped, its bots killed; its lease runs out.
        if let Some(gate) = &gate {
            gate.abort();
        }
        let _ = link.run("saying goodbye", |s| s.goodbye()).await;
        // Closes the connection on the store's thread, after its last operation.
        link.shutdown().await;
        Ok::<_, Error>(match result? {
            Finish::Done => None,
            Finish::Stopped(_) => Some(ExitCode::from(130)),
        })
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(scratch.path());
    result
}

/// The start of a worker's scratch directory's name, in the system's temporary
/// directory: `hus-worker-PID-START-NS-XXXXXX`, with the pid, start time (clock ticks
/// after boot) and PID namespace (the number of `/proc/self/ns/pid`) of the worker that
/// made it, so that a later worker can tell whether it is still there.
const SCRATCH_PREFIX: &str = "hus-worker-";

/// A private scratch directory for the logs and stderr of the sets in play (they go to
/// the store when finished), named after this worker (see [`SCRATCH_PREFIX`]). The
/// scratch directories of dead workers (killed with SIGKILL, which removes nothing)
/// are removed first.
fn tempfile_dir() -> Result<tempfile::TempDir> {
    let parent = std::env::temp_dir();
    let me = referee::Writer::this_process();
    let prefix = match &me {
        Some(me) => {
            remove_dead_scratch(&parent, me);
            format!(
                "{SCRATCH_PREFIX}{}-{}-{}-",
                me.pid,
                me.start_time,
                ns_number(&me.pid_ns)
            )
        }
        None => SCRATCH_PREFIX.to_string(),
    };
    tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(&parent)
        .map_err(|error| Error::Io {
            what: "cannot create a scratch directory in",
            path: parent,
            error,
        })
}

/// `4026531836` of `pid:[4026531836]`.
fn ns_number(pid_ns: &str) -> &str {
    pid_ns.trim_start_matches("pid:[").trim_end_matches(']')
}

/// Removes the scratch directories in `parent` of workers that are gone, as `me` (this
/// worker) sees them: each `hus-worker-PID-START-NS-...` of this PID namespace whose
/// process is gone, a zombie, or another process (its pid reused: another start time).
/// Never a live worker's, nor one of another PID namespace (its pid means nothing
/// here), nor a directory named otherwise (earlier versions', which name no process),
/// nor one that is not a plain directory of this user's (the temporary directory is
/// everyone's). What cannot be removed stays, without a word: the worker's own
/// directory does not depend on it. How many were removed.
fn remove_dead_scratch(parent: &Path, me: &referee::Writer) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(parent) else {
        return 0;
    };
    let uid = nix::unistd::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(SCRATCH_PREFIX)) else {
            continue;
        };
        let mut parts = rest.splitn(4, '-');
        let (Some(pid), Some(start), Some(ns), Some(_)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(pid), Ok(start_time)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
            continue;
        };
        if ns != ns_number(&me.pid_ns) {
            continue;
        }
        let owner = referee::Writer {
            pid,
            start_time,
            ..me.clone()
        };
        if !matches!(referee::writer_state(&owner), referee::WriterState::Gone(_)) {
            continue;
        }
        let path = entry.path();
        let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if ours && std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A worker's sets: claimed from the store under a lease, their results sent with the
/// whole log, a set it cannot start given back and its bots left to the others.
struct WorkerSource {
    config: LeagueConfig,
    plan: Plan,
    scratch: PathBuf,
    nice: Option<i32>,
    shared: Arc<Shared>,
    /// The bots this worker cannot start: their sets are left to the others.
    skip: Vec<String>,
    /// Why it last gave a set back (said in `hus workers` through the heartbeat).
    problem: Option<String>,
    /// While paused by the floor: the problem it had before, said again once there is
    /// room.
    floor_problem: Option<String>,
    /// The scratch files of the finished sets whose results are on their way.
    finished: HashMap<SetId, SetFiles>,
    /// Sets in play, as the last heartbeat said.
    in_flight: usize,
    /// The store, for the tasks that make uploaded versions playable (the link is the
    /// coordinator's).
    store: StoreCaller<PgStore>,
    /// This machine's builds of uploaded versions (`None`: no directory for them).
    builds: Option<Arc<LocalBuilds>>,
    /// The uploaded versions made playable here, by league name (kept apart from the
    /// league file's bots, which a fresh read of the file replaces).
    versions: HashMap<String, BotConfig>,
    /// The uploaded versions being made playable here: their sets are left to the
    /// others meanwhile.
    preparing: HashSet<String>,
    /// Where the tasks that make versions playable say how it went.
    ready_tx: mpsc::UnboundedSender<Ready>,
    /// See `ready_tx`.
    ready_rx: mpsc::UnboundedReceiver<Ready>,
    /// The pruner of this machine's built versions (`None` while a round runs).
    pruner: Option<Pruner>,
    /// When the last round started.
    last_prune: Option<tokio::time::Instant>,
}

/// What the worker's own tasks say: an uploaded version made playable here (or why
/// not), or a round of pruning done (its pruner back, and what it took out).
enum Ready {
    Version(String, Box<std::result::Result<BotConfig, PrepareError>>),
    Pruned(Pruner, Pruned),
}

impl WorkerSource {
    /// The league file's bots and the versions made playable here.
    fn shared(&self) -> Arc<Shared> {
        let mut shared = Shared {
            compress_logs: false,
            ..Shared::new(&self.config, self.scratch.clone(), self.nice)
        };
        for (name, bot) in &self.versions {
            shared.bots.insert(name.clone(), bot.clone());
        }
        Arc::new(shared)
    }

    /// Starts making the uploaded version `name` playable here, in a task of its own
    /// (a build takes minutes: the coordinator goes on meanwhile); its sets are left
    /// to the others until the task says how it went ([`Source::handle`]).
    fn prepare_version(&mut self, name: &str, set: &ClaimedSet) {
        let Some((bot, number)) = parse_version_name(name) else {
            return;
        };
        if self.preparing.contains(name) || self.skip.iter().any(|s| s == name) {
            return;
        }
        let Some(builds) = self.builds.clone() else {
            self.leave(
                name,
                "this worker has no directory for uploaded versions (neither XDG_CACHE_HOME nor HOME is set): give --uploads-dir DIR".to_string(),
            );
            return;
        };
        self.preparing.insert(name.to_string());
        self.say_line(format!(
            "{name} is an uploaded version not yet played here: fetching it by hash from the store and building it in the sandbox, in {}; {} goes back to the other workers meanwhile",
            builds.path().display(),
            set.key
        ));
        let (store, ready, name, bot) = (
            self.store.clone(),
            self.ready_tx.clone(),
            name.to_string(),
            bot.to_string(),
        );
        tokio::spawn(async move {
            let result = async {
                let row = store
                    .call(move |s| s.version(&bot, number))
                    .await
                    .map_err(|error| PrepareError::Store {
                        what: format!("the version {name}"),
                        error,
                    })?
                    .ok_or_else(|| PrepareError::NoVersion { name: name.clone() })?;
                let fetch = |hash: String| {
                    let store = store.clone();
                    async move { store.call(move |s| s.archive(&hash)).await }
                };
                builds.prepare(&row, fetch).await
            }
            .await;
            // The worker is gone when no one hears it: nothing to say then.
            let _ = ready.send(Ready::Version(name, Box::new(result)));
        });
    }

    /// Starts a round of pruning this machine's built versions, in a task of its own,
    /// once `--prune-every` has passed since the last (at a heartbeat): the versions
    /// no set needs any more go from the cache (`league::uploaded::Pruner`, the
    /// server's way too).
    fn maybe_prune(&mut self) {
        let Some(builds) = self.builds.clone() else {
            return;
        };
        let now = tokio::time::Instant::now();
        if self
            .last_prune
            .is_some_and(|last| now.duration_since(last) < self.plan.prune_every)
        {
            return;
        }
        let Some(pruner) = self.pruner.take() else {
            return;
        };
        self.last_prune = Some(now);
        let (store, ready) = (self.store.clone(), self.ready_tx.clone());
        tokio::spawn(async move {
            let (listing, rounding) = (builds.clone(), builds);
            let (pruner, pruned) = prune_once(
                pruner,
                move || listing.built_hashes(),
                || store.call(|s| needed_hashes(&*s)),
                move |pruner, listed, needed| rounding.prune(pruner, listed, needed),
            )
            .await;
            let _ = ready.send(Ready::Pruned(pruner, pruned));
        });
    }

    /// A round of pruning ended: the versions whose trees went are built again here
    /// if a set of theirs comes again.
    fn pruned(&mut self, pruner: Pruner, pruned: Pruned) {
        self.pruner = Some(pruner);
        for error in &pruned.errors {
            self.say_line(format!("pruning the built versions: {error}"));
        }
        if pruned.removed.is_empty() {
            return;
        }
        let gone: HashSet<&str> = pruned.removed.iter().map(String::as_str).collect();
        let before = self.versions.len();
        self.versions.retain(|_, bot| {
            !bot.version
                .as_ref()
                .is_some_and(|v| gone.contains(v.sha256.as_str()))
        });
        if self.versions.len() != before {
            self.shared = self.shared();
        }
        for hash in &pruned.removed {
            self.say_line(format!(
                "the build of {hash} is no longer played: removed from this machine's cache"
            ));
        }
    }

    /// Leaves `name`'s sets to the other workers for good, saying why once (here and
    /// in `hus workers`).
    fn leave(&mut self, name: &str, why: String) {
        self.say_line(format!(
            "cannot play {name}: {why}; this worker leaves {name}'s sets to the others"
        ));
        self.problem = Some(format!("cannot play {name}: {why}"));
        if !self.skip.iter().any(|s| s == name) {
            self.skip.push(name.to_string());
        }
    }

    fn say_line(&self, line: String) {
        if !self.plan.quiet {
            eprintln!("{}: {line}", self.plan.who);
        }
    }

    /// Deletes the files a set given up here left in the scratch directory.
    fn forget_files(&self, set: &ClaimedSet) {
        let log = LogPlace::file(&set.key.stem(), LogForm::Plain);
        crate::set_files::delete_set_files(&self.scratch, &log);
    }

    /// Says in the store that this worker lives, what it holds, and what it cannot
    /// play (nothing while the store is out of reach).
    async fn heartbeat(&mut self, link: &mut Link<PgStore>) -> Result<()> {
        let beat = Heartbeat {
            concurrency: self.plan.concurrency,
            in_flight: self.in_flight,
            problem: self.problem.clone(),
            leaves: self.skip.clone(),
        };
        link.run("a heartbeat", move |s| s.heartbeat(&beat)).await?;
        Ok(())
    }
}

impl Source<PgStore> for WorkerSource {
    /// An uploaded version made playable here, or why not.
    type Outside = Ready;

    async fn claim(
        &mut self,
        link: &mut Link<PgStore>,
        running: &[ClaimedSet],
    ) -> Result<Option<Start>> {
        let lease = self.plan.lease;
        let mut skip = self.skip.clone();
        skip.extend(self.preparing.iter().cloned());
        let Some(Some(set)) = link
            .run("claiming a set", move |s| s.claim(lease, &skip))
            .await?
        else {
            return Ok(None);
        };
        self.in_flight = running.len() + 1;
        let missing: Vec<String> = [&set.key.a, &set.key.b]
            .into_iter()
            .filter(|n| !self.shared.bots.contains_key(*n))
            .cloned()
            .collect();
        // A bot added to the league since this worker read the file.
        if missing.iter().any(|n| parse_version_name(n).is_none()) {
            if let Ok(fresh) = link.call(|s| league_from_store(s)).await {
                self.config = fresh;
                self.shared = self.shared();
            }
        }
        // An uploaded version not made playable here yet: the set fails at once for
        // want of the bot (`failed` gives it back) while the version is prepared.
        for name in missing.iter().filter(|n| parse_version_name(n).is_some()) {
            self.prepare_version(name, &set);
        }
        Ok(Some(Start {
            set,
            shared: self.shared.clone(),
            tap: None,
        }))
    }

    /// The log goes to the store with the result; the scratch files go once it is there.
    async fn finished(&mut self, set: &ClaimedSet, mut outcome: SetOutcome) -> Result<Played> {
        let files = SetFiles::new(&self.scratch, outcome.log.stem().unwrap_or_default());
        let path = files.log();
        let log = std::fs::read(&path).map_err(|error| Error::Io {
            what: "cannot read a finished set's log",
            path: path.clone(),
            error,
        })?;
        self.finished.insert(set.id, files);
        outcome.log = LogPlace::Stored(set.id);
        Ok(Played {
            outcome: Arc::new(outcome),
            log: Arc::new(log),
        })
    }

    async fn recorded(
        &mut self,
        _link: &mut Link<PgStore>,
        set: &ClaimedSet,
        played: &Played,
        recorded: Recorded,
    ) -> Result<()> {
        if let Some(files) = self.finished.remove(&set.id) {
            for f in files.existing() {
                let _ = std::fs::remove_file(f);
            }
        }
        let points = played.outcome.points;
        match recorded {
            Recorded::Counted => self.say_line(format!(
                "{} finished: {}-{}",
                set.key, points[0], points[1]
            )),
            Recorded::Duplicate => self.say_line(format!(
                "{} finished, but its lease was lost and another worker played it: kept as a duplicate, not counted",
                set.key
            )),
        }
        Ok(())
    }

    async fn failed(
        &mut self,
        link: &mut Link<PgStore>,
        set: &ClaimedSet,
        failure: SetFailure,
    ) -> Result<AfterFailure> {
        if let SetFailure::NoSuchBot { bot, team: None } = &failure {
            if parse_version_name(bot).is_some() {
                // An uploaded version being prepared here, or left to the others: said
                // when its preparation started or failed.
                return Ok(AfterFailure::GiveBack);
            }
        }
        let SetFailure::Set(e @ SetError::CannotStart { .. }) = failure else {
            return Ok(AfterFailure::Fatal(Error::Set {
                set: set.key.to_string(),
                error: failure,
            }));
        };
        // The bots whose program is not found here; when both are (or neither is, and
        // the start failed for another reason), both are left to the other workers.
        let mut missing: Vec<String> = [&set.key.a, &set.key.b]
            .into_iter()
            .filter(|n| {
                !self
                    .shared
                    .bots
                    .get(*n)
                    .and_then(|b| b.process())
                    .is_some_and(|(spec, _)| spec.argv.first().is_some_and(|p| program_found(p)))
            })
            .cloned()
            .collect();
        if missing.is_empty() {
            missing = vec![set.key.a.clone(), set.key.b.clone()];
        }
        self.say_line(format!(
            "cannot play {}: {e}; the set is given back to the other workers, and this worker leaves {}'s sets to them",
            set.key,
            missing.join(" and ")
        ));
        self.problem = Some(format!("cannot play {}: {e}", set.key));
        for bot in missing {
            if !self.skip.contains(&bot) {
                self.skip.push(bot);
            }
        }
        // Said at once, not at the next heartbeat: `hus workers` shows it.
        self.heartbeat(link).await?;
        Ok(AfterFailure::GiveBack)
    }

    /// Played no further here: a set's partial files are of no use to anyone (the
    /// store keeps only finished logs), and a worker that runs for months must not fill
    /// its scratch directory with them.
    async fn given_back(
        &mut self,
        _link: &mut Link<PgStore>,
        sets: &[ClaimedSet],
        _put_back: usize,
    ) -> Result<()> {
        for set in sets {
            self.forget_files(set);
        }
        Ok(())
    }

    fn abandoned(&mut self, set: &ClaimedSet) {
        self.forget_files(set);
    }

    fn lost(&mut self, set: &ClaimedSet) {
        self.say_line(format!(
            "{} was lost (this worker was silent past its lease, another took it): stopped here",
            set.key
        ));
    }

    fn say(&mut self, line: &str) {
        self.say_line(line.to_string());
    }

    async fn outside(&mut self) -> Self::Outside {
        match self.ready_rx.recv().await {
            Some(ready) => ready,
            // Never: this source holds a sender.
            None => std::future::pending().await,
        }
    }

    /// An uploaded version is playable here from now on, or is left to the others
    /// (for good, unless the store could not be read: then its next set tries again).
    async fn handle(&mut self, link: &mut Link<PgStore>, message: Self::Outside) -> Result<()> {
        let (name, result) = match message {
            Ready::Version(name, result) => (name, *result),
            Ready::Pruned(pruner, pruned) => {
                self.pruned(pruner, pruned);
                return Ok(());
            }
        };
        self.preparing.remove(&name);
        match result {
            Ok(mut bot) => {
                bot.set_nice(self.nice);
                self.versions.insert(name.clone(), bot);
                self.shared = self.shared();
                self.say_line(format!("{name} is built here and plays from now on"));
            }
            Err(e) if e.may_pass() => self.say_line(format!(
                "cannot prepare {name} now: {e}; tried again at its next set"
            )),
            Err(e) => {
                if let PrepareError::BuildFailed { output, .. } = &e {
                    if !output.trim().is_empty() {
                        self.say_line(format!(
                            "{name}'s build output, its end:\n{}",
                            tail_lines(output, 20)
                        ));
                    }
                }
                self.leave(&name, e.to_string());
                // Said at once, not at the next heartbeat: `hus workers` shows it.
                self.heartbeat(link).await?;
            }
        }
        Ok(())
    }

    fn tick_every(&self) -> Option<Duration> {
        Some(self.plan.lease / 4)
    }

    async fn tick(&mut self, link: &mut Link<PgStore>, running: &[ClaimedSet]) -> Result<()> {
        self.in_flight = running.len();
        self.maybe_prune();
        self.heartbeat(link).await
    }

    /// With `--until-done`, once no set is pending or running anywhere.
    async fn done(&mut self, link: &mut Link<PgStore>) -> Result<bool> {
        if !self.plan.until_done {
            return Ok(false);
        }
        let progress = link.run("counting the sets", |s| s.progress()).await?;
        Ok(progress.is_some_and(|p| p.pending == 0 && p.running == 0))
    }

    fn store_changed(&mut self, change: &StoreChange) {
        match change {
            StoreChange::Down(e) => self.say_line(format!(
                "the store is unreachable ({e}); retrying with a backoff, the sets in play go on"
            )),
            StoreChange::Back(after) => self.say_line(format!(
                "the store is back after {:.1} s",
                after.as_secs_f64()
            )),
        }
    }

    /// Below the free-space floor nothing is claimed (said once, and in `hus workers`
    /// as this worker's problem); claiming goes on once there is room.
    fn floor_changed(&mut self, change: &FloorChange) {
        match change {
            FloorChange::Same => {}
            FloorChange::Low(low) => {
                eprintln!("{}: paused: {low}", self.plan.who);
                self.floor_problem = self.problem.replace(format!("paused: {low}"));
            }
            FloorChange::Back(free) => {
                eprintln!(
                    "{}: {}: sets are claimed again",
                    self.plan.who,
                    FloorChange::back_words(*free)
                );
                // The problem it had before the pause, if any, is its problem again.
                self.problem = self.floor_problem.take();
            }
        }
    }
}

/// The last `n` lines of `text`.
fn tail_lines(text: &str, n: usize) -> &str {
    let trimmed = text.trim_end();
    let mut start = trimmed.len();
    for _ in 0..n {
        match trimmed[..start].rfind('\n') {
            Some(i) => start = i,
            None => return trimmed,
        }
    }
    &trimmed[start + 1..]
}

/// Whether a bot's program exists here: a path, or a name found in PATH.
fn program_found(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return runnable(Path::new(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| runnable(&dir.join(program))))
}

/// `hus workers --store URL`: every worker with its last heartbeat, the sets it plays
/// now and its finished sets in the last hour.
pub fn run_workers(args: &WorkersArgs) -> Result<ExitCode> {
    let mut store = PgStore::connect(args.store.required("hus workers")?)?;
    let rows = store.workers()?;
    let stuck = store.stuck()?;
    let text = match args.format {
        WorkersFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&workers_json(&rows, stuck.as_deref()))
                .unwrap_or_default()
        ),
        WorkersFormat::Text => {
            let mut out = format!(
                "{:<24} {:<16} {:>15} {:>9} {:>10} {:>9} {:>10}\n",
                "worker",
                "host",
                "last heartbeat",
                "in flight",
                "sets/hour",
                "finished",
                "duplicates"
            );
            for w in &rows {
                let seen = if w.stopped {
                    format!("stopped {:.0} s ago", w.seen_ago)
                } else {
                    format!("{:.1} s ago", w.seen_ago)
                };
                out.push_str(&format!(
                    "{:<24} {:<16} {:>15} {:>9} {:>10} {:>9} {:>10}\n",
                    w.name, w.host, seen, w.in_flight, w.last_hour, w.finished, w.duplicates
                ));
            }
            for w in &rows {
                match (&w.problem, w.leaves.is_empty()) {
                    (Some(problem), false) => out.push_str(&format!(
                        "{}: {problem}; it leaves {}'s sets to the other workers\n",
                        w.name,
                        w.leaves.join(" and ")
                    )),
                    (Some(problem), true) => out.push_str(&format!("{}: {problem}\n", w.name)),
                    (None, _) => {}
                }
            }
            if let Some(stuck) = &stuck {
                out.push_str(&format!("{stuck}\n"));
            }
            out
        }
    };
    print(&text);
    Ok(ExitCode::SUCCESS)
}

/// The workers as `hus workers --format json` and the match server's `/api/workers`
/// both show them (this one function): `{"workers": [...], "stuck": ...}`, an object so
/// that other fields can join the list without breaking a client, each worker an
/// object of its figures; `stuck` is [`PgStore::stuck`]'s sentence, or null.
pub fn workers_json(rows: &[WorkerRow], stuck: Option<&str>) -> serde_json::Value {
    serde_json::json!({
        "workers": rows.iter().map(worker_json).collect::<Vec<_>>(),
        "stuck": stuck,
    })
}

/// A worker of [`workers_json`]: name, host, pid, concurrency, seconds since its last
/// heartbeat, sets in flight, counted sets in the last hour and in all, late results,
/// and whether it stopped.
fn worker_json(w: &WorkerRow) -> serde_json::Value {
    serde_json::json!({
        "name": w.name,
        "host": w.host,
        "pid": w.pid,
        "concurrency": w.concurrency,
        "last_heartbeat_s": (w.seen_ago * 10.0).round() / 10.0,
        "in_flight": w.in_flight,
        "sets_last_hour": w.last_hour,
        "sets_finished": w.finished,
        "duplicates": w.duplicates,
        "stopped": w.stopped,
        "problem": w.problem,
        "leaves": w.leaves,
    })
}

/// `hus export --store URL [--set ID] [--out DIR]`: the kept logs, as `hus league`
/// writes them, for `hus replay`.
pub fn run_export(args: &ExportArgs) -> Result<ExitCode> {
    let mut store = PgStore::connect(args.store.required("hus export")?)?;
    let ids = match args.set {
        Some(id) => vec![id],
        None => store.done_ids()?,
    };
    if args.out.is_none() && ids.len() != 1 {
        return Err(Error::Usage(
            "hus export: without --set, give --out DIR (every finished set's log is written there)"
                .to_string(),
        ));
    }
    for id in ids {
        let Some(log) = store.log(id)? else {
            return Err(Error::Usage(format!(
                "hus export: set {id} has no log in {} (no result of it arrived)",
                store.place()
            )));
        };
        match &args.out {
            None => print(&log.text),
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|error| Error::Io {
                    what: "cannot create the directory",
                    path: dir.clone(),
                    error,
                })?;
                let path = dir.join(format!("{}.jsonl", log.key.stem()));
                referee::create_file(&path, referee::Create::Replace, None)
                    .and_then(|mut file| std::io::Write::write_all(&mut file, log.text.as_bytes()))
                    .map_err(|error| Error::Io {
                        what: "cannot write the log",
                        path: path.clone(),
                        error,
                    })?;
                eprintln!(
                    "hus export: set {id} ({}) written to {}",
                    log.key,
                    path.display()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34, part 7: a worker removes at its start the scratch directories of dead
    /// workers (a process that exited, and a pid now another process's), and never a
    /// live worker's, another PID namespace's, or a directory that names no worker.
    #[test]
    fn a_new_worker_removes_the_scratch_of_dead_workers_only() {
        let parent = tempfile::tempdir().expect("temp dir");
        let me = referee::Writer::this_process().expect("a Linux /proc");
        let ns = ns_number(&me.pid_ns).to_string();
        let mut exited = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let dead = exited.id();
        exited.wait().expect("reaped");
        let live = format!("hus-worker-{}-{}-{ns}-live00", me.pid, me.start_time);
        let names = [
            live.as_str(),
            &format!("hus-worker-{dead}-1-{ns}-dead00"),
            &format!("hus-worker-{}-{}-{ns}-reused", me.pid, me.start_time + 1),
            &format!("hus-worker-{dead}-1-1-otherns"),
            "hus-worker-abc123",
            "hus-worker-x-y-z-w",
            "elsewhere",
        ]
        .map(str::to_string);
        for name in &names {
            std::fs::create_dir(parent.path().join(name)).expect("mkdir");
            std::fs::write(parent.path().join(name).join("a.jsonl"), "{}\n").expect("a file");
        }
        assert_eq!(remove_dead_scratch(parent.path(), &me), 2);
        let mut left: Vec<String> = std::fs::read_dir(parent.path())
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected = vec![
            live,
            format!("hus-worker-{dead}-1-1-otherns"),
            "hus-worker-abc123".to_string(),
            "hus-worker-x-y-z-w".to_string(),
            "elsewhere".to_string(),
        ];
        expected.sort();
        assert_eq!(left, expected);
        // A second worker finds nothing more to remove.
        assert_eq!(remove_dead_scratch(parent.path(), &me), 0);
    }
}
