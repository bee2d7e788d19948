//! The SPRT gate (docs/upload.md, "The SPRT gate"): is a new version stronger than the
//! bot's active one? The two play game pairs from the league's book of openings, the
//! new version as bot A, at the league's rules and time control, cut into batches of
//! `batch` pairs (`league::gate`: batch k takes the test's openings `k * batch ..`,
//! as `hus match --sprt` would use them, and a seed of its own), each batch one
//! `play_set` without the SPRT's stop. Up to `threads` batches play at once on the
//! server (its `--concurrency`, at least 1). The server keeps the tally ([`Spread`]):
//! after each finished batch it adds the batch's pentanomial and computes the LLR with
//! the one computation of `hus match --sprt` (`referee::SprtTally`), which depends only
//! on the counts; when a bound is crossed or the bound of games is reached, the test
//! ends, and batches still running are abandoned, their results ignored.
//!
//! The logs are `gate/NEW-vs-ACTIVE/batch-K.jsonl` in the uploads' directory (each
//! passes `hus replay`); beside the directory, `NEW-vs-ACTIVE.json` holds the
//! [`GateResult`]: the test, where it stands, and the LLR after each batch (the chart
//! of the version's page), rewritten after each batch while the test plays.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use std::collections::BTreeSet;

use league::gate::{play_batch, BatchPlan, BatchPlayed};
use league::{BotConfig, Gate, GateBatches, LeagueConfig, StoreCaller};

use crate::uploads::BoxStore;
use ratings::{Decision, SprtStatus};
use referee::{Create, Dir, SprtTally};
use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;

/// The gate's directory, in the uploads' directory: the sets' logs, the bots' stderr
/// and the results.
pub const GATE_DIR: &str = "gate";

/// How the detail of a version the gate refused begins: such a version was built and
/// passed its validation, so it can still play a test asked for.
pub const REFUSED_BY_GATE: &str = "the SPRT gate";

/// Where a gate's test stands, or how it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The batches are being played.
    Running,
    /// H1 accepted: the new version is stronger (by `elo1`, at the test's error rates).
    Accepted,
    /// H0 accepted: it is not (`elo0` or less).
    Rejected,
    /// The bound of games came first. An undecided test does not accept the version.
    Undecided,
    /// A batch could not be played (`error` says why).
    Failed,
}

impl Verdict {
    /// The verdict as the JSON and the pages write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Running => "running",
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "rejected",
            Verdict::Undecided => "undecided",
            Verdict::Failed => "failed",
        }
    }
}

/// The Elo difference of the new version over the active one, from the pairs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloFigure {
    /// The estimate.
    pub value: f64,
    /// The 95% interval.
    pub low: f64,
    /// Its upper end.
    pub high: f64,
    /// The likelihood of superiority.
    pub los: f64,
}

/// A batch counted in a gate's test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchEntry {
    /// Its number k (from 0): it played the test's pairs `k * batch ..`.
    pub batch: u32,
    /// Its pairs by the new version's points: 0, 1/2, 1, 3/2, 2.
    pub pentanomial: [u64; 5],
    /// The test's LLR once it was added.
    pub llr: f64,
    /// Who played it: `server`, or the worker's name.
    pub by: String,
    /// Its log in the test's directory (`batch-K.jsonl`).
    pub log: String,
}

