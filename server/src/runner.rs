//! The runner: plays the league without end. It alone uses the store. It chooses each
//! set by the rule of `pairing`, adds it to the store, claims it, and starts it in a
//! `league::SetPool`, the league's own pool (each set on a thread of its own, played by
//! `league::play_claimed`: so `referee::play_set`, its log, and the store's one
//! transaction per finished set are the league's own), up to the league's concurrency at
//! once, with the set's `LiveTap`; after every change it publishes a new snapshot for
//! the pages. It leaves by `SetPool::shutdown`, which stops the sets still playing.
//!
//! The store is either kind (`Box<dyn Store>`): the directory's SQLite file, or a
//! PostgreSQL database that `hus worker` processes share ([`Store::is_shared`]). With a
//! shared store the runner keeps the league file's schedule in the store for the
//! workers, claims the store's pending sets first (choosing one itself only when none
//! is pending), keeps its own claims' leases alive, and reads every second what
//! finished since its last read, so the pages show the workers' results too.
//!
//! Its cost per set does not grow with the sets behind it: the standings and the
//! pairing come from a [`league::Tally`] of the finished sets, which grows with the
//! number of bots and pairs only; the store is read for what is new since the number of
//! the last finished set read (every result, this server's and the workers', is
//! counted from that read alone); the snapshot keeps the latest [`RECENT_SETS`] sets,
//! and the pages read older ones from the store a page at a time.
//!
//! The runner holds no store, only a [`StoreThread`]: every store call is sent to the
//! store's own thread and awaited, so the synchronous clients (the PostgreSQL one panics
//! inside a runtime) never run on the async runtime, and the store is closed on its
//! thread too; a thread that stopped (an operation panicked there) ends the runner
//! with its error, even with a shared store, whose outages are otherwise waited out.
//! What `AddBot` reads from the disk (the league file, the sandbox's probe)
//! runs on tokio's blocking threads.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use league::coordinator::{
    AfterFailure, Coordinator, Ended, Finish, Link, Played, Source, Start, StoreChange,
};
use league::{
    BotEntry, ClaimedSet, Claims, FinishedSet, LeagueConfig, LeagueInfo, PlannedSet, Recorded,
    SetFailure, SetFiles, SetOutcome, SetPool, Shared, Store, StoreCaller, StoreThread, Tally,
};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::live::LiveTap;
use crate::pairing::{self, pair, Pair, PairingInput};
use crate::state::{AppState, Command, Problem, Request, SetView, Snapshot, RECENT_SETS};
use crate::uploads::BoxStore;

/// How long a pair whose set could not be played is held back.
pub const HOLD_BACK: Duration = Duration::from_secs(30);
/// Problems kept for the pages.
const PROBLEMS: usize = 20;
/// How an outage of a shared store begins among the problems (`set` empty); it leaves
/// them when the store answers again.
const OUT_OF_REACH: &str = "the store is out of reach";
/// How many sets the pairing may choose in a row that turn out to be taken (running or
/// done elsewhere) before a start waits for the next look.
const CHOICE_TRIES: u32 = 4;

/// Whether `problem` is an outage of the store (cleared once the store is back).
fn is_outage(problem: &Problem) -> bool {
    problem.set.is_empty() && problem.error.starts_with(OUT_OF_REACH)
}

/// Ranges of 64 sets archived after a result at most: one in the normal course, more
/// to catch up with a history from before archives (a store filled by an older hus).
const ARCHIVE_RANGES: usize = 4;

