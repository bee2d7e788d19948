//! The gate on real processes (the Python sample bots), bounded in games: the same
//! program against itself is not accepted, a clearly stronger one is, and the LLR after
//! each pair is what the `ratings` crate computes from the log's games, which `hus
//! replay`'s check passes.

use std::path::{Path, PathBuf};

use league::{parse_gate, BotConfig, LeagueConfig, Transport};
use ratings::{Outcome, Pentanomial};
use referee::{BotSpec, Limits, Record};

use super::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// A version played by `python3 sample-bots/python/SCRIPT SEED`.
fn python_bot(name: &str, script: &str, seed: u32) -> BotConfig {
    let path = root().join("sample-bots/python").join(script);
    BotConfig {
        name: name.to_string(),
        transport: Transport::Process {
            spec: BotSpec::parse(&format!("python3 '{}' {seed}", path.display()))
                .expect("a command"),
            limits: Limits::default(),
        },
        version: None,
    }
}

/// A league with the book of openings of hus-8, seed 11, and times no healthy bot
/// misses on a loaded machine (the verdicts do not depend on time).
fn league(dir: &Path) -> LeagueConfig {
    let book = root().join("openings/hus-8.txt");
    let text = format!(
        "seed = 11\nmove_time = \"10s\"\nready_time = \"30s\"\nopenings = \"{}\"\n\
         [[bot]]\nname = \"x\"\ncommand = \"x\"\n[[bot]]\nname = \"y\"\ncommand = \"y\"\n",
        book.display()
    );
    LeagueConfig::parse(&dir.join("L.toml"), &text).expect("a league")
}

/// The log's records, each read as `hus replay` reads it.
fn records(log: &Path) -> Vec<Record> {
    std::fs::read_to_string(log)
        .expect("the log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect()
}

/// A's outcome in each game of a log.
fn outcomes(records: &[Record]) -> Vec<Outcome> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::GameEnd(end) => Some(match end.winner {
                Some(referee::Side::A) => Outcome::Win,
                Some(referee::Side::B) => Outcome::Loss,
                None => Outcome::Draw,
            }),
            _ => None,
        })
        .collect()
}

/// Checks a finished gate against its batches' logs: `hus replay`'s check passes on
/// each, each batch's pentanomial is its log's games (A the new version), and the LLR
/// after each batch, the last one and the pentanomial are the `ratings` crate's on the
/// games of the batches counted so far, as `hus match --sprt` computes them.
fn check_against_logs(result: &GateResult, gate: &Gate, dir: &Path) {
    let tests = dir.join(GATE_DIR).join(&result.log);
    let mut pairs = Pentanomial::default();
    let mut games = 0;
    let mut llrs = Vec::new();
    for entry in &result.batches {
        assert_eq!(entry.log, format!("batch-{}.jsonl", entry.batch));
        assert_eq!(entry.by, "server");
        let log = tests.join(&entry.log);
        let records = records(&log);
        assert_eq!(
            referee::verify_records(&records),
            Ok(0),
            "{}",
            log.display()
        );
        let Some(Record::Header(header)) = records.first() else {
            panic!("the log starts with its header");
        };
        assert_eq!(header.seed, result.plan().seed_of(entry.batch));
        assert_eq!(header.sprt, None);
        let outcomes = outcomes(&records);
        assert_eq!(
            outcomes.len() as u32,
            2 * result.plan().pairs_of(entry.batch)
        );
        games += outcomes.len() as u32;
        let mut own = Pentanomial::default();
        for pair in outcomes.chunks_exact(2) {
            own.add_pair(pair[0], pair[1]).expect("a pair");
            pairs.add_pair(pair[0], pair[1]).expect("a pair");
        }
        assert_eq!(entry.pentanomial, own.counts);
        let llr = gate.sprt.pentanomial(&pairs).llr;
        assert_eq!(entry.llr, llr);
        llrs.push(llr);
    }
    assert_eq!(result.llrs, llrs);
    assert_eq!(result.games_played, games);
    let status = gate.sprt.pentanomial(&pairs);
    assert_eq!(result.llr, status.llr);
    assert_eq!(result.pentanomial, pairs.counts);
    assert_eq!(
        (result.lower, result.upper),
        (status.lower_bound, status.upper_bound)
    );
    // The result file beside the directory is the result returned, as written.
    let file = dir.join(GATE_DIR).join(format!("{}.json", result.log));
    assert_eq!(
        std::fs::read_to_string(&file).expect("the result file"),
        serde_json::to_string_pretty(result).expect("json") + "\n"
    );
    let kept = results_of(dir, &result.candidate);
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (kept[0].verdict, kept[0].pairs(), &kept[0].log),
        (result.verdict, result.pairs(), &result.log)
    );
}