/// A gate's test: its settings, where it stands, the LLR after each batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    /// The new version (bot A), `NAME.vN`.
    pub candidate: String,
    /// The active version it plays (bot B).
    pub active: String,
    /// Where the test stands.
    pub verdict: Verdict,
    /// Why the set could not be played, with `Failed`.
    pub error: Option<String>,
    /// The test's hypotheses and error rates.
    pub elo0: f64,
    /// H1's Elo difference.
    pub elo1: f64,
    /// The false-positive rate.
    pub alpha: f64,
    /// The false-negative rate.
    pub beta: f64,
    /// The most games (the gate's bound).
    pub games: u32,
    /// Game pairs in a batch.
    #[serde(default)]
    pub batch: u32,
    /// The test's seed (its openings; each batch's lots from it and its number).
    pub seed: u64,
    /// Whether the games start from the league's openings (else from the start).
    pub openings: bool,
    /// Games of the batches counted so far.
    pub games_played: u32,
    /// The LLR after the last batch counted.
    pub llr: f64,
    /// The bound at or below which H0 is accepted.
    pub lower: f64,
    /// The bound at or above which H1 is accepted.
    pub upper: f64,
    /// The pairs by the new version's points in the pair: 0, 1/2, 1, 3/2, 2.
    pub pentanomial: [u64; 5],
    /// The LLR after each batch counted, in order: the chart's points.
    pub llrs: Vec<f64>,
    /// The batches counted, in the order they were.
    #[serde(default)]
    pub batches: Vec<BatchEntry>,
    /// The batches still running when the test ended: abandoned, their results
    /// ignored.
    #[serde(default)]
    pub abandoned: Vec<u32>,
    /// The Elo difference so far, once the pairs give one.
    pub elo: Option<EloFigure>,
    /// The test's directory in the gate's directory: the batches' logs
    /// (`batch-K.jsonl`) and the bots' stderr.
    pub log: String,
    /// When the test started, and when it ended (UTC).
    pub started: String,
    /// When it ended; `None` while it plays.
    pub finished: Option<String>,
}

impl GateResult {
    /// A test about to start: no pair yet; the league's seed, or a fresh one.
    fn start(candidate: &str, active: &str, league: &LeagueConfig, gate: &Gate) -> GateResult {
        let status = SprtTally::new(gate.sprt).status();
        GateResult {
            candidate: candidate.to_string(),
            active: active.to_string(),
            verdict: Verdict::Running,
            error: None,
            elo0: gate.sprt.elo0(),
            elo1: gate.sprt.elo1(),
            alpha: gate.sprt.alpha(),
            beta: gate.sprt.beta(),
            games: gate.games,
            batch: gate.batch,
            seed: league.seed.unwrap_or_else(referee::fresh_seed),
            openings: league.openings.is_some(),
            games_played: 0,
            llr: status.llr,
            lower: status.lower_bound,
            upper: status.upper_bound,
            pentanomial: [0; 5],
            llrs: Vec::new(),
            batches: Vec::new(),
            abandoned: Vec::new(),
            elo: None,
            log: String::new(),
            started: crate::uploads::now_utc(),
            finished: None,
        }
    }

    /// Whether the test accepted the new version (an undecided test did not).
    pub fn accepted(&self) -> bool {
        self.verdict == Verdict::Accepted
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.pentanomial.iter().sum()
    }

    /// The batches' plan.
    pub fn plan(&self) -> BatchPlan {
        BatchPlan {
            seed: self.seed,
            games: self.games,
            batch: self.batch,
        }
    }

    /// Counts batch `k`, played by `by`, the tally's status after it being `status` and
    /// its pairs `pairs`.
    fn count(&mut self, k: u32, played: &BatchPlayed, by: &str, tally: &SprtTally) {
        let status = tally.status();
        let pairs = tally.pairs();
        self.games_played += played.games;
        self.llr = status.llr;
        self.lower = status.lower_bound;
        self.upper = status.upper_bound;
        self.pentanomial = pairs.counts;
        self.llrs.push(status.llr);
        self.batches.push(BatchEntry {
            batch: k,
            pentanomial: played.pentanomial,
            llr: status.llr,
            by: by.to_string(),
            log: played.log.clone(),
        });
        self.elo = pairs.elo(0.95).ok().map(|e| EloFigure {
            value: e.elo,
            low: e.low,
            high: e.high,
            los: e.los,
        });
    }

    /// Why a version the gate did not accept is refused, for its author.
    pub fn refusal(&self) -> String {
        let why = match self.verdict {
            Verdict::Failed => format!(
                "a batch could not be played: {}",
                self.error.as_deref().unwrap_or("no cause given")
            ),
            Verdict::Rejected => format!(
                "H0 accepted (the LLR reached the lower bound: elo0 = {} or less rather than elo1 = {} or more)",
                self.elo0, self.elo1
            ),
            Verdict::Undecided => format!(
                "undecided at the gate's bound of {} games, and an undecided test does not accept",
                self.games
            ),
            Verdict::Accepted | Verdict::Running => self.verdict.as_str().to_string(),
        };
        format!(
            "{REFUSED_BY_GATE} against {} did not accept it: LLR {:.2} in [{:.2}, {:.2}] after {} pairs, {why}; the batches' logs: {}/{}/",
            self.active,
            self.llr,
            self.lower,
            self.upper,
            self.pairs(),
            GATE_DIR,
            self.log
        )
    }
}