/// The runner's state.
pub struct Runner {
    /// The league file as read at start (and again for `AddBot`).
    pub config: LeagueConfig,
    /// The league's directory.
    pub dir: PathBuf,
    /// The store (SQLite or PostgreSQL), on its own thread: the runner's reads (the
    /// finished sets, the snapshot) go through this caller; claims, renewals, results
    /// and give-backs through the coordinator's link.
    store: StoreCaller<BoxStore>,
    /// The link to the store's thread, until [`Runner::run`] hands it to the
    /// coordinator.
    link: Option<Link<BoxStore>>,
    /// Whether the store is shared with workers ([`Store::is_shared`]).
    shared_store: bool,
    /// The league's seed.
    pub seed: u64,
    /// What sets share (the bots' commands and limits).
    pub shared: Arc<Shared>,
    /// Bots that play.
    pub active: BTreeSet<String>,
    /// Bots removed by the admin.
    pub removed: Vec<String>,
    /// The finished sets in aggregate: what the standings and the pairing need.
    tally: Tally,
    /// The number of the last finished set read from the store
    /// ([`league::FinishedQuery::After`]).
    seen: u64,
    /// The number of the last set whose standings were offered to the rating history.
    charted: u64,
    /// The latest finished sets, oldest first, at most [`RECENT_SETS`].
    recent: VecDeque<Arc<SetView>>,
    /// The highest round per pair of every finished set and every set started here.
    pub rounds: BTreeMap<Pair, u32>,
    /// Quiet: no progress lines on stderr.
    pub quiet: bool,
    /// The sets numbered up to this one have been through `archive` (a range is
    /// archived once its last set is read).
    archived: u64,
    /// The last failure to archive, said once.
    archive_error: Option<String>,
    /// Logs kept (`--keep-logs`): those of the most recent finished sets; `None`: all.
    pub keep_logs: Option<u64>,
    /// Archive the finished logs 64 sets to a file (`league::archive_logs`; not with
    /// `--no-archive`).
    pub archive_logs: bool,
    /// The remote bots' registry (when the bot port is open): a remote bot plays only
    /// while it has a connection waiting.
    pub registry: Option<Arc<remote::Registry>>,
    held: HashMap<Pair, Instant>,
    /// Sets this runner started that could not be played (a log that could not be
    /// written, a bot that did not start), put back to pending: when the pairing next
    /// chooses the pair, the set played is this one again (the same id, key and seed),
    /// never a new round that would leave it pending for ever.
    retry: Vec<league::SetKey>,
    /// With a shared store: the league file's schedule of the active bots, kept in the
    /// store for the workers.
    schedule: Vec<PlannedSet>,
    /// The keys of `schedule`, to tell at each pick whether the set chosen before is the
    /// file's (it stays in the schedule) or the pairing's (it leaves it).
    schedule_keys: HashSet<league::SetKey>,
    /// The set the pairing chose last.
    last_chosen: Option<league::SetKey>,
    paused: bool,
    /// The free-space floor: below it no set starts (`--min-free-space`); the
    /// coordinator watches it once the run starts.
    pub floor: league::DiskFloor,
    /// Why no set starts for want of space, while that lasts.
    low_space: Option<String>,
    problems: Vec<Problem>,
    started: u64,
    done: u64,
    /// The pages' state, once the run starts.
    app: Option<Arc<AppState>>,
    /// The admin's requests, once the run starts (`None` again once closed).
    commands: Option<mpsc::Receiver<Request>>,
    /// The last snapshot published.
    current: Option<Snapshot>,
    /// A shared store is out of reach (said once, as a problem).
    store_down: bool,
}

impl Runner {
    /// A runner over a store already in line with the file (settings settled,
    /// interrupted sets put back); the store moves to a thread of its own.
    pub async fn new(
        config: LeagueConfig,
        dir: &Path,
        store: Box<dyn Store + Send>,
        seed: u64,
        shared: Shared,
        quiet: bool,
    ) -> league::Result<Runner> {
        let shared_store = store.is_shared();
        let thread = StoreThread::spawn(store)
            .map_err(|e| league::Error::Runtime(format!("cannot start the store's thread: {e}")))?;
        let store = thread.caller();
        // Every finished set once, in batches: into the tally, the latest kept.
        let (tally, recent, seen) = store
            .call(|s| {
                let mut tally = Tally::new();
                let mut recent = VecDeque::new();
                let seen =
                    s.each_finished(0, &mut |n, set| add(&mut tally, &mut recent, n, set))?;
                Ok::<_, league::StoreError>((tally, recent, seen))
            })
            .await?;
        let rounds = rounds_of(&tally);
        Ok(Runner {
            active: config.bots.iter().map(|b| b.name.clone()).collect(),
            config,
            dir: dir.to_path_buf(),
            store,
            link: Some(Link::new(thread)),
            shared_store,
            seed,
            shared: Arc::new(shared),
            removed: Vec::new(),
            tally,
            seen,
            charted: seen,
            recent,
            rounds,
            quiet,
            archived: 0,
            archive_error: None,
            keep_logs: None,
            archive_logs: false,
            registry: None,
            held: HashMap::new(),
            retry: Vec::new(),
            schedule: Vec::new(),
            schedule_keys: HashSet::new(),
            last_chosen: None,
            paused: false,
            floor: league::DiskFloor::new(Vec::new(), 0),
            low_space: None,
            problems: Vec::new(),
            started: 0,
            done: 0,
            app: None,
            commands: None,
            current: None,
            store_down: false,
        })
    }

    fn say(&self, line: &str) {
        if !self.quiet {
            eprintln!("hus serve: {line}");
        }
    }

    /// A bot the league runs can always play; a remote one while it is connected.
    fn can_play(&self, name: &str) -> bool {
        match self.config.bot(name) {
            Some(bot) if bot.is_remote() => {
                self.registry.as_ref().is_some_and(|r| r.is_connected(name))
            }
            Some(_) => true,
            None => false,
        }
    }

    /// Connects the league's remote bots to `registry`.
    pub fn use_registry(&mut self, registry: Arc<remote::Registry>) {
        let mut shared = (*self.shared).clone();
        for bot in self.config.bots.iter().filter(|b| b.is_remote()) {
            shared
                .links
                .insert(bot.name.clone(), registry.connector(&bot.name));
        }
        self.shared = Arc::new(shared);
        self.registry = Some(registry);
    }

