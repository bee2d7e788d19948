//! The batches of a gate's SPRT (docs/upload.md, "The SPRT gate"): which games each
//! batch plays, and one batch played, by the match server's threads and by the workers
//! alike (one code path: `referee::play_set`).
//!
//! A test of at most `games` games, `batch` game pairs a batch, is cut into batches
//! 0, 1, ... of `batch` pairs each (the last one shorter when the bound is not a
//! multiple). Batch k is one set of `2 * pairs` games, pairs with the first mover
//! swapped, without the SPRT's stop: its pairs start from the openings
//! `k * batch .. (k + 1) * batch` of the ones `hus match --sprt --openings BOOK --seed
//! SEED --games GAMES` would use, in the same order (`referee::openings_for_set`, going
//! round the list); without a book, from the starting position. Its seed (the lots of
//! its first movers) is [`BatchPlan::seed_of`]: the test's seed for batch 0, so that
//! batch 0 is exactly `hus match NEW ACTIVE --games 2*batch --openings BOOK --seed
//! SEED`. What a batch yields is its pentanomial: the pairs by the new version's
//! (bot A's) points.

use std::path::Path;
use std::sync::Arc;

use engine::AnyPosition;
use ratings::{Outcome, Pentanomial};
use referee::{
    play_set, Dir, Entrant, FilePlace, LogWriter, Record, RecordSink, SetConfig, Side, WriteError,
};

use crate::file::{BotConfig, LeagueConfig, Transport};

/// Which games the batches of a gate's test play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchPlan {
    /// The test's seed.
    pub seed: u64,
    /// The most games of the test (even).
    pub games: u32,
    /// Game pairs in a batch (at least 1).
    pub batch: u32,
}

/// The odd constant the batches' seeds step by (2^64 over the golden ratio).
const SEED_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

impl BatchPlan {
    /// Pairs of the whole test.
    pub fn pairs(&self) -> u32 {
        self.games / 2
    }

    /// Batches of the whole test.
    pub fn batches(&self) -> u32 {
        self.pairs().div_ceil(self.batch.max(1))
    }

    /// Game pairs of batch `k` (0 past the last batch).
    pub fn pairs_of(&self, k: u32) -> u32 {
        let start = u64::from(k) * u64::from(self.batch.max(1));
        let left = u64::from(self.pairs()).saturating_sub(start);
        left.min(u64::from(self.batch.max(1))) as u32
    }

    /// The seed of batch `k`: `seed + k * 0x9E3779B97F4A7C15` (wrapping), the test's
    /// own for batch 0.
    pub fn seed_of(&self, k: u32) -> u64 {
        self.seed.wrapping_add(u64::from(k).wrapping_mul(SEED_STEP))
    }

    /// The openings of batch `k`'s pairs, in order: those of the test's pairs
    /// `k * batch ..`, as `hus match --sprt` chooses them from the book and the seed;
    /// without a book, the starting position for each.
    pub fn openings_of(&self, league: &LeagueConfig, k: u32) -> Vec<AnyPosition> {
        let pairs = self.pairs_of(k) as usize;
        let first = k as usize * self.batch.max(1) as usize;
        match &league.openings {
            Some(book) => {
                let all = referee::openings_for_set(&book.book, self.seed, self.games);
                if all.is_empty() {
                    return vec![AnyPosition::start(league.rules); pairs];
                }
                (first..first + pairs).map(|p| all[p % all.len()]).collect()
            }
            None => vec![AnyPosition::start(league.rules); pairs],
        }
    }

    /// The set of batch `k`, at the league's rules, time control and `ready_time`.
    pub fn config(&self, league: &LeagueConfig, k: u32) -> SetConfig {
        SetConfig {
            rules: league.rules,
            games: 2 * self.pairs_of(k),
            seed: self.seed_of(k),
            time: league.time,
            ready_time: league.ready_time,
            early_stop: false,
            openings: self.openings_of(league, k),
            sprt: None,
        }
    }
}

/// The log's name of batch `k` in the test's directory, without `.jsonl`.
pub fn batch_stem(k: u32) -> String {
    format!("batch-{k}")
}