/// The most bytes of a result file read back (50,000 pairs of LLRs fit many times).
const RESULT_BYTES: u64 = 16 << 20;

/// The gate's directory in the uploads' directory `dir`, made if missing, opened
/// without following a link (`dir` itself is the server's own, named by it).
fn gate_dir(dir: &Path) -> std::io::Result<Arc<Dir>> {
    Ok(Arc::new(Dir::create(dir)?.create_dir(Path::new(GATE_DIR))?))
}

/// The results of the gate's tests of version `candidate` (`NAME.vN`) in the uploads'
/// directory `dir`, oldest first: the `CANDIDATE-vs-*.json` files there, read without
/// following a link. Files that cannot be read are left out.
pub fn results_of(dir: &Path, candidate: &str) -> Vec<GateResult> {
    let Ok(gate) = Dir::open(dir).and_then(|d| d.open_dir(Path::new(GATE_DIR))) else {
        return Vec::new();
    };
    let prefix = format!("{candidate}-vs-");
    let mut found: Vec<(String, GateResult)> = gate
        .names()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| {
            let name = name.to_str()?.to_string();
            if !(name.starts_with(&prefix) && name.ends_with(".json")) {
                return None;
            }
            let mut text = String::new();
            gate.open_file(Path::new(&name))
                .ok()?
                .take(RESULT_BYTES)
                .read_to_string(&mut text)
                .ok()?;
            // A damaged file is left out.
            let result: GateResult = serde_json::from_str(&text).ok()?;
            Some((result.started.clone() + &name, result))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.into_iter().map(|(_, r)| r).collect()
}

/// What a test cut by a stop of the server says, once the server starts again.
pub const CUT_BY_A_STOP: &str = "cut by a stop of the server: its batches are over; \
a test asked for must be asked for again (the gate's own test is played again, from the start)";

/// At a server's start: every test its files in the uploads' directory `dir` say is
/// still `running` was cut by the stop (its batches are over), and is marked so:
/// [`Verdict::Failed`] with [`CUT_BY_A_STOP`]. Returns how many. Blocks (files).
pub fn close_cut_tests(dir: &Path) -> usize {
    let Ok(gate) = Dir::open(dir).and_then(|d| d.open_dir(Path::new(GATE_DIR))) else {
        return 0;
    };
    let gate = Arc::new(gate);
    let mut closed = 0;
    for name in gate.names().unwrap_or_default() {
        let Some(name) = name.to_str().map(str::to_string) else {
            continue;
        };
        if !name.ends_with(".json") {
            continue;
        }
        let mut text = String::new();
        let read = gate
            .open_file(Path::new(&name))
            .and_then(|f| f.take(RESULT_BYTES).read_to_string(&mut text));
        let Some(mut result) = read
            .ok()
            .and_then(|_| serde_json::from_str::<GateResult>(&text).ok())
        else {
            continue;
        };
        if result.verdict != Verdict::Running {
            continue;
        }
        result.verdict = Verdict::Failed;
        result.error = Some(CUT_BY_A_STOP.to_string());
        result.finished = Some(crate::uploads::now_utc());
        Saver {
            dir: gate.clone(),
            name,
        }
        .save(&result);
        closed += 1;
    }
    closed
}

/// Keeps the result of a test that could not start (a version that cannot be built
/// again on this machine) beside the others, as [`Verdict::Failed`] with `why`, under
/// a name no other result has.
pub fn failed_to_start(
    candidate: &str,
    active: &str,
    league: &LeagueConfig,
    gate: &Gate,
    dir: &Path,
    why: String,
) -> GateResult {
    let mut result = GateResult::start(candidate, active, league, gate);
    result.verdict = Verdict::Failed;
    result.error = Some(why);
    result.finished = Some(crate::uploads::now_utc());
    let gate = match gate_dir(dir) {
        Ok(gate) => gate,
        Err(e) => {
            tracing::warn!("gate: cannot open {}/{GATE_DIR}: {e}", dir.display());
            return result;
        }
    };
    if let Some(stem) = reserve(&gate, &format!("{candidate}-vs-{active}")) {
        result.log = stem.clone();
        Saver {
            dir: gate,
            name: format!("{stem}.json"),
        }
        .save(&result);
    }
    result
}

/// A stem no other test has in the gate's directory `gate`, `STEM` or `STEM-N`: its
/// result file `STEM.json` is created (empty) to hold it, and no directory has its
/// name. `None` after 999 tries or when the directory cannot be written.
fn reserve(gate: &Dir, stem: &str) -> Option<String> {
    (1..1000)
        .map(|n| match n {
            1 => stem.to_string(),
            n => format!("{stem}-{n}"),
        })
        .find(|s| {
            matches!(gate.exists(Path::new(s)), Ok(false))
                && gate
                    .create_file(Path::new(&format!("{s}.json")), Create::New, None)
                    .is_ok()
        })
}

/// Writes a result file in the gate's directory.
struct Saver {
    dir: Arc<Dir>,
    name: String,
}

impl Saver {
    /// The result file, written whole to a new file and renamed over the old one, so a
    /// reader never sees half of it; no link is followed.
    fn save(&self, result: &GateResult) {
        let written = serde_json::to_string_pretty(result)
            .map_err(std::io::Error::other)
            .and_then(|text| {
                let temporary = format!("{}.new", self.name);
                let mut file =
                    self.dir
                        .create_file(Path::new(&temporary), Create::Replace, None)?;
                file.write_all(text.as_bytes())?;
                file.write_all(b"\n")?;
                self.dir
                    .rename(Path::new(&temporary), Path::new(&self.name))
            });
        if let Err(e) = written {
            tracing::warn!(
                "gate: cannot write {}: {e}",
                self.dir.join(&self.name).display()
            );
        }
    }
}

/// Whether a test asked for through the API is running (one at a time).
static ASKED: AtomicBool = AtomicBool::new(false);

/// The right to run the one test the API may run at a time; given back when dropped.
pub struct AskedSlot(());

impl AskedSlot {
    /// The slot, unless a test asked for through the API is running.
    pub fn take() -> Option<AskedSlot> {
        ASKED
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| AskedSlot(()))
    }
}

