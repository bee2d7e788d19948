//! The set pool: how `hus league`, `hus worker` and `hus serve` play their sets. A
//! runner claims a set (from its store, its lease, or its pairing), hands it to its
//! [`SetPool`], which plays it through [`play_claimed`] on a thread of its own, and
//! takes its [`Ending`] back with [`SetPool::next_ended`] to record it or put it back.
//! Every set has its own stop ([`SetPool::stop`]: a worker that lost a set's lease) and
//! all are stopped at once by [`SetPool::stop_all`] (a signal, a failure); a runner
//! leaves by [`SetPool::shutdown`], which stops what still plays and waits for every
//! set's thread, so that no set outlives its runner whatever way the runner's loop was
//! left (the shutdown in one direction of mini-redis's listener).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use referee::{
    play_set, Dir, Entrant, FilePlace, Lineup, LogWriter, Member, Record, RecordSink, SetConfig,
    Side, Team,
};
use tokio::sync::{mpsc, watch};

use crate::file::{BotConfig, LeagueConfig, Transport};
use crate::log_place::{LogForm, LogPlace};
use crate::set_files::{open_logs, SetFiles};
use crate::store::{ClaimedSet, FaultRow, GameRow, SetId, SetOutcome};

/// What one set's task ends with.
pub enum Ending {
    /// Played to its end.
    Finished(SetOutcome),
    /// Cut off by a stop; its log ends with `aborted`.
    Stopped,
    /// Could not be played (a bot that cannot be started, a log that cannot be
    /// written, a set that broke off). When nothing was played
    /// ([`referee::SetError::nothing_played`]: a bot that cannot be started,
    /// [`referee::SetError::CannotStart`]), its log was removed.
    Failed(SetFailure),
}

/// Why a set of the pool could not be played: one variant per cause. Each message holds
/// its cause, and none is a `source` (as [`crate::Error`]'s).
#[derive(Debug, thiserror::Error)]
pub enum SetFailure {
    /// `play_set` stopped: a bot that cannot be started, a log that cannot be written.
    #[error(transparent)]
    Set(#[from] referee::SetError),
    /// The set's log file cannot be created.
    #[error("{0}")]
    Log(String),
    /// The set's thread or its runtime cannot be started, or its thread ended without
    /// a result (a panic).
    #[error("{0}")]
    Thread(String),
    /// The set names a bot the league file does not have (a store that holds another
    /// league's sets).
    #[error("no bot named {bot}{} in the league file", team.as_ref().map(|t| format!(" (of team {t})")).unwrap_or_default())]
    NoSuchBot {
        /// The bot's name.
        bot: String,
        /// The team it is a member of, if any.
        team: Option<String>,
    },
    /// A remote bot with no link to play over: only `hus serve` with a bot port
    /// (`--bot-listen`) plays remote bots.
    #[error("{bot} is a remote bot, and this runner has no bot port for it to connect to")]
    NoLink {
        /// The bot's name.
        bot: String,
    },
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
    /// port); a remote bot without one cannot play ([`SetFailure::NoLink`]).
    pub links: HashMap<String, Arc<dyn referee::Connect>>,
    /// Whether a finished set's log is compressed (`STEM.jsonl.zst`,
    /// `referee::compress_log`, off the next set's path: `after_set`): a league's and a
    /// server's are; a worker's are not (it
    /// sends the log to the store, which keeps it compressed, and deletes its copy).
    pub compress_logs: bool,
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
                    b.set_nice(nice);
                    (b.name.clone(), b)
                })
                .collect(),
            referee: referee::referee_version(),
            links: HashMap::new(),
            compress_logs: true,
        }
    }
}

/// A set's extra sink, given to its thread: every record goes to it after the log has
/// it (`hus serve`'s live pages).
pub type Tap = Box<dyn RecordSink + Send>;