#[tokio::test]
async fn the_same_program_against_itself_is_not_accepted() {
    let dir = tempfile::tempdir().expect("a directory");
    let league = league(dir.path());
    let gate = parse_gate("sprt elo0=0 elo1=10 games=400 batch=8").expect("a gate");
    let new = python_bot("random.v2", "random_bot.py", 2);
    let old = python_bot("random.v1", "random_bot.py", 1);
    // Two batches at once: each of the 25 is counted, in the order they end.
    let result = super::gate(&new, &old, &league, &gate, dir.path(), 2).await;
    assert_eq!(result.error, None);
    assert!(!result.accepted(), "{result:?}");
    assert_eq!(result.verdict, Verdict::Undecided, "{result:?}");
    assert_eq!((result.games_played, result.pairs()), (400, 200));
    assert_eq!((result.batch, result.llrs.len()), (8, 25));
    let mut counted: Vec<u32> = result.batches.iter().map(|b| b.batch).collect();
    counted.sort_unstable();
    assert_eq!(counted, (0..25).collect::<Vec<u32>>());
    assert_eq!(result.abandoned, Vec::<u32>::new());
    assert_eq!(
        (result.candidate.as_str(), result.active.as_str()),
        ("random.v2", "random.v1")
    );
    assert_eq!(result.log, "random.v2-vs-random.v1");
    assert!(result.openings);
    assert_eq!(result.seed, 11);
    assert!(result.refusal().starts_with(&format!(
        "the SPRT gate against random.v1 did not accept it: LLR {:.2} in [-2.94, 2.94] after 200 pairs, \
         undecided at the gate's bound of 400 games, and an undecided test does not accept; \
         the batches' logs: gate/random.v2-vs-random.v1/",
        result.llr
    )));
    check_against_logs(&result, &gate, dir.path());
}

#[tokio::test]
async fn a_clearly_stronger_program_is_accepted() {
    let dir = tempfile::tempdir().expect("a directory");
    let league = league(dir.path());
    let gate = parse_gate("sprt elo0=0 elo1=10 games=400").expect("a gate");
    let new = python_bot("greedy.v2", "greedy_bot.py", 2);
    let old = python_bot("greedy.v1", "random_bot.py", 1);
    // One batch at a time: batches are counted in order, and none is abandoned.
    let result = super::gate(&new, &old, &league, &gate, dir.path(), 1).await;
    assert_eq!(result.error, None);
    assert_eq!(result.verdict, Verdict::Accepted, "{result:?}");
    assert!(result.accepted());
    // It stopped at the first batch whose LLR reached the upper bound.
    let first = result.llrs.iter().position(|l| *l >= result.upper);
    assert_eq!(first, Some(result.llrs.len() - 1), "{:?}", result.llrs);
    let counted: Vec<u32> = result.batches.iter().map(|b| b.batch).collect();
    assert_eq!(counted, (0..result.llrs.len() as u32).collect::<Vec<u32>>());
    assert_eq!(result.abandoned, Vec::<u32>::new());
    assert_eq!(result.games_played as usize, 8 * result.llrs.len());
    let elo = result.elo.expect("an estimate");
    assert!(elo.value > 0.0 && elo.los > 0.99, "{elo:?}");
    check_against_logs(&result, &gate, dir.path());
    // For docs/upload.md ("How long").
    eprintln!(
        "accepted after {} batches, {} pairs, pentanomial {:?}",
        result.batches.len(),
        result.pairs(),
        result.pentanomial
    );
}

#[tokio::test]
async fn a_version_that_cannot_start_fails_the_test() {
    let dir = tempfile::tempdir().expect("a directory");
    let league = league(dir.path());
    let gate = parse_gate("sprt elo0=0 elo1=10 games=4").expect("a gate");
    let new = BotConfig {
        name: "gone.v2".into(),
        transport: Transport::Process {
            spec: BotSpec::parse("/nonexistent/hus-gate-test-bot").expect("a command"),
            limits: Limits::default(),
        },
        version: None,
    };
    let old = python_bot("gone.v1", "random_bot.py", 1);
    let result = super::gate(&new, &old, &league, &gate, dir.path(), 1).await;
    assert!(!result.accepted());
    assert_ne!(result.verdict, Verdict::Running);
    assert!(result.finished.is_some());
    let kept = results_of(dir.path(), "gone.v2");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].verdict, result.verdict);
}