impl Drop for AskedSlot {
    fn drop(&mut self) {
        ASKED.store(false, Ordering::Release);
    }
}

/// The tally of a gate's test and which batches are out: the stop logic, apart from
/// who plays the batches. Batches are handed out in order ([`Spread::next_batch`]);
/// a finished one is counted ([`Spread::finish`]) unless the test has ended; the test
/// ends when the LLR crosses a bound or every batch of its bound of games is counted.
#[derive(Clone, Debug)]
pub struct Spread {
    plan: BatchPlan,
    tally: SprtTally,
    next: u32,
    running: BTreeSet<u32>,
}

impl Spread {
    /// No batch out yet.
    pub fn new(plan: BatchPlan, sprt: ratings::Sprt) -> Spread {
        Spread {
            plan,
            tally: SprtTally::new(sprt),
            next: 0,
            running: BTreeSet::new(),
        }
    }

    /// The next batch to play, now out; `None` once the test has decided or every
    /// batch is out.
    pub fn next_batch(&mut self) -> Option<u32> {
        if self.tally.decided() || self.next >= self.plan.batches() {
            return None;
        }
        let k = self.next;
        self.next += 1;
        self.running.insert(k);
        Some(k)
    }

    /// Counts batch `k`'s pairs: the test's status after them, or `None` when the
    /// batch is not out (already counted, never handed out) or the test has decided
    /// (a batch still running then is abandoned: its result is ignored).
    pub fn finish(&mut self, k: u32, pentanomial: [u64; 5]) -> Option<SprtStatus> {
        if self.tally.decided() || !self.running.remove(&k) {
            return None;
        }
        self.tally.add_pairs(pentanomial)
    }