/// A batch played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchPlayed {
    /// Its pairs by bot A's points: 0, 1/2, 1, 3/2, 2.
    pub pentanomial: [u64; 5],
    /// Games played.
    pub games: u32,
    /// Its log's file name in the directory it was played in.
    pub log: String,
}

/// The sink of a batch: the log, and the pairs counted as the games end.
struct Counter {
    log: LogWriter,
    pairs: Pentanomial,
    open: Option<Outcome>,
    games: u32,
}

impl RecordSink for Counter {
    fn record(&mut self, record: &Record) -> Result<(), WriteError> {
        self.log.record(record)?;
        if let Record::GameEnd(end) = record {
            self.games = end.game;
            let outcome = match end.winner {
                Some(Side::A) => Outcome::Win,
                Some(Side::B) => Outcome::Loss,
                None => Outcome::Draw,
            };
            if end.game % 2 == 1 {
                self.open = Some(outcome);
            } else if let Some(first) = self.open.take() {
                // At most 1000 pairs a batch: never an overflow.
                let _ = self.pairs.add_pair(first, outcome);
            }
        }
        Ok(())
    }
}

/// Plays batch `k` of `plan` with `candidate` as bot A and `active` as bot B (both
/// processes: uploaded versions are), its log `batch-K.jsonl` in `dir` and the bots'
/// stderr beside it (`batch-K.a.stderr`, `batch-K.b.stderr`). An error says why the
/// set could not be played.
pub async fn play_batch(
    plan: &BatchPlan,
    k: u32,
    league: &LeagueConfig,
    candidate: &BotConfig,
    active: &BotConfig,
    dir: &Arc<Dir>,
) -> Result<BatchPlayed, String> {
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
        return Err("both versions must be processes".into());
    };
    let config = plan.config(league, k);
    let (log, stem) = LogWriter::create_in(dir, &batch_stem(k))
        .map_err(|e| format!("cannot write batch {k}'s log: {e:#}"))?;
    let lineups = [
        Entrant::Process {
            spec: spec_a.clone(),
            stderr: FilePlace::In(dir.clone(), format!("{stem}.a.stderr").into()),
            limits: limits_a.clone(),
            version: candidate.version.clone(),
        },
        Entrant::Process {
            spec: spec_b.clone(),
            stderr: FilePlace::In(dir.clone(), format!("{stem}.b.stderr").into()),
            limits: limits_b.clone(),
            version: active.version.clone(),
        },
    ]
    .map(referee::Lineup::from);
    let mut counter = Counter {
        log,
        pairs: Pentanomial::default(),
        open: None,
        games: 0,
    };
    play_set(
        &config,
        lineups.into(),
        &referee::referee_version(),
        &mut counter,
    )
    .await
    .map_err(|e| format!("batch {k}: {e}"))?;
    Ok(BatchPlayed {
        pentanomial: counter.pairs.counts,
        games: counter.games,
        log: format!("{stem}.jsonl"),
    })
}

/// The most bytes of a batch's log unpacked from the store (a batch of 1000 pairs of
/// long games stays far below).
pub const MAX_BATCH_LOG: u64 = 256 << 20;

/// A batch's log as it goes to the store: gzip.
pub fn pack_log(plain: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain)?;
    gz.finish()
}

/// A batch's log from the store, unpacked: at most [`MAX_BATCH_LOG`] bytes, else an
/// error.
pub fn unpack_log(packed: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(packed)
        .take(MAX_BATCH_LOG + 1)
        .read_to_end(&mut plain)?;
    if plain.len() as u64 > MAX_BATCH_LOG {
        return Err(std::io::Error::other(format!(
            "a batch's log unpacks to more than {MAX_BATCH_LOG} bytes"
        )));
    }
    Ok(plain)
}

