//! The SPRT gate (docs/upload.md, "The SPRT gate"): is a new version stronger than the
//! bot's active one? The two play ONE set, `play_set` with `SetConfig::sprt`, exactly
//! as `hus match --sprt` plays it: game pairs with the first mover swapped, each pair
//! from an opening of the league's book (`referee::openings_for_set`; without a book,
//! from the starting position), at the league's rules and time control, the new
//! version as bot A, until the pentanomial SPRT decides or the gate's bound of games
//! is reached. The test is sequential (it decides after each pair, on every pair so
//! far), so it is one set on the server, not sets spread over the workers.
//!
//! The log is `gate/NEW-vs-ACTIVE.jsonl` in the uploads' directory (it passes `hus
//! replay`, which checks the test's stop and figures); beside it, `NEW-vs-ACTIVE.json`
//! holds the [`GateResult`]: the test, where it stands, and the LLR after each pair
//! (the chart of the version's page), rewritten after each pair while the set plays.
//! The LLR is the one computation of `hus match --sprt` and `hus replay`
//! (`referee::SprtTally`) fed with the log's games.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use league::{BotConfig, Gate, LeagueConfig, Transport};
use ratings::Decision;
use referee::{
    play_set, Create, Dir, Entrant, FilePlace, LogWriter, Record, RecordSink, SetConfig, SprtTally,
    WriteError,
};
use serde::{Deserialize, Serialize};

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
    /// The set is being played.
    Running,
    /// H1 accepted: the new version is stronger (by `elo1`, at the test's error rates).
    Accepted,
    /// H0 accepted: it is not (`elo0` or less).
    Rejected,
    /// The bound of games came first. An undecided test does not accept the version.
    Undecided,
    /// The set could not be played (`error` says why).
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