    /// Whether the test has ended: decided, or every batch counted.
    pub fn ended(&self) -> bool {
        self.tally.decided() || (self.next >= self.plan.batches() && self.running.is_empty())
    }

    /// The batches out and not counted (abandoned once the test has ended).
    pub fn running(&self) -> Vec<u32> {
        self.running.iter().copied().collect()
    }

    /// The tally.
    pub fn tally(&self) -> &SprtTally {
        &self.tally
    }

    /// The verdict once ended.
    pub fn verdict(&self) -> Verdict {
        match self.tally.status().decision {
            Decision::AcceptH1 => Verdict::Accepted,
            Decision::AcceptH0 => Verdict::Rejected,
            Decision::Continue => Verdict::Undecided,
        }
    }
}

/// Plays the gate's test of `candidate` (the new version, bot A) against `active` (the
/// bot's active version, bot B) with the league's rules, time control, openings and
/// seed (a fresh one when the league file gives none): at most `gate.games` games in
/// batches of `gate.batch` pairs, up to `threads` (at least 1) batches at once on this
/// server, until the SPRT decides; `dir` is the uploads' directory. Never fails: a
/// test whose batch cannot be played is [`Verdict::Failed`].
pub async fn gate(
    candidate: &BotConfig,
    active: &BotConfig,
    league: &LeagueConfig,
    gate: &Gate,
    dir: &Path,
    threads: usize,
) -> GateResult {
    gate_with(
        candidate,
        active,
        league,
        gate,
        dir,
        &Players {
            threads,
            store: None,
        },
    )
    .await
}

/// Who plays a gate's batches.
#[derive(Clone)]
pub struct Players {
    /// Batches this server plays at once (its `--concurrency`); without a store, at
    /// least 1.
    pub threads: usize,
    /// A shared store (PostgreSQL): the batches are queued in it (`gate_batches`) for
    /// the workers and this server's threads alike.
    pub store: Option<StoreCaller<BoxStore>>,
}

/// The name under which this server's threads claim batches from the store.
pub const SERVER_PLAYER: &str = "server";

/// The lease of a batch this server's threads claim: a server stopped in a test clears
/// the store's batches at its next start, so the lease only has to outlast the batch.
const SERVER_LEASE_S: f64 = 24.0 * 3600.0;

/// How often the server reads the store's batches of a test, and how often its idle
/// threads look for one.
const STORE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// [`gate`], its batches played by `players`.
pub async fn gate_with(
    candidate: &BotConfig,
    active: &BotConfig,
    league: &LeagueConfig,
    gate: &Gate,
    dir: &Path,
    players: &Players,
) -> GateResult {
    let threads = players.threads;
    let mut result = GateResult::start(&candidate.name, &active.name, league, gate);
    let failed =
        |why: String| failed_to_start(&candidate.name, &active.name, league, gate, dir, why);
    let logs = match gate_dir(dir) {
        Ok(logs) => logs,
        Err(e) => return failed(format!("cannot open {}/{GATE_DIR}: {e}", dir.display())),
    };
    let Some(stem) = reserve(&logs, &format!("{}-vs-{}", candidate.name, active.name)) else {
        return failed("cannot reserve the test's result file".into());
    };
    result.log = stem.clone();
    let file = Saver {
        dir: logs.clone(),
        name: format!("{stem}.json"),
    };
    let batches = match logs.create_dir(Path::new(&stem)) {
        Ok(batches) => Arc::new(batches),
        Err(e) => {
            result.verdict = Verdict::Failed;
            result.error = Some(format!("cannot make {GATE_DIR}/{stem}: {e}"));
            result.finished = Some(crate::uploads::now_utc());
            file.save(&result);
            return result;
        }
    };
    file.save(&result);
    if let Some(store) = &players.store {
        let shared = Arc::new((league.clone(), candidate.clone(), active.clone()));
        on_store(store.clone(), shared, threads, gate, batches, &file, result).await
    } else {
        on_threads(
            candidate, active, league, gate, threads, batches, &file, result,
        )
        .await
    }
}