    fn entries(&self) -> Vec<BotEntry> {
        self.config
            .bots
            .iter()
            .filter(|b| self.active.contains(&b.name))
            .map(|b| BotEntry {
                name: b.name.clone(),
                command: b.command(),
            })
            .collect()
    }

    /// A caller of the store's thread, for the uploads (their versions are kept in the
    /// league's store, beside its sets).
    pub fn store_caller(&self) -> StoreCaller<BoxStore> {
        self.store.clone()
    }

    /// Brings the store's bots in line with the active ones. SQLite: the store's
    /// schedule then holds no set (sets are added one at a time by `start_next`). A
    /// shared store keeps the league file's schedule of the active bots, for the
    /// workers.
    pub async fn sync_bots(&mut self) -> league::Result<league::SyncReport> {
        let entries = self.entries();
        if self.shared_store {
            let names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
            self.schedule =
                league::schedule(&names, &self.config.format, self.config.rounds, self.seed);
        }
        // The whole schedule, synced: the set chosen last leaves it here.
        self.schedule_keys = self.schedule.iter().map(|s| s.key.clone()).collect();
        self.last_chosen = None;
        let schedule = self.schedule.clone();
        Ok(self
            .store
            .call(move |s| s.sync(&entries, &schedule))
            .await?)
    }

    /// Reads the sets that finished since the last read into the tally and the latest
    /// sets: every result counts through here, once (its number is above the last one
    /// read exactly once). True when there was any.
    async fn read_new(&mut self) -> league::Result<bool> {
        let after = self.seen;
        let (new, seen) = self
            .store
            .call(move |s| {
                let mut new = Vec::new();
                let seen = s.each_finished(after, &mut |n, set| new.push((n, set)))?;
                Ok::<_, league::StoreError>((new, seen))
            })
            .await?;
        self.seen = seen;
        let any = !new.is_empty();
        for (number, set) in new {
            let r = self.rounds.entry(pair(&set.key.a, &set.key.b)).or_insert(0);
            *r = (*r).max(set.key.round);
            add(&mut self.tally, &mut self.recent, number, set);
        }
        if any {
            self.prune().await?;
            self.archive().await?;
        }
        Ok(any)
    }

    /// Archives the logs of each whole range of 64 finished sets (`league::archive_logs`),
    /// at most [`ARCHIVE_RANGES`] ranges after a result:
    /// a failure (a full disk) leaves the logs as they are, says so, and is tried again
    /// after the next result.
    async fn archive(&mut self) -> league::Result<()> {
        if !self.archive_logs || self.seen < self.archived + league::ARCHIVE_SETS {
            return Ok(());
        }
        let (logs, done) = (self.dir.join(league::LOGS_DIR), self.seen);
        let archived = self
            .store
            .call(move |s| league::archive_logs(s.as_mut(), &logs, done, ARCHIVE_RANGES))
            .await;
        match archived {
            Ok(report) => {
                self.archived = report.up_to;
                self.archive_error = None;
            }
            // Said once, not after every result while the cause lasts.
            Err(e) => {
                let said = e.to_string();
                if self.archive_error.as_deref() != Some(said.as_str()) {
                    tracing::warn!("{said}; the logs stay files of their own for now");
                    self.archive_error = Some(said);
                }
            }
        }
        Ok(())
    }

    /// With `--keep-logs N`: deletes the logs of the finished sets older than the last
    /// N (the store marks them pruned first; a crash between leaves files `hus prune`
    /// does not find again, never a result without its mark).
    async fn prune(&mut self) -> league::Result<()> {
        let Some(keep) = self.keep_logs else {
            return Ok(());
        };
        let up_to = self.seen.saturating_sub(keep);
        if up_to == 0 {
            return Ok(());
        }
        let logs = self.store.call(move |s| s.prune_logs(up_to)).await?;
        if logs.is_empty() {
            return Ok(());
        }
        let dir = self.dir.join(league::LOGS_DIR);
        tokio::task::spawn_blocking(move || {
            for log in &logs {
                league::delete_set_files(&dir, log);
            }
        })
        .await
        .map_err(|e| league::Error::Runtime(format!("cannot delete pruned logs: {e}")))?;
        let logs = self.dir.join(league::LOGS_DIR);
        let deleted =
            tokio::task::spawn_blocking(move || league::delete_archives_up_to(&logs, up_to))
                .await
                .map_err(|e| {
                    league::Error::Runtime(format!("cannot delete pruned archives: {e}"))
                })?;
        // A link at `logs/archive`: said, and the server carries on (the logs are pruned;
        // the archives stay until the link is gone).
        if let Err(e) = deleted {
            tracing::warn!("cannot delete pruned archives: {e}");
        }
        // The latest sets the pages hold: a pruned one says so.
        for view in self.recent.iter_mut().take_while(|v| v.number <= up_to) {
            if !view.pruned {
                let mut pruned = (**view).clone();
                pruned.pruned = true;
                *view = Arc::new(pruned);
            }
        }
        Ok(())
    }