/// The sets being played, each on a thread of its own with a single-threaded runtime,
/// as `hus match` runs its one set: a set's tasks (the set and its bots' readers) then
/// hand each ply to each other on one thread, with no wake-up of another thread in
/// between, and the sets are independent threads that the kernel spreads over the
/// cores. (On a multi-threaded runtime the sets shared its worker threads and a ply
/// crossed threads: docs/league.md, Speed.)
///
/// A set's thread inherits the scheduling priority of the thread that starts it (the
/// referee's, raised above its bots' before the runner's runtime started), and its
/// bots inherit it in turn, lowered again for them by their limits.
pub struct SetPool {
    running: HashMap<(SetId, u32), Running>,
    ended_tx: mpsc::UnboundedSender<(ClaimedSet, Ending)>,
    ended_rx: mpsc::UnboundedReceiver<(ClaimedSet, Ending)>,
    /// The threads whose set has ended, not joined yet (each has sent its ending, and
    /// only returns).
    ended: Vec<JoinHandle<()>>,
    /// Once every set was stopped: why; a set started afterwards is stopped at once.
    stopping: Option<&'static str>,
}

/// A set in the pool.
struct Running {
    set: ClaimedSet,
    stop: watch::Sender<Option<&'static str>>,
    thread: Option<JoinHandle<()>>,
}

impl Default for SetPool {
    fn default() -> SetPool {
        SetPool::new()
    }
}

impl SetPool {
    /// An empty pool.
    pub fn new() -> SetPool {
        let (ended_tx, ended_rx) = mpsc::unbounded_channel();
        SetPool {
            running: HashMap::new(),
            ended_tx,
            ended_rx,
            ended: Vec::new(),
            stopping: None,
        }
    }

    /// How many sets are in the pool (a set stopped counts until its ending is taken).
    pub fn len(&self) -> usize {
        self.running.len()
    }

    /// No set in the pool.
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// The sets in the pool.
    pub fn sets(&self) -> impl Iterator<Item = &ClaimedSet> {
        self.running.values().map(|r| &r.set)
    }

    /// Starts `set` on a thread of its own, played by [`play_claimed`] with `shared`
    /// and `tap`; its ending comes from [`SetPool::next_ended`]. A set whose thread
    /// cannot start, or ends without an ending, has failed (`Ending::Failed`).
    pub fn start(&mut self, set: ClaimedSet, shared: Arc<Shared>, tap: Option<Tap>) {
        self.ended.retain(|t| !t.is_finished());
        let (stop, mut stopped) = watch::channel(self.stopping);
        let mut report = Report {
            to: self.ended_tx.clone(),
            set: Some(set.clone()),
        };
        let played = set.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("set {}", set.key))
            .spawn(move || {
                let mut tap = tap;
                let ending = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => {
                        let ending = runtime.block_on(play_claimed(
                            &played,
                            &shared,
                            &mut stopped,
                            tap.as_mut()
                                .map(|t| &mut **t as &mut (dyn RecordSink + Send)),
                        ));
                        // The set's last tasks (its bots' readers) end before its
                        // ending is known: its bots are gone when the runner hears it.
                        drop(runtime);
                        ending
                    }
                    Err(e) => Ending::Failed(SetFailure::Thread(format!(
                        "cannot start a set's runtime: {e}"
                    ))),
                };
                report.send(ending);
            });
        let thread = match spawned {
            Ok(thread) => Some(thread),
            Err(e) => {
                // The closure, and the report in it, are gone: the ending is sent here.
                let _ = self.ended_tx.send((
                    set.clone(),
                    Ending::Failed(SetFailure::Thread(format!(
                        "cannot start a set's thread: {e}"
                    ))),
                ));
                None
            }
        };
        self.running
            .insert((set.id, set.attempts), Running { set, stop, thread });
    }

    /// Stops one set (its attempt `set.attempts`): its log ends with `aborted`, `why`
    /// in it, and its bots are killed; its ending (`Ending::Stopped`) still comes from
    /// [`SetPool::next_ended`]. A set not in the pool is ignored.
    pub fn stop(&mut self, set: &ClaimedSet, why: &'static str) {
        if let Some(r) = self.running.get(&(set.id, set.attempts)) {
            r.stop
                .send_if_modified(|stop| stop.replace(stop.unwrap_or(why)).is_none());
        }
    }

    /// Stops every set in the pool, and every set started from now on, as
    /// [`SetPool::stop`] stops one.
    pub fn stop_all(&mut self, why: &'static str) {
        self.stopping.get_or_insert(why);
        for r in self.running.values() {
            r.stop
                .send_if_modified(|stop| stop.replace(stop.unwrap_or(why)).is_none());
        }
    }

    /// The next set to end, with its ending; `None` at once when the pool is empty.
    /// Cancel-safe (a `select!` branch): an ending not taken stays for the next call.
    pub async fn next_ended(&mut self) -> Option<(ClaimedSet, Ending)> {
        if self.running.is_empty() {
            return None;
        }
        // Never `None`: the pool holds a sender.
        let (set, ending) = self.ended_rx.recv().await?;
        if let Some(r) = self.running.remove(&(set.id, set.attempts)) {
            self.ended.extend(r.thread);
        }
        Some((set, ending))
    }

    /// Stops the sets still in the pool (`why` in their logs), waits for every set's
    /// thread to end and for the finished sets' compressions (`after_set`), and returns
    /// the endings no one took. A runner calls it on its
    /// way out, whatever way its loop ended.
    pub async fn shutdown(mut self, why: &'static str) -> Vec<(ClaimedSet, Ending)> {
        self.stop_all(why);
        let mut left = Vec::new();
        while let Some(ended) = self.next_ended().await {
            left.push(ended);
        }
        // Each of these threads has sent its ending and only returns.
        for thread in self.ended.drain(..) {
            let _ = thread.join();
        }
        // The finished sets' compressions, so that none is cut off by the end of the
        // process (which would leave a plain log: whole, but larger).
        let _ = tokio::task::spawn_blocking(crate::after_set::wait_for_compressions).await;
        left
    }
}