/// This machine's clock in Unix seconds: the leases of gate batches on a store of one
/// machine (`GateBatches::gate_clock`'s default).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A worker's share of the gate (`hus worker`, `hus league --store`): besides its
/// league sets, it claims the store's gate batches one at a time under its name
/// `worker` with a lease of `lease` (renewed every quarter of it), makes both versions
/// playable here ([`crate::uploaded::LocalBuilds::prepare`]: they exist only in the
/// store), plays the batch in its scratch directory and records its pentanomial with
/// its log (gzip). A batch whose lease it lost (its test ended, or it was silent too
/// long) is dropped, its bots killed. Runs until its task is dropped.
pub(crate) async fn work_gate_batches<S>(
    store: crate::store::StoreCaller<S>,
    builds: Arc<crate::uploaded::LocalBuilds>,
    league: Arc<LeagueConfig>,
    scratch: std::path::PathBuf,
    worker: String,
    lease: std::time::Duration,
    say: impl Fn(String) + Send + 'static,
) where
    S: crate::store::Store + Send + 'static,
{
    // Empty claims back off, doubling up to GATE_IDLE_MAX: a gate is rare, and ten
    // thousand idle workers must not ask the store thousands of times a second.
    let mut idle = GATE_IDLE_MIN;
    loop {
        let name = worker.clone();
        let lease_s = lease.as_secs_f64();
        let claimed = store
            .call(move |s| {
                let now = s.gate_clock()?;
                s.claim_gate_batch(&name, None, now, lease_s)
            })
            .await;
        let claimed = match claimed {
            Ok(Some(claimed)) => {
                idle = GATE_IDLE_MIN;
                claimed
            }
            Ok(None) => {
                tokio::time::sleep(idle).await;
                idle = (idle * 2).min(GATE_IDLE_MAX);
                continue;
            }
            Err(e) => {
                say(format!("cannot claim a gate batch: {e}"));
                tokio::time::sleep(GATE_IDLE_MAX).await;
                continue;
            }
        };
        let b = claimed.batch.clone();
        let attempt = claimed.attempt;
        let played = tokio::select! {
            played = play_claimed_batch(&store, &builds, &league, &scratch, &b) => Some(played),
            _ = keep_lease(&store, &b, attempt, lease) => None,
        };
        let Some(played) = played else {
            say(format!(
                "batch {} of the gate's {} lost (its test ended, or its lease ran out): dropped",
                b.batch, b.test
            ));
            continue;
        };
        let played = match played {
            Err(BatchError::CannotPrepare(why)) if attempt < PREPARE_ATTEMPTS => {
                // This machine cannot play a version of the test (its build fails
                // here, a toolchain is missing): the batch goes back at once (its lease
                // ended now) for another player, and this worker claims no batch for a
                // while. Past PREPARE_ATTEMPTS claims the test fails with the cause.
                let (test, k) = (b.test.clone(), b.batch);
                let _ = store
                    .call(move |s| s.renew_gate_batch(&test, k, attempt, 0.0))
                    .await;
                say(format!(
                    "batch {} of the gate's {} given back: {why}",
                    b.batch, b.test
                ));
                tokio::time::sleep(GIVE_BACK_PAUSE).await;
                continue;
            }
            Err(e) => Err(e.to_string()),
            Ok(played) => Ok(played),
        };
        let done = match played {
            Ok((played, log)) => crate::store::BatchDone {
                pentanomial: played.pentanomial,
                games: played.games,
                log: Some(log),
                error: None,
            },
            Err(e) => crate::store::BatchDone {
                pentanomial: [0; 5],
                games: 0,
                log: None,
                error: Some(e),
            },
        };
        let failed = done.error.clone();
        let (test, k) = (b.test.clone(), b.batch);
        match store
            .call(move |s| s.finish_gate_batch(&test, k, attempt, &done))
            .await
        {
            Ok(true) => say(match failed {
                None => format!("played batch {} of the gate's {}", b.batch, b.test),
                Some(e) => format!(
                    "batch {} of the gate's {} could not be played: {e}",
                    b.batch, b.test
                ),
            }),
            Ok(false) => say(format!(
                "batch {} of the gate's {} ended while played: its result is not kept",
                b.batch, b.test
            )),
            Err(e) => say(format!(
                "cannot record batch {} of the gate's {}: {e}",
                b.batch, b.test
            )),
        }
    }
}