    /// The snapshot of now: the standings from the tally (what is read from the store
    /// is small and bounded: the settings, the bots, the count of running sets).
    pub async fn snapshot(&mut self) -> league::Result<Snapshot> {
        let shared = self.shared_store;
        // Through indexes, whatever the store's size: the schedule's counts and the
        // running sets (the workers' too).
        let (settings, progress, bots) = self
            .store
            .call(move |s| -> league::Result<_> {
                let progress = if shared {
                    s.progress()?
                } else {
                    league::Progress {
                        running: s.running()?,
                        ..Default::default()
                    }
                };
                Ok((s.settings()?, progress, s.bots()?))
            })
            .await?;
        let info = LeagueInfo::from_settings(&settings);
        let mut standings = self.tally.standings(info, progress, &bots);
        if self.seen > self.charted {
            // The rating history: a point for the sets read since the last one, kept by
            // the store if it opens a new bucket of the history's stride.
            if let Some(point) = rating_point(self.seen, &standings) {
                self.store.call(move |s| s.record_ratings(&point)).await?;
            }
            self.charted = self.seen;
        }
        // SQLite: the server has no schedule to finish: every set it played is done, and
        // the ones playing are all it has started. A shared store keeps the league
        // file's schedule for the workers: its progress is the store's, as `hus
        // standings --store` prints it.
        if !shared {
            let done = self.tally.sets();
            let running = progress.running;
            standings.progress = league::ProgressView {
                sets_scheduled: done + running,
                sets_done: done,
                sets_running: running,
                sets_pending: 0,
                sets_done_elsewhere: 0,
            };
        }
        Ok(Snapshot {
            standings,
            sets: self.recent.clone(),
            paused: self.paused,
            low_space: self.low_space.clone(),
            removed: self.removed.clone(),
            problems: self.problems.clone(),
            started: self.started,
            finished: self.done,
        })
    }

    fn problem(&mut self, set: &str, error: String) {
        self.say(&format!("{set} could not be played: {error}"));
        self.problems.push(Problem {
            at: referee::now_rfc3339(),
            set: set.to_string(),
            error,
        });
        if self.problems.len() > PROBLEMS {
            self.problems.remove(0);
        }
    }