impl Drop for SetPool {
    /// Only for a runner that never reached its `shutdown` (a panic unwinding): stops
    /// the sets still running and waits for their threads, so that their logs end with
    /// `aborted` and their bots are killed.
    fn drop(&mut self) {
        self.stop_all("the end of its runner");
        for r in self.running.values_mut() {
            if let Some(thread) = r.thread.take() {
                let _ = thread.join();
            }
        }
        for thread in self.ended.drain(..) {
            let _ = thread.join();
        }
        crate::after_set::wait_for_compressions();
    }
}

/// Sends a set's ending to its pool, once: a thread that ends without sending one (a
/// panic) sends `Ending::Failed` as it unwinds.
struct Report {
    to: mpsc::UnboundedSender<(ClaimedSet, Ending)>,
    set: Option<ClaimedSet>,
}

impl Report {
    fn send(&mut self, ending: Ending) {
        if let Some(set) = self.set.take() {
            let _ = self.to.send((set, ending));
        }
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        self.send(Ending::Failed(SetFailure::Thread(
            "a set's thread ended without a result".to_string(),
        )));
    }
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
    // The logs' directory, reached from the league's without following a link, and
    // held open for the set's log and its compression.
    let logs = match open_logs(&shared.logs) {
        Ok(logs) => Arc::new(logs),
        Err(e) => {
            return Ending::Failed(SetFailure::Log(format!(
                "cannot open the logs directory {}: {e}",
                shared.logs.display()
            )))
        }
    };
    let (log, stem) = match LogWriter::create_in(&logs, &stem) {
        Ok(created) => created,
        Err(e) => return Ending::Failed(SetFailure::Log(format!("{e:#}"))),
    };
    let files = SetFiles::new(&shared.logs, &stem);
    let names = [&set.key.a, &set.key.b];
    let lineups =
        match Side::BOTH.map(|side| lineup(shared, &logs, &files, side, names[side.index()])) {
            [Ok(a), Ok(b)] => [a, b],
            [Err(e), _] | [_, Err(e)] => return Ending::Failed(e),
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
        outcome: SetOutcome::new(LogPlace::file(&stem, LogForm::Plain)),
        first: Side::A,
        tap,
    };
    let result = tokio::select! {
        result = play_set(&set_config, lineups.into(), &shared.referee, &mut sink) => Some(result),
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
        // A bot that cannot start: the log holds only its header, and goes (so does a log
        // whose header could not be written); a set that broke off keeps what it played.
        Some(Err(e)) => {
            if e.nothing_played() {
                sink.log.discard_unstarted(&[]);
            }
            Ending::Failed(e.into())
        }
        Some(Ok(end)) => {
            // A quiet bot's stderr file is empty: a finished set keeps only its log then
            // (a set stopped or failed keeps every file, for the next attempt to set
            // aside).
            files.remove_empty_stderr();
            let Collector {
                log, mut outcome, ..
            } = sink;
            // The log is whole: closed, then compressed with the bots' stderr files
            // (at most 1 MiB a bot, mostly text) off the next set's path
            // (`after_set`). The store names its compressed form at once: until that
            // is whole (or if it cannot be: a full disk costs the space, never the
            // log), readers find the plain file.
            drop(log);
            if shared.compress_logs {
                outcome.log = LogPlace::file(&stem, LogForm::Zstd);
                crate::after_set::compress_later(logs.clone(), files);
            }
            outcome.points = end.points.into();
            outcome.winner = end.winner;
            Ending::Finished(outcome)
        }
    }
}