/// The batches played on this server's threads alone, up to `threads` at once.
#[allow(clippy::too_many_arguments)]
async fn on_threads(
    candidate: &BotConfig,
    active: &BotConfig,
    league: &LeagueConfig,
    gate: &Gate,
    threads: usize,
    batches: Arc<Dir>,
    file: &Saver,
    mut result: GateResult,
) -> GateResult {
    let plan = result.plan();
    let mut spread = Spread::new(plan, gate.sprt);
    let shared = Arc::new((league.clone(), candidate.clone(), active.clone()));
    let mut out = JoinSet::new();
    loop {
        while out.len() < threads.max(1) {
            let Some(k) = spread.next_batch() else {
                break;
            };
            let (shared, batches) = (shared.clone(), batches.clone());
            out.spawn(async move {
                let (league, a, b) = &*shared;
                (k, play_batch(&plan, k, league, a, b, &batches).await)
            });
        }
        if spread.ended() {
            break;
        }
        let Some(joined) = out.join_next().await else {
            break;
        };
        match joined {
            Ok((k, Ok(played))) => {
                if spread.finish(k, played.pentanomial).is_some() {
                    result.count(k, &played, "server", spread.tally());
                    file.save(&result);
                }
            }
            Ok((_, Err(e))) => {
                result.verdict = Verdict::Failed;
                result.error = Some(e);
                break;
            }
            Err(e) => {
                result.verdict = Verdict::Failed;
                result.error = Some(format!("a batch's task ended: {e}"));
                break;
            }
        }
    }
    // Batches still running are abandoned: their bots are killed as their sets drop.
    result.abandoned = spread.running();
    out.shutdown().await;
    if result.verdict == Verdict::Running {
        result.verdict = spread.verdict();
    }
    result.finished = Some(crate::uploads::now_utc());
    file.save(&result);
    result
}

/// One of this server's threads on a store's test: claims the test's queued batches
/// and plays them until the test ends (its task is aborted then).
async fn server_player(
    store: StoreCaller<BoxStore>,
    test: String,
    plan: BatchPlan,
    shared: Arc<(LeagueConfig, BotConfig, BotConfig)>,
    batches: Arc<Dir>,
) {
    loop {
        let t = test.clone();
        let claimed = store
            .call(move |s| {
                let now = s.gate_clock()?;
                s.claim_gate_batch(SERVER_PLAYER, Some(&t), now, SERVER_LEASE_S)
            })
            .await;
        let claimed = match claimed {
            Ok(Some(claimed)) => claimed,
            // None queued now: a worker's batch may come back when its lease runs out.
            Ok(None) => {
                tokio::time::sleep(STORE_POLL * 4).await;
                continue;
            }
            Err(e) => {
                tracing::warn!("gate: cannot claim a batch of {test}: {e}");
                tokio::time::sleep(STORE_POLL).await;
                continue;
            }
        };
        let k = claimed.batch.batch;
        let (league, a, b) = &*shared;
        let done = match play_batch(&plan, k, league, a, b, &batches).await {
            Ok(played) => league::BatchDone {
                pentanomial: played.pentanomial,
                games: played.games,
                log: None,
                error: None,
            },
            Err(e) => league::BatchDone {
                pentanomial: [0; 5],
                games: 0,
                log: None,
                error: Some(e),
            },
        };
        let (t, attempt) = (test.clone(), claimed.attempt);
        if let Err(e) = store
            .call(move |s| s.finish_gate_batch(&t, k, attempt, &done))
            .await
        {
            tracing::warn!("gate: cannot record batch {k} of {test}: {e}");
        }
    }
}

/// Writes batch `k`'s log, played by a worker and kept in the store, into the test's
/// directory as `batch-K.jsonl`, replacing what is there (never following a link).
async fn fetch_log(
    store: &StoreCaller<BoxStore>,
    test: &str,
    k: u32,
    batches: &Arc<Dir>,
) -> Result<String, String> {
    let t = test.to_string();
    let packed = store
        .call(move |s| s.gate_batch_log(&t, k))
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("the store has no log of batch {k}"))?;
    let dir = batches.clone();
    tokio::task::spawn_blocking(move || {
        let plain = league::gate::unpack_log(&packed).map_err(|e| e.to_string())?;
        let name = format!("{}.jsonl", league::gate::batch_stem(k));
        let mut out = dir
            .create_file(Path::new(&name), Create::Replace, None)
            .map_err(|e| format!("cannot write {name}: {e}"))?;
        out.write_all(&plain)
            .map_err(|e| format!("cannot write {name}: {e}"))?;
        Ok(name)
    })
    .await
    .map_err(|e| e.to_string())?
}