    /// Plays until `shutdown` says why to stop; running sets are then cut off (their
    /// logs end with `aborted`, they go back to pending and are played again from
    /// their start), every result already played recorded first. Returns the reason.
    /// The sets are played by the league's coordinator, this runner being its source.
    pub async fn run(
        mut self,
        app: Arc<AppState>,
        commands: mpsc::Receiver<Request>,
        shutdown: watch::Receiver<Option<&'static str>>,
    ) -> league::Result<&'static str> {
        let Some(link) = self.link.take() else {
            return Err(league::Error::Runtime("the runner ran twice".into()));
        };
        let snapshot = self.snapshot().await?;
        app.publish(snapshot.clone());
        self.current = Some(snapshot);
        self.app = Some(app);
        self.commands = Some(commands);
        let concurrency = self.config.concurrency;
        let floor = std::mem::replace(&mut self.floor, league::DiskFloor::new(Vec::new(), 0));
        let coordinator = Coordinator::new(link, self, SetPool::new(), concurrency, floor).await?;
        // The first stop is the shutdown's reason; there is no second one (the server's
        // signals end in that one reason).
        let mut asked = 0;
        let stop = move || {
            asked += 1;
            let first = asked == 1;
            let mut shutdown = shutdown.clone();
            async move {
                if first {
                    if let Ok(why) = shutdown.wait_for(|s| s.is_some()).await {
                        return why.unwrap_or("shutdown");
                    }
                }
                std::future::pending().await
            }
        };
        let Ended {
            result,
            source,
            link,
        } = coordinator.run(stop).await;
        // Its store caller first: the store's thread ends once no one can call it.
        drop(source);
        // Closed on the store's thread (a PostgreSQL connection blocks on its client's
        // own runtime as it closes), once its last operation is done.
        link.shutdown().await;
        Ok(match result? {
            Finish::Done => "the end of the league",
            Finish::Stopped(why) => why,
        })
    }

    /// Publishes the snapshot of now; with a shared store out of reach, the last one
    /// with the outage among its problems.
    async fn publish(&mut self) -> league::Result<()> {
        match self.snapshot().await {
            Ok(fresh) => {
                // It answered: an outage, if there was one, is over.
                self.store_back();
                self.show(fresh);
                Ok(())
            }
            Err(e) if outage(self.shared_store, &e) => {
                self.store_out_of_reach(&e);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Shows `snapshot` on the pages.
    fn show(&mut self, snapshot: Snapshot) {
        if let Some(app) = &self.app {
            app.publish(snapshot.clone());
        }
        self.current = Some(snapshot);
    }

    /// Shows the last snapshot again with what changed since in the runner's own state
    /// (problems, space, counts), without reading the store.
    fn show_again(&mut self) {
        if let Some(mut snapshot) = self.current.take() {
            snapshot.problems = self.problems.clone();
            snapshot.low_space = self.low_space.clone();
            snapshot.paused = self.paused;
            snapshot.started = self.started;
            self.show(snapshot);
        }
    }

    /// Reads what finished since the last read; a shared store out of reach is said
    /// (the next look reads it).
    async fn read_new_noting(&mut self) -> league::Result<bool> {
        match self.read_new().await {
            Err(e) if outage(self.shared_store, &e) => {
                self.store_out_of_reach(&e);
                Ok(false)
            }
            other => other,
        }
    }

    /// A shared store out of reach (a restart, a network cut): said once, as a problem;
    /// no set starts and no result is recorded until it answers again. The sets that are
    /// playing go on.
    fn store_out_of_reach(&mut self, error: &dyn std::fmt::Display) {
        if self.store_down {
            return;
        }
        self.store_down = true;
        let said = format!("{OUT_OF_REACH} ({error}); trying again every second");
        self.say(&said);
        self.problems.push(Problem {
            at: referee::now_rfc3339(),
            set: String::new(),
            error: said,
        });
        if self.problems.len() > PROBLEMS {
            self.problems.remove(0);
        }
        self.show_again();
    }

    /// The store answers again.
    fn store_back(&mut self) {
        if !self.store_down {
            return;
        }
        self.store_down = false;
        self.say("the store is back");
        // The outage is over: no longer a problem on the pages.
        self.problems.retain(|p| !is_outage(p));
        self.show_again();
    }

    /// Chooses the next set by the pairing (a shared store's pending sets first), adds
    /// it to the store and claims it; `None` when no pair can play now, or the store is
    /// out of reach.
    async fn choose(
        &mut self,
        link: &mut Link<BoxStore>,
        running: &[ClaimedSet],
    ) -> league::Result<Option<ClaimedSet>> {
        let now = Instant::now();
        self.held.retain(|_, until| *until > now);
        let mut input = PairingInput {
            available: self
                .active
                .iter()
                .filter(|name| self.can_play(name))
                .map(String::as_str)
                .collect(),
            rounds: self.rounds.clone(),
            games: self.config.games,
            ..Default::default()
        };
        for (a, b, sets, _) in self.tally.seated_pairs() {
            *input.finished.entry(pair(a, b)).or_insert(0) += sets;
        }
        input.joined = self.tally.joined().clone();
        for s in running {
            *input.running.entry(pair(&s.key.a, &s.key.b)).or_insert(0) += 1;
        }
        if let Some(r) = self
            .current
            .as_ref()
            .and_then(|s| s.standings.ratings.as_ref())
        {
            input.set_ratings(r);
        }
        input.held = self.held.keys().cloned().collect();
        // A shared store's pending sets (the file's schedule, for the workers too) go
        // first; the pairing chooses only when none is left. A pair held back (its set
        // just failed here) is passed over, left to the workers for now: it holds up no
        // set behind it and counts no attempt.
        if self.shared_store {
            let held: Vec<Pair> = input.held.iter().cloned().collect();
            match link
                .run("claiming a set", move |s| s.claim_next_except(&held))
                .await?
            {
                None => return Ok(None),
                Some(Some(set)) => return Ok(Some(set)),
                Some(None) => {}
            }
        }
        // A chosen set may be taken already (the file's set of that round, played by a
        // worker): then the pair's next round, a few times at most.
        for _ in 0..CHOICE_TRIES {
            let Some(mut key) = pairing::choose(&self.config.format, &input) else {
                return Ok(None);
            };
            // The pair's set that could not be played, if one waits: played again.
            let chosen = pair(&key.a, &key.b);
            if let Some(i) = self.retry.iter().position(|k| pair(&k.a, &k.b) == chosen) {
                key = self.retry.remove(i);
            }
            let seed = league::set_seed(self.seed, &key);
            let planned = PlannedSet {
                key: key.clone(),
                seed,
            };
            // The set chosen before leaves the schedule unless it is the file's: one
            // transaction of a few rows, whatever the schedule's size.
            let replaces = self
                .last_chosen
                .clone()
                .filter(|k| !self.schedule_keys.contains(k));
            let Some(claimed) = link
                .run("choosing a set", move |s| {
                    s.schedule_and_claim(&planned, replaces.as_ref())
                })
                .await?
            else {
                return Ok(None);
            };
            // In the schedule now, claimed or not: the next pick replaces it.
            self.last_chosen = Some(key.clone());
            if claimed.is_some() {
                return Ok(claimed);
            }
            let r = self.rounds.entry(chosen).or_insert(0);
            *r = (*r).max(key.round);
            input.rounds = self.rounds.clone();
        }
        Ok(None)
    }

    /// Makes `bot` one of the league's bots (in place of a bot of its name), at the
    /// league's nice value; whether it is paired is `active`'s.
    fn take_in(&mut self, bot: league::BotConfig) {
        let mut shared = (*self.shared).clone();
        let mut b = bot.clone();
        b.set_nice(shared.bots.values().find_map(|x| x.nice()));
        shared.bots.insert(bot.name.clone(), b);
        self.shared = Arc::new(shared);
        self.config.bots.retain(|b| b.name != bot.name);
        self.config.bots.push(bot);
    }

    async fn command(&mut self, command: Command) -> Result<String, String> {
        match command {
            Command::Pause => {
                self.paused = true;
                self.say("paused by the admin");
                Ok("paused: no new sets start; running sets finish".into())
            }
            Command::Resume => {
                self.paused = false;
                self.say("resumed by the admin");
                Ok("resumed".into())
            }
            Command::RemoveBot(name) => {
                if !self.active.remove(&name) {
                    return Err(format!("no active bot named {name:?}"));
                }
                self.removed.push(name.clone());
                self.sync_bots().await.map_err(|e| format!("{e:#}"))?;
                self.say(&format!("{name} removed by the admin"));
                Ok(format!(
                    "{name} plays no new sets; its running sets finish and its results stay"
                ))
            }
            Command::EnterVersion(bot) => {
                let bot = *bot;
                let name = bot.name.clone();
                let replaced = crate::uploads::other_versions(&name, self.active.iter());
                for old in &replaced {
                    self.active.remove(old);
                }
                self.take_in(bot);
                self.active.insert(name.clone());
                self.sync_bots().await.map_err(|e| format!("{e:#}"))?;
                if replaced.is_empty() {
                    self.say(&format!("{name} plays from now on"));
                } else {
                    self.say(&format!(
                        "{name} plays from now on, in place of {}",
                        replaced.join(", ")
                    ));
                }
                Ok(format!("{name} plays from now on"))
            }
            Command::AddBot(name) => {
                if self.active.contains(&name) {
                    return Err(format!("{name:?} already plays"));
                }
                // The file is read again: a bot's command comes only from the league
                // file, never from the network.
                // Both block (a file, a process): off the runtime.
                let path = self.config.path.clone();
                let wanted = name.clone();
                let bot = tokio::task::spawn_blocking(move || {
                    let fresh = LeagueConfig::load(&path).map_err(|e| format!("{e:#}"))?;
                    let Some(bot) = fresh.bot(&wanted).cloned() else {
                        return Err(format!(
                            "{} has no bot named {wanted:?}: add it to the file first",
                            path.display()
                        ));
                    };
                    bot.probe_sandbox()
                        .map_err(|e| format!("{wanted}'s sandbox cannot start: {e}"))?;
                    Ok(bot)
                })
                .await
                .map_err(|e| format!("reading the league file failed: {e}"))??;
                self.take_in(bot.clone());
                if let Some(registry) = &self.registry {
                    registry.set_tokens(crate::remote_tokens(&self.config));
                    if bot.is_remote() {
                        let mut shared = (*self.shared).clone();
                        shared.links.insert(name.clone(), registry.connector(&name));
                        self.shared = Arc::new(shared);
                    }
                } else if bot.is_remote() {
                    return Err(format!(
                        "{name} is a remote bot and this server has no bot port: start it with --bot-listen"
                    ));
                }
                self.active.insert(name.clone());
                self.removed.retain(|r| *r != name);
                self.sync_bots().await.map_err(|e| format!("{e:#}"))?;
                self.say(&format!("{name} added by the admin"));
                Ok(format!("{name} plays from now on"))
            }
        }
    }
}

/// The server as the coordinator's source: sets from its pairing (a shared store's
/// pending sets first), each with its live tap; the pages see every change.
impl Source<BoxStore> for Runner {
    type Outside = Option<Request>;

    async fn claim(
        &mut self,
        link: &mut Link<BoxStore>,
        running: &[ClaimedSet],
    ) -> league::Result<Option<Start>> {
        let Some(set) = self.choose(link, running).await? else {
            return Ok(None);
        };
        self.retry.retain(|k| *k != set.key);
        let stem = set.key.stem();
        if let Err(e) = SetFiles::new(&self.dir.join(league::LOGS_DIR), &stem).set_aside() {
            // Not played here: given back at once rather than held until its lease ends.
            let claim = set.claim();
            let _ = link
                .run("putting a set back", move |s| s.requeue(&[claim]))
                .await;
            return Err(e);
        }
        let (claim, log) = (
            set.claim(),
            league::LogPlace::file(&stem, league::LogForm::Plain),
        );
        if link
            .run("noting a set's log", move |s| s.set_log(claim, &log))
            .await?
            == Some(false)
        {
            // Taken over between the claim and now (a lease that ran out): not ours.
            self.say(&format!(
                "{}: claimed again elsewhere before it started here",
                set.key
            ));
            return Ok(None);
        }
        let r = self.rounds.entry(pair(&set.key.a, &set.key.b)).or_insert(0);
        *r = (*r).max(set.key.round);
        self.started += 1;
        let Some(app) = self.app.clone() else {
            return Err(league::Error::Runtime("the runner has no pages".into()));
        };
        app.hub
            .started(&stem, [set.key.a.clone(), set.key.b.clone()]);
        // A start changes only the running sets' count: the snapshot of the last
        // change, with that count, rather than the whole table again.
        if let Some(mut snapshot) = self.current.take() {
            let progress = &mut snapshot.standings.progress;
            progress.sets_running += 1;
            if self.shared_store {
                // Claimed from the schedule (one the pairing chose joins it first).
                progress.sets_pending = progress.sets_pending.saturating_sub(1);
            } else {
                progress.sets_scheduled += 1;
            }
            snapshot.started = self.started;
            self.show(snapshot);
        }
        let tap = LiveTap {
            set: stem,
            hub: app.hub.clone(),
        };
        Ok(Some(Start {
            set,
            shared: self.shared.clone(),
            tap: Some(Box::new(tap)),
        }))
    }

    fn may_claim(&self) -> bool {
        !self.paused
    }

    /// A shared store keeps the log too (`hus export`); the pages serve the file.
    async fn finished(&mut self, _set: &ClaimedSet, outcome: SetOutcome) -> league::Result<Played> {
        let log = if self.shared_store {
            // Its text, compressed or not yet (`referee::open_finished_log`).
            read_finished_log(&self.dir.join(outcome.log.to_string())).unwrap_or_else(|e| {
                self.say(&format!(
                    "cannot read {}: {e}; the store keeps no copy of it",
                    outcome.log
                ));
                Vec::new()
            })
        } else {
            Vec::new()
        };
        Ok(Played {
            outcome: Arc::new(outcome),
            log: Arc::new(log),
        })
    }

    async fn recorded(
        &mut self,
        _link: &mut Link<BoxStore>,
        set: &ClaimedSet,
        played: &Played,
        recorded: Recorded,
    ) -> league::Result<()> {
        let stem = set.key.stem();
        let outcome = &played.outcome;
        let hub = self.app.as_ref().map(|a| a.hub.clone());
        match recorded {
            Recorded::Duplicate => {
                if let Some(hub) = &hub {
                    hub.ended(&stem, "failed");
                }
                self.problem(&stem, "this server's lease ran out and another played the set: its result is kept as a duplicate, not counted".into());
            }
            Recorded::Counted => {
                self.say(&format!(
                    "{} finished: {} {}-{} {}",
                    set.key, set.key.a, outcome.points[0], outcome.points[1], set.key.b
                ));
                for line in league::fault_lines(&set.key, outcome) {
                    self.say(&format!("{}: {line}", set.key));
                }
                self.done += 1;
                if let Some(hub) = &hub {
                    hub.ended(&stem, "finished");
                }
                // Counted as every result is: read back by its number.
                self.read_new_noting().await?;
            }
        }
        self.publish().await
    }

    async fn failed(
        &mut self,
        _link: &mut Link<BoxStore>,
        set: &ClaimedSet,
        failure: SetFailure,
    ) -> league::Result<AfterFailure> {
        let stem = set.key.stem();
        if let Some(app) = &self.app {
            app.hub.ended(&stem, "failed");
        }
        self.held
            .insert(pair(&set.key.a, &set.key.b), Instant::now() + HOLD_BACK);
        self.problem(&stem, failure.to_string());
        self.retry.push(set.key.clone());
        Ok(AfterFailure::GiveBack)
    }

    fn stopped(&mut self, set: &ClaimedSet) {
        if let Some(app) = &self.app {
            app.hub.ended(&set.key.stem(), "stopped");
        }
    }

    /// Stopped and failed sets are pending again, their partial logs set aside.
    async fn given_back(
        &mut self,
        _link: &mut Link<BoxStore>,
        sets: &[ClaimedSet],
        put_back: usize,
    ) -> league::Result<()> {
        if put_back < sets.len() {
            // Claimed again elsewhere since (a worker, after this server's lease ran
            // out): theirs now, left as they are.
            self.say(&format!(
                "{} of the sets stopped here had been claimed again elsewhere: left to whoever holds them",
                sets.len() - put_back
            ));
        }
        let logs = self.dir.join(league::LOGS_DIR);
        for set in sets {
            if let Some(kept) = league::set_aside(&logs, &set.key.stem())?.first() {
                self.say(&format!(
                    "{} was stopped; its partial log is kept as {}",
                    set.key,
                    kept.display()
                ));
            }
        }
        self.publish().await
    }

    fn abandoned(&mut self, set: &ClaimedSet) {
        let stem = set.key.stem();
        if let Some(app) = &self.app {
            app.hub.ended(&stem, "stopped");
        }
        let _ = league::set_aside(&self.dir.join(league::LOGS_DIR), &stem);
    }

    /// A set whose lease a worker took over (this server was out of reach past it) is
    /// stopped here: it is the worker's now, and playing it on is work thrown away.
    fn lost(&mut self, set: &ClaimedSet) {
        self.problem(
            &set.key.stem(),
            "this server's lease ran out and another took the set over: stopped here".into(),
        );
    }

    fn say(&mut self, line: &str) {
        Runner::say(self, line);
    }

    /// A shared store: the workers' results, every second.
    fn tick_every(&self) -> Option<Duration> {
        self.shared_store.then_some(Duration::from_secs(1))
    }

    /// The workers start and finish sets unseen: a fresh snapshot every second, so the
    /// progress is the store's of now.
    async fn tick(
        &mut self,
        link: &mut Link<BoxStore>,
        _running: &[ClaimedSet],
    ) -> league::Result<()> {
        // Through the link: a lost connection is opened again here (after its backoff),
        // whether or not this server plays sets of its own.
        if link
            .run("reaching the store", |s| s.reconnect_if_lost())
            .await?
            .is_none()
        {
            return Ok(());
        }
        match self.read_new().await {
            Ok(_) => self.publish().await,
            Err(e) if outage(self.shared_store, &e) => {
                self.store_out_of_reach(&e);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    async fn outside(&mut self) -> Option<Request> {
        let Some(commands) = self.commands.as_mut() else {
            return std::future::pending().await;
        };
        let request = commands.recv().await;
        if request.is_none() {
            // No admin any more: nothing comes from outside from now on.
            self.commands = None;
        }
        request
    }

    async fn handle(
        &mut self,
        _link: &mut Link<BoxStore>,
        request: Option<Request>,
    ) -> league::Result<()> {
        let Some((command, answer)) = request else {
            return Ok(());
        };
        let said = self.command(command).await;
        // The pages see the change before the admin hears it is done.
        self.publish().await?;
        let _ = answer.send(said);
        Ok(())
    }

    /// A server plays without end.
    async fn done(&mut self, _link: &mut Link<BoxStore>) -> league::Result<bool> {
        Ok(false)
    }

    fn store_changed(&mut self, change: &StoreChange) {
        match change {
            StoreChange::Down(e) => self.store_out_of_reach(e),
            StoreChange::Back(_) => self.store_back(),
        }
    }

    /// Below the free-space floor no set starts: said once, on the console and the
    /// pages, and again when there is room.
    fn floor_changed(&mut self, change: &league::FloorChange) {
        match change {
            league::FloorChange::Same => return,
            league::FloorChange::Low(low) => {
                eprintln!("hus serve: paused: {low}");
                self.low_space = Some(low.to_string());
            }
            league::FloorChange::Back(free) => {
                eprintln!(
                    "hus serve: {}: sets start again",
                    league::FloorChange::back_words(*free)
                );
                self.low_space = None;
            }
        }
        self.show_again();
    }
}

/// Whether `error` is a shared store out of reach, which the runner waits out (it
/// tries again every second), rather than an end: not a store's thread that stopped (an
/// operation panicked there, and no call can succeed again).
fn outage(shared: bool, error: &league::Error) -> bool {
    // A file that cannot be written here (a link in `logs/`, say) is this server's
    // error, said as it is, not a store out of reach.
    shared
        && !matches!(
            error,
            league::Error::Store(league::StoreError::ThreadStopped { .. })
                | league::Error::Io { .. }
        )
}

/// The highest round per pair of the tally's sets.
fn rounds_of(tally: &Tally) -> BTreeMap<Pair, u32> {
    let mut rounds = BTreeMap::new();
    for (a, b, _, round) in tally.seated_pairs() {
        let r = rounds.entry(pair(a, b)).or_insert(0);
        *r = (*r).max(round);
    }
    rounds
}

/// The rating history's point of these standings, after the set numbered `number`:
/// every rated bot's rating and the first-move advantage (the series `""`); none before
/// the ratings exist.
fn rating_point(number: u64, standings: &league::Standings) -> Option<league::RatingPoint> {
    let fit = standings.ratings.as_ref()?;
    let mut ratings = vec![(
        String::new(),
        fit.first_move_advantage.value,
        fit.first_move_advantage.std_error,
    )];
    for bot in &standings.bots {
        if let Some(r) = bot.rating {
            ratings.push((bot.name.clone(), r.value, r.std_error));
        }
    }
    Some(league::RatingPoint { number, ratings })
}

/// Counts a finished set and keeps it among the latest.
fn add(tally: &mut Tally, recent: &mut VecDeque<Arc<SetView>>, number: u64, set: FinishedSet) {
    tally.add(&set);
    recent.push_back(Arc::new(SetView::from_finished(number, &set)));
    while recent.len() > RECENT_SETS {
        recent.pop_front();
    }
}

/// The text of a finished set's log file, whatever its form and wherever its
/// compression is (`referee::open_finished_log`): the store keeps it compressed its own
/// way.
fn read_finished_log(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut referee::open_finished_log(path)?, &mut text)?;
    Ok(text)
}