/// Side `side` of a set, the file's bot or team `name`: a bot, or a team of the file's
/// bots (each member its own process and stderr file, `STEM.a1.stderr`...), exactly as
/// `hus match --team-a` builds them.
fn lineup(
    shared: &Shared,
    logs: &Arc<Dir>,
    files: &SetFiles,
    side: Side,
    name: &str,
) -> Result<Lineup, SetFailure> {
    // A bot's stderr file: its name in the logs' directory, opened through it as the bot
    // starts (never through a link put in place of `logs/` meanwhile).
    let stderr = |member: Option<usize>| {
        let path = files.stderr(side, member);
        match path.file_name() {
            Some(name) => FilePlace::In(logs.clone(), PathBuf::from(name)),
            None => FilePlace::Path(path),
        }
    };
    // A remote bot plays over its link, as a member of a team too.
    let entrant = |bot: &BotConfig, member: Option<usize>| match &bot.transport {
        Transport::Process { spec, limits } => Ok(Entrant::Process {
            spec: spec.clone(),
            stderr: stderr(member),
            limits: limits.clone(),
            version: bot.version.clone(),
        }),
        Transport::Link { .. } => match shared.links.get(&bot.name) {
            Some(connect) => Ok(Entrant::Link {
                command: bot.command(),
                connect: connect.clone(),
                time: None,
            }),
            None => Err(SetFailure::NoLink {
                bot: bot.name.clone(),
            }),
        },
    };
    let Some(team) = shared.config.team(name) else {
        let bot = shared.bots.get(name).ok_or_else(|| SetFailure::NoSuchBot {
            bot: name.to_string(),
            team: None,
        })?;
        return Ok(Lineup::from(entrant(bot, None)?));
    };
    let mut members = Vec::with_capacity(team.members.len());
    for (i, m) in team.members.iter().enumerate() {
        let bot = shared.bots.get(m).ok_or_else(|| SetFailure::NoSuchBot {
            bot: m.clone(),
            team: Some(name.to_string()),
        })?;
        members.push(Member {
            name: m.clone(),
            entrant: entrant(bot, Some(i))?,
        });
    }
    Ok(Lineup::Team(Team {
        name: name.to_string(),
        members,
    }))
}

/// The sink of a league's set: the log first (as `hus match` writes it), then what the
/// store keeps.
struct Collector<'t> {
    log: LogWriter,
    outcome: SetOutcome,
    first: Side,
    tap: Option<&'t mut (dyn RecordSink + Send)>,
}