/// The batches queued in the shared store (`gate_batches`), played by the workers and
/// up to `threads` threads of this server; the server reads the ended ones every
/// [`STORE_POLL`], counts them in the order they ended, and ends the test in the store
/// (which drops the batches still out) once it has ended.
async fn on_store(
    store: StoreCaller<BoxStore>,
    shared: Arc<(LeagueConfig, BotConfig, BotConfig)>,
    threads: usize,
    gate: &Gate,
    batches: Arc<Dir>,
    file: &Saver,
    mut result: GateResult,
) -> GateResult {
    let plan = result.plan();
    let test = result.log.clone();
    let mut spread = Spread::new(plan, gate.sprt);
    let mut queue = Vec::new();
    while let Some(k) = spread.next_batch() {
        queue.push(league::GateBatch {
            test: test.clone(),
            batch: k,
            candidate: result.candidate.clone(),
            active: result.active.clone(),
            seed: plan.seed,
            games: plan.games,
            pairs: plan.batch,
        });
    }
    if let Err(e) = store.call(move |s| s.queue_gate_batches(&queue)).await {
        result.verdict = Verdict::Failed;
        result.error = Some(format!("cannot queue the batches in the store: {e}"));
        result.finished = Some(crate::uploads::now_utc());
        file.save(&result);
        return result;
    }
    let mut players = JoinSet::new();
    for _ in 0..threads {
        players.spawn(server_player(
            store.clone(),
            test.clone(),
            plan,
            shared.clone(),
            batches.clone(),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    while !spread.ended() && result.verdict == Verdict::Running {
        tokio::time::sleep(STORE_POLL).await;
        let t = test.clone();
        let rows = match store.call(move |s| s.gate_batch_rows(&t)).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!("gate: cannot read the batches of {test}: {e}");
                continue;
            }
        };
        let mut ended: Vec<&league::GateBatchRow> = rows
            .iter()
            .filter(|r| r.ended.is_some() && !seen.contains(&r.batch))
            .collect();
        ended.sort_by_key(|r| r.ended);
        for row in ended {
            seen.insert(row.batch);
            if row.state == league::BatchState::Failed {
                result.verdict = Verdict::Failed;
                result.error = Some(format!(
                    "batch {} ({}): {}",
                    row.batch, row.worker, row.error
                ));
                break;
            }
            if spread.finish(row.batch, row.pentanomial).is_none() {
                continue;
            }
            let log = if row.worker == SERVER_PLAYER {
                Ok(format!("{}.jsonl", league::gate::batch_stem(row.batch)))
            } else {
                fetch_log(&store, &test, row.batch, &batches).await
            };
            let log = log.unwrap_or_else(|e| {
                tracing::warn!("gate: batch {} of {test}: {e}", row.batch);
                String::new()
            });
            let played = BatchPlayed {
                pentanomial: row.pentanomial,
                games: row.games,
                log,
            };
            result.count(row.batch, &played, &row.worker, spread.tally());
            file.save(&result);
            if spread.ended() {
                break;
            }
        }
        out = rows
            .iter()
            .filter(|r| r.state == league::BatchState::Running && !seen.contains(&r.batch))
            .map(|r| r.batch)
            .collect();
    }
    // The batches running then are abandoned: the test's rows go, and a player still
    // on one can neither renew it nor record it.
    result.abandoned = out;
    players.shutdown().await;
    let t = test.clone();
    if let Err(e) = store.call(move |s| s.end_gate_test(&t)).await {
        tracing::warn!("gate: cannot end {test} in the store: {e}");
    }
    if result.verdict == Verdict::Running {
        result.verdict = spread.verdict();
    }
    result.finished = Some(crate::uploads::now_utc());
    file.save(&result);
    result
}

#[cfg(test)]
mod tests;
