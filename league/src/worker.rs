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

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::args::{ExportArgs, LeagueArgs, WorkerArgs, WorkersArgs, WorkersFormat};
use crate::error::{Error, Result};
use crate::file::LeagueConfig;
use crate::pool::{Ending, SetFailure, SetPool, Shared};
use crate::set_files::SetFiles;
use crate::setup::{print, read_standings, settle_settings, sync_with_file};
use crate::store::{
    ClaimedSet, Heartbeat, PgStore, Recorded, SetId, SetOutcome, Store, StoreError, StoreThread,
    WorkerRow,
};
use referee::SetError;

/// The settings that carry the league file to the workers.
const LEAGUE_TEXT: &str = "league_text";
const LEAGUE_PATH: &str = "league_path";

/// The lease of `hus league --store` without `--lease`, in seconds.
const DEFAULT_LEASE_S: f64 = 30.0;

/// Backoff bounds while the store is unreachable.
const BACKOFF_MIN: Duration = Duration::from_millis(200);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// The first wait of a worker that found no set to claim; it doubles at each empty
/// claim up to a quarter of a lease (at most 1 s), and starts again at a claim. Short,
/// because at the end of a league the last sets are in play elsewhere and a worker
/// with `--until-done` waits for them to finish (to play them again if their worker
/// dies); a fixed 1 s poll there added up to 1 s to every league's end.
const IDLE_MIN: Duration = Duration::from_millis(20);

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
    let plan = Plan {
        concurrency: config.concurrency,
        lease,
        until_done: true,
        quiet: args.quiet,
        who: "hus league",
        min_free: args.min_free.bytes()?,
    };
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
    let plan = Plan {
        concurrency: args.concurrency as usize,
        lease,
        until_done: args.until_done,
        quiet: args.quiet,
        who: "hus worker",
        min_free: args.min_free.bytes()?,
    };
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