#[test]
fn a_refusal_says_the_test_and_where_it_stopped() {
    let sprt = parse_gate("sprt elo0=0 elo1=10").expect("a gate").sprt;
    let mut r = GateResult {
        candidate: "a.v3".into(),
        active: "a.v2".into(),
        verdict: Verdict::Rejected,
        error: None,
        elo0: sprt.elo0(),
        elo1: sprt.elo1(),
        alpha: sprt.alpha(),
        beta: sprt.beta(),
        games: 2000,
        batch: 4,
        seed: 1,
        openings: true,
        games_played: 8,
        llr: -2.951,
        lower: sprt.lower_bound(),
        upper: sprt.upper_bound(),
        pentanomial: [3, 0, 1, 0, 0],
        llrs: vec![-2.951],
        batches: Vec::new(),
        abandoned: vec![1],
        elo: None,
        log: "a.v3-vs-a.v2".into(),
        started: "2026-12-05T02:00:00Z".into(),
        finished: Some("2026-12-05T02:01:00Z".into()),
    };
    assert_eq!(
        r.refusal(),
        "the SPRT gate against a.v2 did not accept it: LLR -2.95 in [-2.94, 2.94] after 4 pairs, \
         H0 accepted (the LLR reached the lower bound: elo0 = 0 or less rather than elo1 = 10 or more); \
         the batches' logs: gate/a.v3-vs-a.v2/"
    );
    r.verdict = Verdict::Failed;
    r.error = Some("bot A could not be started".into());
    assert_eq!(
        r.refusal(),
        "the SPRT gate against a.v2 did not accept it: LLR -2.95 in [-2.94, 2.94] after 4 pairs, \
         a batch could not be played: bot A could not be started; the batches' logs: gate/a.v3-vs-a.v2/"
    );
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["verdict"], "failed");
    assert_eq!(json["llrs"], serde_json::json!([-2.951]));
    assert_eq!(json["abandoned"], serde_json::json!([1]));
}

/// The stop logic alone: batches out in order, counted as they end, in any order; once
/// the LLR crosses a bound, nothing more is handed out or counted, and what is still
/// out is abandoned. The LLR is that of the counts, as `hus match --sprt` computes it.
#[test]
fn the_tally_counts_batches_as_they_end_and_stops_at_a_bound() {
    let gate = parse_gate("sprt elo0=0 elo1=10 games=2000 batch=50").expect("a gate");
    let plan = BatchPlan {
        seed: 7,
        games: gate.games,
        batch: gate.batch,
    };
    assert_eq!(plan.batches(), 20);
    let mut spread = Spread::new(plan, gate.sprt);
    let out: Vec<u32> = (0..3).filter_map(|_| spread.next_batch()).collect();
    assert_eq!(out, [0, 1, 2]);
    // Batch 1 ends first: 50 pairs won twice by A. Not yet at the bound.
    let status = spread.finish(1, [0, 0, 0, 0, 50]).expect("counted");
    let expected = gate.sprt.pentanomial(&Pentanomial::new([0, 0, 0, 0, 50]));
    assert_eq!(status, expected);
    assert!(!spread.ended());
    // A batch counted twice, or never handed out, is not counted.
    assert_eq!(spread.finish(1, [0, 0, 0, 0, 50]), None);
    assert_eq!(spread.finish(9, [0, 0, 0, 0, 50]), None);
    assert_eq!(spread.next_batch(), Some(3));
    // Batch 2: 60 more pairs cross the upper bound (about 0.028 a pair).
    let status = spread.finish(2, [0, 0, 1, 0, 59]).expect("counted");
    let expected = gate.sprt.pentanomial(&Pentanomial::new([0, 0, 1, 0, 109]));
    assert_eq!(status, expected);
    assert_eq!(status.decision, ratings::Decision::AcceptH1);
    assert!(spread.ended());
    assert_eq!(spread.verdict(), Verdict::Accepted);
    assert_eq!(spread.next_batch(), None);
    // Batches 0 and 3 were still out: abandoned, and their results ignored.
    assert_eq!(spread.finish(0, [50, 0, 0, 0, 0]), None);
    assert_eq!(spread.running(), [0, 3]);
    assert_eq!(spread.tally().pairs().counts, [0, 0, 1, 0, 109]);
}