impl RecordSink for Collector<'_> {
    fn record(&mut self, record: &Record) -> Result<(), referee::WriteError> {
        self.log.record(record)?;
        if let Some(tap) = self.tap.as_mut() {
            let _ = tap.record(record);
        }
        let o = &mut self.outcome;
        match record {
            Record::GameStart(g) => self.first = g.first,
            Record::Move(m) => {
                let seat = m.bot.index();
                o.moves[seat] += 1;
                o.move_ms[seat] += m.ms;
            }
            Record::Fault(f) => o.faults.push(FaultRow {
                game: f.game,
                ply: f.ply,
                bot: f.bot,
                kind: f.kind,
                detail: f.detail.clone(),
            }),
            Record::GameEnd(g) => o.games.push(GameRow {
                game: g.game,
                first: self.first,
                winner: g.winner,
                points: g.points.into(),
                reason: g.reason,
                plies: g.plies,
                double: g.double,
                faulted: g.faulted.clone(),
            }),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A league of a bot the league starts and a remote one.
    fn shared(dir: &std::path::Path) -> Shared {
        let text = format!(
            "[[bot]]\nname = \"near\"\ncommand = \"python3 near.py\"\n\n\
             [[bot]]\nname = \"far\"\nremote = true\ntoken_sha256 = \"{}\"\n",
            "0".repeat(64)
        );
        let config = LeagueConfig::parse(&dir.join("league.toml"), &text).expect("a league");
        std::fs::create_dir(dir.join("logs")).expect("logs");
        Shared::new(&config, dir.join("logs"), Some(5))
    }

    /// A bot the league starts plays as a process at the referee's nice value; a remote
    /// bot plays only over a link, and without one its set fails saying so (it is never
    /// started as a program named `remote`).
    #[test]
    fn a_process_is_started_and_a_remote_bot_needs_its_link() {
        let dir = tempfile::tempdir().expect("tmp");
        let shared = shared(dir.path());
        let logs = Arc::new(open_logs(&shared.logs).expect("logs"));
        let files = SetFiles::new(&shared.logs, "r1-near-vs-far");
        let near = match lineup(&shared, &logs, &files, Side::A, "near") {
            Ok(Lineup::Bot(entrant)) => *entrant,
            Ok(Lineup::Team(_)) => panic!("a team"),
            Err(e) => panic!("{e}"),
        };
        let Entrant::Process {
            spec,
            limits,
            version,
            ..
        } = near
        else {
            panic!("not a process");
        };
        assert_eq!(spec.argv, ["python3", "near.py"]);
        assert_eq!(limits.nice, Some(5));
        assert_eq!(version, None, "a league file's bot is no uploaded version");
        match lineup(&shared, &logs, &files, Side::B, "far") {
            Err(e @ SetFailure::NoLink { .. }) => assert_eq!(
                e.to_string(),
                "far is a remote bot, and this runner has no bot port for it to connect to"
            ),
            Err(e) => panic!("expected NoLink, got {e}"),
            Ok(_) => panic!("expected NoLink, got a lineup"),
        }
    }

    /// A bot that is an uploaded version plays as its process, and the version goes to
    /// the set (which writes it in the log's header).
    #[test]
    fn an_uploaded_versions_entrant_carries_its_version() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut shared = shared(dir.path());
        let uploaded = referee::UploadedVersion {
            bot: "near".into(),
            number: 2,
            sha256: "ab".repeat(32),
        };
        let mut bot = shared.bots["near"].clone();
        bot.name = "near.v2".into();
        bot.version = Some(uploaded.clone());
        shared.bots.insert(bot.name.clone(), bot);
        let logs = Arc::new(open_logs(&shared.logs).expect("logs"));
        let files = SetFiles::new(&shared.logs, "r1-near.v2-vs-near");
        match lineup(&shared, &logs, &files, Side::A, "near.v2") {
            Ok(Lineup::Bot(entrant)) => match *entrant {
                Entrant::Process { version, .. } => assert_eq!(version, Some(uploaded)),
                Entrant::Link { .. } => panic!("not a process"),
            },
            Ok(Lineup::Team(_)) => panic!("a team"),
            Err(e) => panic!("{e}"),
        }
    }
}