/// A connection failure that waiting may cure (the server down or unreachable), as
/// opposed to a bad URL, a refused login, a newer schema, or a TLS handshake that
/// failed on something other than the network (a certificate, a server without TLS).
fn unreachable(e: &StoreError) -> bool {
    let StoreError::Backend { cause, .. } = e else {
        return false;
    };
    match cause.downcast_ref::<postgres::Error>() {
        Some(pg) if crate::store::is_tls_refusal(pg) => false,
        Some(pg) => match pg.code() {
            // Server shutting down or starting up, too many connections.
            Some(code) => {
                let c = code.code();
                c.starts_with("57P") || c.starts_with("08") || c == "53300"
            }
            None => true,
        },
        None => false,
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

/// A finished set's result waiting to reach the store.
struct Unsent {
    set: ClaimedSet,
    /// Shared with the store's thread while it is sent.
    outcome: Arc<SetOutcome>,
    log: Arc<Vec<u8>>,
    /// Its files in the scratch directory, removed once the store has the result.
    files: SetFiles,
}

/// The store's connection with its backoff: operations fail fast while it is down,
/// and a reconnection is tried once the backoff has passed. The store itself is on its
/// own thread ([`StoreThread`]): the worker's runtime never holds the synchronous
/// client, so it can neither call nor close it there.
struct Link {
    store: StoreThread<PgStore>,
    down_since: Option<Instant>,
    retry_at: Instant,
    backoff: Duration,
    quiet: bool,
    who: &'static str,
}

/// What one turn of [`Link::run`] did on the store's thread.
enum Attempt<T> {
    /// The store is down and its backoff has not passed: nothing was tried.
    Later,
    /// The store is down and a reconnection failed.
    Unreachable(StoreError),
    /// The operation ran (after a reconnection, if `reconnected`); `lost`: the
    /// connection was lost by it.
    Ran {
        reconnected: bool,
        result: std::result::Result<T, StoreError>,
        lost: bool,
    },
}

impl Link {
    /// Runs `op` on the store if it is up; `None` (noted) when the store is unreachable.
    async fn run<T: Send + 'static>(
        &mut self,
        what: &str,
        op: impl FnOnce(&mut PgStore) -> std::result::Result<T, StoreError> + Send + 'static,
    ) -> Result<Option<T>> {
        let down = self.down_since.is_some();
        let retry_at = self.retry_at;
        let attempt = self
            .store
            .call(move |store| {
                let mut reconnected = false;
                if store.is_lost() || down {
                    if Instant::now() < retry_at {
                        return Ok(Attempt::Later);
                    }
                    if let Err(e) = store.reconnect() {
                        return Ok(Attempt::Unreachable(e));
                    }
                    reconnected = true;
                }
                let result = op(store);
                Ok::<_, StoreError>(Attempt::Ran {
                    reconnected,
                    lost: store.is_lost(),
                    result,
                })
            })
            .await
            .map_err(|e| Error::Runtime(format!("{what} failed: {e}")))?;
        let (result, lost) = match attempt {
            Attempt::Later => return Ok(None),
            Attempt::Unreachable(e) => {
                self.failed(&e);
                return Ok(None);
            }
            Attempt::Ran {
                reconnected,
                result,
                lost,
            } => {
                if reconnected {
                    if let Some(since) = self.down_since.take() {
                        if !self.quiet {
                            eprintln!(
                                "{}: the store is back after {:.1} s",
                                self.who,
                                since.elapsed().as_secs_f64()
                            );
                        }
                    }
                    self.backoff = BACKOFF_MIN;
                }
                (result, lost)
            }
        };
        match result {
            Ok(v) => Ok(Some(v)),
            Err(e) if lost || unreachable(&e) => {
                self.failed(&e);
                Ok(None)
            }
            Err(e) => Err(Error::Runtime(format!("{} failed: {e}", what))),
        }
    }

    fn failed(&mut self, e: &StoreError) {
        if self.down_since.is_none() {
            self.down_since = Some(Instant::now());
            if !self.quiet {
                eprintln!(
                    "{}: the store is unreachable ({e}); retrying with a backoff, the sets in play go on",
                    self.who
                );
            }
        }
        self.retry_at = Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
    }
}

/// Plays the store's sets until stopped (or, with `until_done`, until none is left);
/// `Some(130)` when stopped by a signal.
fn work(store: PgStore, config: Option<LeagueConfig>, plan: Plan) -> Result<Option<ExitCode>> {
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
    let quiet = plan.quiet;
    if !quiet {
        eprintln!(
            "{who}: {} plays sets of {} ({} at a time, leases of {:.1} s)",
            store.name(),
            url_place(&store),
            plan.concurrency,
            plan.lease.as_secs_f64()
        );
    }
    // From here on the store lives on its own thread: the runtime only has the handle.
    let store = StoreThread::spawn(store)
        .map_err(|e| Error::Runtime(format!("cannot start the store's thread: {e}")))?;
    let mut link = Link {
        store,
        down_since: None,
        retry_at: Instant::now(),
        backoff: BACKOFF_MIN,
        quiet,
        who,
    };
    let result = runtime.block_on(async {
        let result = work_loop(&mut link, config, plan, scratch.path(), nice).await;
        // Closes the connection on the store's thread, after its last operation.
        link.store.shutdown().await;
        result
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(scratch.path());
    result
}

fn url_place(store: &PgStore) -> String {
    store.place().to_string()
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

async fn work_loop(
    link: &mut Link,
    config: LeagueConfig,
    plan: Plan,
    scratch: &Path,
    nice: Option<i32>,
) -> Result<Option<ExitCode>> {
    let mut pool = SetPool::new();
    let idle_poll = (plan.lease / 4).min(Duration::from_secs(1));
    let mut worker = Worker {
        shared: Arc::new(Shared {
            compress_logs: false,
            ..Shared::new(&config, scratch.to_path_buf(), nice)
        }),
        config,
        link,
        scratch,
        nice,
        held: HashMap::new(),
        unsent: VecDeque::new(),
        skip: Vec::new(),
        problem: None,
        stopped: None,
        next_renewal: Instant::now(),
        idle_poll,
        idle: IDLE_MIN.min(idle_poll),
        floor: crate::disk::DiskFloor::new(vec![scratch.to_path_buf()], plan.min_free),
        floor_problem: None,
        plan,
    };
    let worked = worker.work(&mut pool).await;
    // Whatever way the loop was left, the sets still playing here (given up: their
    // leases lost, or the worker stopping or failing) end their logs with `aborted`
    // and their bots are killed before the scratch directory goes.
    pool.shutdown(GAVE_UP).await;
    worked
}

/// What a set given up here says in its log's `aborted` record.
const GAVE_UP: &str = "the worker gave the set up";

/// A worker's side of the set pool: sets come from the store's claims under a lease,
/// and their results are queued for the store (sent with the whole log).
struct Worker<'a> {
    link: &'a mut Link,
    config: LeagueConfig,
    plan: Plan,
    scratch: &'a Path,
    nice: Option<i32>,
    shared: Arc<Shared>,
    /// The sets played here whose lease this worker holds.
    held: HashMap<SetId, ClaimedSet>,
    unsent: VecDeque<Unsent>,
    /// The bots this worker cannot start: their sets are left to the others.
    skip: Vec<String>,
    /// Why it last gave a set back (said in `hus workers` through the heartbeat).
    problem: Option<String>,
    stopped: Option<&'static str>,
    next_renewal: Instant,
    idle_poll: Duration,
    idle: Duration,
    /// The free-space floor of the scratch directory: below it, nothing is claimed.
    floor: crate::disk::DiskFloor,
    /// While paused by the floor: the problem it had before, said again once there is
    /// room.
    floor_problem: Option<String>,
}

impl Worker<'_> {
    fn say(&self, line: String) {
        if !self.plan.quiet {
            eprintln!("{line}");
        }
    }

    /// Plays the store's sets until stopped (or, with `until_done`, until none is
    /// left); `Some(130)` when stopped by a signal.
    async fn work(&mut self, pool: &mut SetPool) -> Result<Option<ExitCode>> {
        let signal = referee::stop_signal();
        tokio::pin!(signal);
        loop {
            if Instant::now() >= self.next_renewal {
                self.renew(pool).await?;
            }
            let claimed_none = self.claim(pool).await?;
            self.send_results().await?;
            if self.held.is_empty() && self.unsent.is_empty() {
                if self.stopped.is_some() {
                    break;
                }
                if self.plan.until_done && claimed_none {
                    let progress = self.link.run("counting the sets", |s| s.progress()).await?;
                    if progress.is_some_and(|p| p.pending == 0 && p.running == 0) {
                        break;
                    }
                }
            }
            let wait = self.wait(claimed_none);
            tokio::select! {
                name = &mut signal => {
                    if self.stopped.is_none() {
                        self.give_back(pool, name).await?;
                        // A second signal leaves at once (a store out of reach can hold
                        // the results of the sets that finished).
                        signal.set(referee::stop_signal());
                    } else {
                        self.say(format!(
                            "{}: {name} again: leaving now; the sets whose results the store did not take are played again once their leases run out",
                            self.plan.who
                        ));
                        break;
                    }
                }
                Some((set, ending)) = pool.next_ended() => self.ended(set, ending).await?,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        let _ = self.link.run("saying goodbye", |s| s.goodbye()).await?;
        Ok(self.stopped.map(|_| ExitCode::from(130)))
    }

    /// The heartbeat and the leases' renewals, every quarter of a lease; a set whose
    /// lease was lost is stopped here.
    async fn renew(&mut self, pool: &mut SetPool) -> Result<()> {
        self.next_renewal = Instant::now() + self.plan.lease / 4;
        if self.heartbeat().await?.is_none() {
            return Ok(());
        }
        let ids: Vec<(SetId, u32)> = self.held.values().map(|h| (h.id, h.attempts)).collect();
        let lease = self.plan.lease;
        for (id, attempt) in ids {
            let renewed = self
                .link
                .run("renewing a lease", move |s| s.renew(id, attempt, lease))
                .await?;
            if renewed == Some(false) {
                if let Some(set) = self.held.remove(&id) {
                    pool.stop(&set, GAVE_UP);
                    self.say(format!(
                        "{}: {} was lost (this worker was silent past its lease, another took it): stopped here",
                        self.plan.who, set.key
                    ));
                }
            }
        }
        Ok(())
    }

    /// Says in the store that this worker lives, what it holds, and what it cannot
    /// play; `None` while the store is out of reach.
    async fn heartbeat(&mut self) -> Result<Option<()>> {
        let beat = Heartbeat {
            concurrency: self.plan.concurrency,
            in_flight: self.held.len(),
            problem: self.problem.clone(),
            leaves: self.skip.clone(),
        };
        self.link
            .run("a heartbeat", move |s| s.heartbeat(&beat))
            .await
    }

    /// Claims sets up to the concurrency and starts them; true when the store had
    /// none to give.
    async fn claim(&mut self, pool: &mut SetPool) -> Result<bool> {
        // Below the free-space floor nothing is claimed (said once, and in `hus
        // workers` as this worker's problem); claiming goes on once there is room.
        match self.floor.update() {
            crate::disk::FloorChange::Same => {}
            crate::disk::FloorChange::Low(low) => {
                eprintln!("{}: paused: {low}", self.plan.who);
                self.floor_problem = self.problem.replace(format!("paused: {low}"));
            }
            crate::disk::FloorChange::Back(free) => {
                eprintln!(
                    "{}: {}: sets are claimed again",
                    self.plan.who,
                    crate::disk::FloorChange::back_words(free)
                );
                // The problem it had before the pause, if any, is its problem again.
                self.problem = self.floor_problem.take();
            }
        }
        if self.floor.low().is_some() {
            return Ok(true);
        }
        while self.stopped.is_none() && self.held.len() < self.plan.concurrency {
            let (lease, skip) = (self.plan.lease, self.skip.clone());
            let got = self
                .link
                .run("claiming a set", move |s| s.claim(lease, &skip))
                .await?;
            let Some(Some(set)) = got else {
                return Ok(got.is_some());
            };
            self.idle = IDLE_MIN.min(self.idle_poll);
            // A bot added to the league since this worker read the file.
            if [&set.key.a, &set.key.b]
                .iter()
                .any(|n| !self.shared.bots.contains_key(*n))
            {
                let fresh = self.link.store.call(|s| league_from_store(s)).await;
                if let Ok(fresh) = fresh {
                    self.config = fresh;
                    self.shared = Arc::new(Shared {
                        compress_logs: false,
                        ..Shared::new(&self.config, self.scratch.to_path_buf(), self.nice)
                    });
                }
            }
            pool.start(set.clone(), self.shared.clone(), None);
            self.held.insert(set.id, set);
        }
        Ok(false)
    }

    /// Sends the finished sets' results, once the next sets are started: a set's
    /// thread plays while its predecessor's result goes to the store (with one set at a
    /// time, the store's commit no longer stops the games).
    async fn send_results(&mut self) -> Result<()> {
        let who = self.plan.who;
        while let Some(u) = self.unsent.front() {
            let (id, attempt) = (u.set.id, u.set.attempts);
            let (outcome, log) = (u.outcome.clone(), u.log.clone());
            let sent = self
                .link
                .run("recording a result", move |s| {
                    s.record_attempt(id, attempt, &outcome, &log)
                })
                .await?;
            let Some(recorded) = sent else { break };
            let Some(u) = self.unsent.pop_front() else {
                break;
            };
            for f in u.files.existing() {
                let _ = std::fs::remove_file(f);
            }
            match recorded {
                Recorded::Counted => self.say(format!(
                    "{who}: {} finished: {}-{}",
                    u.set.key, u.outcome.points[0], u.outcome.points[1]
                )),
                Recorded::Duplicate => self.say(format!(
                    "{who}: {} finished, but its lease was lost and another worker played it: kept as a duplicate, not counted",
                    u.set.key
                )),
            }
        }
        Ok(())
    }

    /// How long to wait for a set to end before looking again.
    fn wait(&mut self, claimed_none: bool) -> Duration {
        let to_renewal = self.next_renewal.saturating_duration_since(Instant::now());
        if !self.unsent.is_empty() {
            BACKOFF_MIN
        } else if claimed_none {
            let wait = self.idle;
            self.idle = (self.idle * 2).min(self.idle_poll);
            to_renewal.min(wait)
        } else {
            to_renewal.min(self.idle_poll)
        }
    }

    /// Stopped by a signal: every set in play is stopped and given back at once.
    /// Deletes the files a set given up here left in the scratch directory.
    fn forget_files(&self, set: &ClaimedSet) {
        let log = format!("{}/{}.jsonl", crate::set_files::LOGS_DIR, set.key.stem());
        crate::set_files::delete_set_files(self.scratch, &log);
    }

    /// Stopped by a signal: every set in play is stopped, and the loop goes on until
    /// each has ended: a set that finished before the stop reached it is recorded (its
    /// result queued for the store like any), and only a set that was really stopped is
    /// given back ([`Worker::ended`]). Nothing played is thrown away.
    async fn give_back(&mut self, pool: &mut SetPool, name: &'static str) -> Result<()> {
        self.stopped = Some(name);
        self.say(format!(
            "{}: {name}: giving back the sets in play",
            self.plan.who
        ));
        pool.stop_all(GAVE_UP);
        Ok(())
    }

    /// A set of the pool ended: its result is queued for the store, or the set given
    /// back. A set given up here already (its lease lost, the worker stopping) is
    /// no longer held, and its ending is dropped.
    async fn ended(&mut self, set: ClaimedSet, ending: Ending) -> Result<()> {
        if self
            .held
            .get(&set.id)
            .is_none_or(|h| h.attempts != set.attempts)
        {
            self.forget_files(&set);
            return Ok(());
        }
        self.held.remove(&set.id);
        if !matches!(ending, Ending::Finished(_)) {
            // Played no further here: its partial files are of no use to anyone (the
            // store keeps only finished logs), and a worker that runs for months must
            // not fill its scratch directory with them.
            self.forget_files(&set);
        }
        let who = self.plan.who;
        match ending {
            Ending::Finished(mut outcome) => {
                let stem = outcome
                    .log
                    .trim_start_matches("logs/")
                    .trim_end_matches(".jsonl");
                let files = SetFiles::new(self.scratch, stem);
                let path = files.log();
                let log = std::fs::read(&path).map_err(|error| Error::Io {
                    what: "cannot read a finished set's log",
                    path: path.clone(),
                    error,
                })?;
                outcome.log = format!("store:{}", set.id);
                self.unsent.push_back(Unsent {
                    set,
                    outcome: Arc::new(outcome),
                    log: Arc::new(log),
                    files,
                });
            }
            Ending::Failed(SetFailure::Set(e @ SetError::CannotStart { .. })) => {
                // The bots whose program is not found here; when both are (or neither
                // is, and the start failed for another reason), both are left to the
                // other workers.
                let mut missing: Vec<String> =
                    [&set.key.a, &set.key.b]
                        .into_iter()
                        .filter(|n| {
                            !self.shared.bots.get(*n).is_some_and(|b| {
                                b.spec.argv.first().is_some_and(|p| program_found(p))
                            })
                        })
                        .cloned()
                        .collect();
                if missing.is_empty() {
                    missing = vec![set.key.a.clone(), set.key.b.clone()];
                }
                self.say(format!(
                    "{who}: cannot play {}: {e}; the set is given back to the other workers, and this worker leaves {}'s sets to them",
                    set.key,
                    missing.join(" and ")
                ));
                self.problem = Some(format!("cannot play {}: {e}", set.key));
                for bot in missing {
                    if !self.skip.contains(&bot) {
                        self.skip.push(bot);
                    }
                }
                let (id, attempt) = (set.id, set.attempts);
                let _ = self
                    .link
                    .run("giving a set back", move |s| s.release(id, attempt))
                    .await?;
                // Said at once, not at the next heartbeat: `hus workers` shows it.
                self.heartbeat().await?;
            }
            Ending::Stopped => {
                // Stopped while this worker held it (a signal): given back at once, for
                // another worker to play.
                let (id, attempt) = (set.id, set.attempts);
                let _ = self
                    .link
                    .run("giving a set back", move |s| s.release(id, attempt))
                    .await?;
            }
            Ending::Failed(e) => {
                let (id, attempt) = (set.id, set.attempts);
                let _ = self
                    .link
                    .run("giving a set back", move |s| s.release(id, attempt))
                    .await?;
                return Err(Error::Set {
                    set: set.key.to_string(),
                    error: e,
                });
            }
        }
        Ok(())
    }
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