/// The first wait of a worker after a claim of a gate batch that found none; it doubles
/// at each empty claim up to [`GATE_IDLE_MAX`], and starts again at a claim.
const GATE_IDLE_MIN: std::time::Duration = std::time::Duration::from_millis(250);
/// See [`GATE_IDLE_MIN`]: an idle worker asks for a batch every 5 s.
const GATE_IDLE_MAX: std::time::Duration = std::time::Duration::from_secs(5);

/// The claims of a batch (by any player) after which a player that cannot make its
/// versions playable fails the test with the cause, instead of giving the batch back.
const PREPARE_ATTEMPTS: u32 = 3;

/// How long a worker that gave a batch back claims no other.
const GIVE_BACK_PAUSE: std::time::Duration = std::time::Duration::from_secs(30);

/// Why a claimed batch was not played.
#[derive(Debug)]
enum BatchError {
    /// A version cannot be made playable on this machine (or read from the store).
    CannotPrepare(String),
    /// The batch could not be played.
    Failed(String),
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchError::CannotPrepare(why) | BatchError::Failed(why) => f.write_str(why),
        }
    }
}

/// Renews a batch's lease every quarter of it; returns when the lease is lost.
async fn keep_lease<S>(
    store: &crate::store::StoreCaller<S>,
    b: &crate::store::GateBatch,
    attempt: u32,
    lease: std::time::Duration,
) where
    S: crate::store::Store + Send + 'static,
{
    loop {
        tokio::time::sleep(lease / 4).await;
        let (test, k, lease_s) = (b.test.clone(), b.batch, lease.as_secs_f64());
        match store
            .call(move |s| {
                let until = s.gate_clock()? + lease_s;
                s.renew_gate_batch(&test, k, attempt, until)
            })
            .await
        {
            Ok(true) => {}
            Ok(false) => return,
            // The store out of reach: the lease may still hold; try again.
            Err(_) => {}
        }
    }
}

/// Plays a claimed batch here: both versions made playable, the batch played in a
/// directory of the scratch's, its log read back and packed.
async fn play_claimed_batch<S>(
    store: &crate::store::StoreCaller<S>,
    builds: &crate::uploaded::LocalBuilds,
    league: &LeagueConfig,
    scratch: &Path,
    b: &crate::store::GateBatch,
) -> Result<(BatchPlayed, Vec<u8>), BatchError>
where
    S: crate::store::Store + Send + 'static,
{
    let cannot = BatchError::CannotPrepare;
    let mut bots = Vec::new();
    // Both trees stay in the cache while the batch plays, whatever the versions' states.
    let mut pins = Vec::new();
    for name in [&b.candidate, &b.active] {
        let (bot, number) = crate::store::parse_version_name(name)
            .ok_or_else(|| BatchError::Failed(format!("{name} is not an uploaded version")))?;
        let bot = bot.to_string();
        let row = store
            .call(move |s| s.version(&bot, number))
            .await
            .map_err(|e| cannot(format!("cannot read {name}: {e}")))?
            .ok_or_else(|| BatchError::Failed(format!("the store has no version {name}")))?;
        let fetch = |hash: String| {
            let store = store.clone();
            async move { store.call(move |s| s.archive(&hash)).await }
        };
        // The gate plays a new version before it is active, while it is `checking`
        // (or, for a test asked for, one the gate refused): the server queues its
        // batches only once its build and validation set have passed, so it is made
        // playable here as a version that passed its checks.
        pins.push(builds.pin(&row.hash));
        let mut playable = row.clone();
        if !playable.state.has_played() {
            playable.state = crate::store::VersionState::Retired;
        }
        bots.push(
            builds
                .prepare(&playable, fetch)
                .await
                .map_err(|e| cannot(format!("cannot play {name} here: {e}")))?,
        );
    }
    let plan = BatchPlan {
        seed: b.seed,
        games: b.games,
        batch: b.pairs,
    };
    // One batch at a time per worker: one directory, made afresh.
    let where_ = "gate-batch".to_string();
    let _ = std::fs::remove_dir_all(scratch.join(&where_));
    let dir = Dir::create(scratch)
        .and_then(|d| d.create_dir(Path::new(&where_)))
        .map_err(|e| {
            BatchError::Failed(format!(
                "cannot make {}: {e}",
                scratch.join(&where_).display()
            ))
        })?;
    let dir = Arc::new(dir);
    let played = play_batch(&plan, b.batch, league, &bots[0], &bots[1], &dir).await;
    let path = scratch.join(&where_);
    let result = match played {
        Ok(played) => {
            let log = path.join(&played.log);
            tokio::task::spawn_blocking(move || {
                std::fs::read(&log).and_then(|plain| pack_log(&plain))
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| format!("cannot read the batch's log: {e}")))
            .map(|packed| (played, packed))
        }
        Err(e) => Err(e),
    };
    let _ = std::fs::remove_dir_all(&path);
    drop(pins);
    result.map_err(BatchError::Failed)
}