/// A gate's test: its settings, where it stands, the LLR after each pair.
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
    /// The set's seed (its lots and openings).
    pub seed: u64,
    /// Whether the games start from the league's openings (else from the start).
    pub openings: bool,
    /// Games played so far.
    pub games_played: u32,
    /// The LLR after the last whole pair.
    pub llr: f64,
    /// The bound at or below which H0 is accepted.
    pub lower: f64,
    /// The bound at or above which H1 is accepted.
    pub upper: f64,
    /// The pairs by the new version's points in the pair: 0, 1/2, 1, 3/2, 2.
    pub pentanomial: [u64; 5],
    /// The LLR after each pair, in order.
    pub llrs: Vec<f64>,
    /// The Elo difference so far, once the pairs give one.
    pub elo: Option<EloFigure>,
    /// The set's log, in the gate's directory.
    pub log: String,
    /// When the set started, and when it ended (UTC).
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
            seed: league.seed.unwrap_or_else(referee::fresh_seed),
            openings: league.openings.is_some(),
            games_played: 0,
            llr: status.llr,
            lower: status.lower_bound,
            upper: status.upper_bound,
            pentanomial: [0; 5],
            llrs: Vec::new(),
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

    /// Pairs played.
    pub fn pairs(&self) -> u64 {
        self.llrs.len() as u64
    }

    /// Why a version the gate did not accept is refused, for its author.
    pub fn refusal(&self) -> String {
        let why = match self.verdict {
            Verdict::Failed => format!(
                "the test could not be played: {}",
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
            "{REFUSED_BY_GATE} against {} did not accept it: LLR {:.2} in [{:.2}, {:.2}] after {} pairs, {why}; the set's log: {}/{}",
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
    let stem = format!("{candidate}-vs-{active}");
    let free = (1..1000)
        .map(|n| match n {
            1 => stem.clone(),
            n => format!("{stem}-{n}"),
        })
        .find(|s| {
            [format!("{s}.json"), format!("{s}.jsonl")]
                .iter()
                .all(|f| matches!(gate.exists(Path::new(f)), Ok(false)))
        });
    if let Some(stem) = free {
        Saver {
            dir: gate,
            name: format!("{stem}.json"),
        }
        .save(&result);
    }
    result
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

/// The sink of the gate's set: writes the log, feeds each game to the test's tally,
/// and after each pair keeps the LLR and writes the result file.
struct Watch {
    log: LogWriter,
    tally: SprtTally,
    result: GateResult,
    file: Saver,
}

impl Watch {
    /// Writes the result file as the test stands.
    fn save(&self) {
        self.file.save(&self.result);
    }

    /// The figures of the pairs so far.
    fn update(&mut self) {
        let status = self.tally.status();
        let pairs = self.tally.pairs();
        self.result.llr = status.llr;
        self.result.lower = status.lower_bound;
        self.result.upper = status.upper_bound;
        self.result.pentanomial = pairs.counts;
        self.result.elo = pairs.elo(0.95).ok().map(|e| EloFigure {
            value: e.elo,
            low: e.low,
            high: e.high,
            los: e.los,
        });
    }
}

impl RecordSink for Watch {
    fn record(&mut self, record: &Record) -> Result<(), WriteError> {
        self.log.record(record)?;
        if let Record::GameEnd(end) = record {
            self.result.games_played = end.game;
            if let Some(status) = self.tally.add_game(end.game, end.winner) {
                self.result.llrs.push(status.llr);
                self.update();
                self.save();
            }
        }
        Ok(())
    }
}

/// Plays the gate's test of `candidate` (the new version, bot A) against `active` (the
/// bot's active version, bot B) with the league's rules, time control, openings and
/// seed (a fresh one when the league file gives none), as one set of at most
/// `gate.games` games that stops when the SPRT decides; `dir` is the uploads'
/// directory. Never fails: a set that cannot be played is [`Verdict::Failed`].
pub async fn gate(
    candidate: &BotConfig,
    active: &BotConfig,
    league: &LeagueConfig,
    gate: &Gate,
    dir: &Path,
) -> GateResult {
    let sprt = gate.sprt;
    let tally = SprtTally::new(sprt);
    let mut result = GateResult::start(&candidate.name, &active.name, league, gate);
    let seed = result.seed;
    let failed =
        |why: String| failed_to_start(&candidate.name, &active.name, league, gate, dir, why);
    let (
        Transport::Process {
            spec: spec_a,
            limits: limits_a,
        },
        Transport::Process {
            spec: spec_b,
            limits: limits_b,
        },
    ) = (&candidate.transport, &active.transport)
    else {
        return failed("both versions must be processes".into());
    };
    let logs = match gate_dir(dir) {
        Ok(logs) => logs,
        Err(e) => return failed(format!("cannot open {}/{GATE_DIR}: {e}", dir.display())),
    };
    let stem = format!("{}-vs-{}", candidate.name, active.name);
    let (log, stem) = match LogWriter::create_in(&logs, &stem) {
        Ok(created) => created,
        Err(e) => return failed(format!("cannot write the set's log: {e:#}")),
    };
    result.log = format!("{stem}.jsonl");
    // The openings of hus match --openings: the same choice from the same book and seed.
    let openings = match &league.openings {
        Some(book) => referee::openings_for_set(&book.book, seed, gate.games),
        None => Vec::new(),
    };
    let config = SetConfig {
        rules: league.rules,
        games: gate.games,
        seed,
        time: league.time,
        ready_time: league.ready_time,
        early_stop: false,
        openings,
        sprt: Some(sprt),
    };
    let lineups = [
        Entrant::Process {
            spec: spec_a.clone(),
            stderr: FilePlace::In(logs.clone(), format!("{stem}.a.stderr").into()),
            limits: limits_a.clone(),
            version: candidate.version.clone(),
        },
        Entrant::Process {
            spec: spec_b.clone(),
            stderr: FilePlace::In(logs.clone(), format!("{stem}.b.stderr").into()),
            limits: limits_b.clone(),
            version: active.version.clone(),
        },
    ]
    .map(referee::Lineup::from);
    let mut watch = Watch {
        log,
        tally,
        result,
        file: Saver {
            dir: logs.clone(),
            name: format!("{stem}.json"),
        },
    };
    watch.save();
    let played = play_set(
        &config,
        lineups.into(),
        &referee::referee_version(),
        &mut watch,
    )
    .await;
    match played {
        Err(e) => {
            watch.result.verdict = Verdict::Failed;
            watch.result.error = Some(e.to_string());
        }
        Ok(_) => {
            watch.result.verdict = match watch.tally.status().decision {
                Decision::AcceptH1 => Verdict::Accepted,
                Decision::AcceptH0 => Verdict::Rejected,
                Decision::Continue => Verdict::Undecided,
            };
        }
    }
    watch.result.finished = Some(crate::uploads::now_utc());
    watch.save();
    watch.result
}

#[cfg(test)]
mod tests;