/// With no bound crossed, the test ends when every batch of its bound is counted.
#[test]
fn the_tally_ends_undecided_at_the_bound_of_games() {
    let gate = parse_gate("sprt elo0=0 elo1=10 games=10 batch=4").expect("a gate");
    let plan = BatchPlan {
        seed: 7,
        games: gate.games,
        batch: gate.batch,
    };
    assert_eq!((plan.batches(), plan.pairs_of(1)), (2, 1));
    let mut spread = Spread::new(plan, gate.sprt);
    assert_eq!(
        (spread.next_batch(), spread.next_batch()),
        (Some(0), Some(1))
    );
    assert_eq!(spread.next_batch(), None);
    spread.finish(1, [0, 0, 1, 0, 0]).expect("counted");
    assert!(!spread.ended());
    spread.finish(0, [1, 0, 2, 0, 1]).expect("counted");
    assert!(spread.ended());
    assert_eq!(spread.verdict(), Verdict::Undecided);
    assert_eq!(spread.running(), Vec::<u32>::new());
    assert_eq!(
        spread.tally().status(),
        gate.sprt.pentanomial(&Pentanomial::new([1, 0, 3, 0, 1]))
    );
}

/// On a store (here SQLite in memory; PostgreSQL in the e2e test with a worker), the
/// batches are queued in `gate_batches` and this server's threads claim them as a
/// worker would: every batch is the server's, the test decides as on the threads alone,
/// and its batches leave the store when it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_store_the_servers_threads_claim_the_batches() {
    let dir = tempfile::tempdir().expect("a directory");
    let league = league(dir.path());
    let gate = parse_gate("sprt elo0=0 elo1=30 games=400 batch=4").expect("a gate");
    let store: crate::uploads::BoxStore =
        Box::new(league::SqliteStore::in_memory().expect("a store"));
    let thread = league::StoreThread::spawn(store).expect("the store's thread");
    let players = Players {
        threads: 2,
        store: Some(thread.caller()),
    };
    let new = python_bot("greedy.v2", "greedy_bot.py", 2);
    let old = python_bot("greedy.v1", "random_bot.py", 1);
    let result = gate_with(&new, &old, &league, &gate, dir.path(), &players).await;
    assert_eq!(result.error, None);
    assert_eq!(result.verdict, Verdict::Accepted, "{result:?}");
    assert!(result.batches.iter().all(|b| b.by == SERVER_PLAYER));
    check_against_logs(&result, &gate, dir.path());
    let test = result.log.clone();
    let left = thread
        .caller()
        .call(move |s| s.gate_batch_rows(&test))
        .await
        .expect("rows");
    assert_eq!(left, Vec::new());
}

#[test]
fn tests_left_running_by_a_stop_are_marked_failed_at_the_next_start() {
    let place = tempfile::tempdir().expect("a directory");
    let dir = place.path();
    let league = league(dir);
    let gate = parse_gate("sprt elo0=0 elo1=10").expect("a gate");
    // A finished test (one that could not start) and one cut while running.
    let done = failed_to_start("a.v2", "a.v1", &league, &gate, dir, "no tree".into());
    let mut cut = GateResult::start("a.v3", "a.v1", &league, &gate);
    cut.llrs = vec![0.25, 0.5];
    Saver {
        dir: gate_dir(dir).expect("the gate's directory"),
        name: "a.v3-vs-a.v1.json".into(),
    }
    .save(&cut);
    assert_eq!(results_of(dir, "a.v3")[0].verdict, Verdict::Running);

    assert_eq!(close_cut_tests(dir), 1);
    let after = &results_of(dir, "a.v3")[0];
    assert_eq!(after.verdict, Verdict::Failed);
    assert_eq!(after.error.as_deref(), Some(CUT_BY_A_STOP));
    assert_eq!(after.llrs, vec![0.25, 0.5], "what it played stays");
    assert!(after.finished.is_some());
    // The finished one is as it was, and a second start changes nothing.
    let kept = &results_of(dir, "a.v2")[0];
    assert_eq!(
        (kept.verdict, kept.error.clone()),
        (done.verdict, done.error)
    );
    assert_eq!(close_cut_tests(dir), 0);
    // No gate directory at all: nothing to do.
    let empty = tempfile::tempdir().expect("a directory");
    assert_eq!(close_cut_tests(empty.path()), 0);
}