/// The path of batch `k`'s log in a test's directory `dir`.
pub fn batch_log(dir: &Path, k: u32) -> std::path::PathBuf {
    dir.join(format!("{}.jsonl", batch_stem(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn league_file(openings: bool) -> LeagueConfig {
        let dir = tempfile::tempdir().expect("a directory");
        let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("../openings/hus-8.txt");
        let text = format!(
            "{}[[bot]]\nname = \"x\"\ncommand = \"x\"\n[[bot]]\nname = \"y\"\ncommand = \"y\"\n",
            if openings {
                format!("openings = {:?}\n", book.display().to_string())
            } else {
                String::new()
            }
        );
        LeagueConfig::parse(&dir.path().join("L.toml"), &text).expect("a league")
    }

    #[test]
    fn a_log_packs_and_unpacks() {
        let plain = b"{\"type\":\"header\"}\n".repeat(100);
        let packed = pack_log(&plain).expect("gzip");
        assert!(packed.len() < plain.len());
        assert_eq!(unpack_log(&packed).expect("gunzip"), plain);
        assert!(unpack_log(b"not gzip").is_err());
    }

    #[test]
    fn batches_cut_the_test_and_take_its_openings_in_order() {
        let plan = BatchPlan {
            seed: 11,
            games: 22,
            batch: 4,
        };
        assert_eq!((plan.pairs(), plan.batches()), (11, 3));
        assert_eq!(
            (0..4).map(|k| plan.pairs_of(k)).collect::<Vec<_>>(),
            [4, 4, 3, 0]
        );
        assert_eq!(plan.seed_of(0), 11);
        assert_eq!(plan.seed_of(1), 11u64.wrapping_add(SEED_STEP));
        assert_eq!(
            plan.seed_of(2),
            11u64.wrapping_add(SEED_STEP.wrapping_mul(2))
        );
        let league = league_file(true);
        let book = &league.openings.as_ref().expect("a book").book;
        let all = referee::openings_for_set(book, 11, 22);
        let cut: Vec<AnyPosition> = (0..3).flat_map(|k| plan.openings_of(&league, k)).collect();
        let expected: Vec<AnyPosition> = (0..11).map(|p| all[p % all.len()]).collect();
        assert_eq!(cut, expected);
        let c = plan.config(&league, 2);
        assert_eq!(
            (c.games, c.seed, c.sprt, c.early_stop),
            (6, plan.seed_of(2), None, false)
        );
        assert!(c.paired());
        // Batch 0 is the set of hus match --openings BOOK --seed SEED --games 2*batch.
        assert_eq!(
            plan.config(&league, 0).openings,
            referee::openings_for_set(book, 11, 8)
        );
        // Without a book, every pair from the start, still in pairs.
        let bare = league_file(false);
        let c = plan.config(&bare, 1);
        assert_eq!(c.openings, vec![AnyPosition::start(bare.rules); 4]);
        assert!(c.paired());
    }

    /// What a worker's task said, kept for the test.
    fn listener() -> (
        Arc<std::sync::Mutex<Vec<String>>>,
        impl Fn(String) + Send + Clone + 'static,
    ) {
        let said = Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = said.clone();
        (said, move |line: String| {
            keep.lock().expect("lines").push(line)
        })
    }

    /// Waits (bounded) until a line said contains `what`.
    async fn until_said(said: &Arc<std::sync::Mutex<Vec<String>>>, what: &str) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
        while !said.lock().expect("lines").iter().any(|l| l.contains(what)) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "never said {what:?}: {:?}",
                said.lock().expect("lines")
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn a_worker_that_cannot_make_a_version_playable_gives_its_batch_back_until_the_third_claim(
    ) {
        use crate::store::{
            GateBatches, NewVersion, SqliteStore, StoreThread, VersionState, Versions,
        };
        let place = tempfile::tempdir().expect("a directory");
        let mut store = SqliteStore::in_memory().expect("a store");
        // Rows whose archives are not what their hashes name: no machine can build
        // them (refused before anything is unpacked).
        let wrong = upload::sha256_hex(b"no archive of these rows");
        for (number, state) in [(1, VersionState::Active), (2, VersionState::Checking)] {
            let n = store
                .add_version(&NewVersion {
                    bot: "gb".into(),
                    author: "ann".into(),
                    hash: wrong.clone(),
                    archive: format!("archive {number}").into_bytes(),
                    submitted: "2026-12-05T02:30:00Z".into(),
                })
                .expect("add");
            assert_eq!(n, number);
            store
                .set_version_state("gb", n, state, None, None, "2026-12-05T02:31:00Z")
                .expect("state");
        }
        let test = "gb.v2-vs-gb.v1";
        store
            .queue_gate_batches(&[crate::store::GateBatch {
                test: test.into(),
                batch: 0,
                candidate: "gb.v2".into(),
                active: "gb.v1".into(),
                seed: 1,
                games: 8,
                pairs: 4,
            }])
            .expect("queue");
        let thread = StoreThread::spawn(store).expect("the store's thread");
        let caller = thread.caller();
        let builds = Arc::new(crate::uploaded::LocalBuilds::new(
            place.path().join("cache"),
            crate::uploaded::BuildSettings::default(),
        ));
        let league = Arc::new(league_file(false));
        let lease = std::time::Duration::from_secs(600);
        let start = |say| {
            tokio::spawn(work_gate_batches(
                caller.clone(),
                builds.clone(),
                league.clone(),
                place.path().join("scratch"),
                "w".to_string(),
                lease,
                say,
            ))
        };
        let rows = || {
            let c = caller.clone();
            async move {
                c.call(move |s| s.gate_batch_rows(test))
                    .await
                    .expect("rows")
            }
        };

        // The first claim: given back, the test untouched.
        let (said, say) = listener();
        let worker = start(say);
        until_said(&said, "given back").await;
        worker.abort();
        let row = &rows().await[0];
        assert_eq!((row.attempts, row.error.as_str(), row.ended), (1, "", None));
        let line = said.lock().expect("lines").join("\n");
        assert!(
            line.starts_with("batch 0 of the gate's gb.v2-vs-gb.v1 given back: cannot play gb.v2 here: the archive the store gave for"),
            "{line}"
        );
        // Another player's claim, given back too (its lease ended at once).
        let claimed = caller
            .call(|s| s.claim_gate_batch("other", None, unix_now(), 600.0))
            .await
            .expect("claim")
            .expect("the batch is back");
        assert_eq!(claimed.attempt, 2);
        assert!(caller
            .call(|s| s.renew_gate_batch(test, 0, 2, 0.0))
            .await
            .expect("give back"));

        // The third claim: the batch fails with the cause, and so does the test.
        let (said, say) = listener();
        let worker = start(say);
        until_said(&said, "could not be played").await;
        worker.abort();
        let row = &rows().await[0];
        assert_eq!(
            (row.attempts, row.state),
            (3, crate::store::BatchState::Failed)
        );
        assert!(
            row.error
                .starts_with("cannot play gb.v2 here: the archive the store gave for"),
            "{}",
            row.error
        );
    }
}
