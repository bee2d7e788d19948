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

/// Checks a finished gate against its log: `hus replay`'s check passes, and the LLR
/// after each pair, the last one and the pentanomial are the `ratings` crate's on the
/// log's games (A the new version), as `hus match --sprt` computes them.
fn check_against_log(result: &GateResult, gate: &Gate, dir: &Path) {
    let log = dir.join(GATE_DIR).join(&result.log);
    let records = records(&log);
    assert_eq!(
        referee::verify_records(&records),
        Ok(0),
        "{}",
        log.display()
    );
    let outcomes: Vec<Outcome> = records
        .iter()
        .filter_map(|r| match r {
            Record::GameEnd(end) => Some(match end.winner {
                Some(referee::Side::A) => Outcome::Win,
                Some(referee::Side::B) => Outcome::Loss,
                None => Outcome::Draw,
            }),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes.len() as u32, result.games_played);
    let mut pairs = Pentanomial::default();
    let llrs: Vec<f64> = outcomes
        .chunks_exact(2)
        .map(|pair| {
            pairs.add_pair(pair[0], pair[1]).expect("a pair");
            gate.sprt.pentanomial(&pairs).llr
        })
        .collect();
    assert_eq!(result.llrs, llrs);
    let status = gate.sprt.pentanomial(&pairs);
    assert_eq!(result.llr, status.llr);
    assert_eq!(result.pentanomial, pairs.counts);
    assert_eq!(
        (result.lower, result.upper),
        (status.lower_bound, status.upper_bound)
    );
    let Some(Record::SetEnd(end)) = records.last() else {
        panic!("the log ends with set-end");
    };
    let sprt = end.sprt.as_ref().expect("set-end.sprt");
    // As the log writes it: serde_json reads a float back to within an ulp.
    assert!(
        (sprt.llr - result.llr).abs() <= 1e-15 * result.llr.abs().max(1.0),
        "{} {}",
        sprt.llr,
        result.llr
    );
    assert_eq!(sprt.pentanomial, result.pentanomial);
    // The result file beside the log is the result returned, as written.
    let file = log.with_extension("json");
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
    let gate = parse_gate("sprt elo0=0 elo1=10 games=400").expect("a gate");
    let new = python_bot("random.v2", "random_bot.py", 2);
    let old = python_bot("random.v1", "random_bot.py", 1);
    let result = super::gate(&new, &old, &league, &gate, dir.path()).await;
    assert_eq!(result.error, None);
    assert!(!result.accepted(), "{result:?}");
    assert_eq!(result.verdict, Verdict::Undecided, "{result:?}");
    assert_eq!((result.games_played, result.pairs()), (400, 200));
    assert_eq!(
        (result.candidate.as_str(), result.active.as_str()),
        ("random.v2", "random.v1")
    );
    assert_eq!(result.log, "random.v2-vs-random.v1.jsonl");
    assert!(result.openings);
    assert_eq!(result.seed, 11);
    assert!(result.refusal().starts_with(&format!(
        "the SPRT gate against random.v1 did not accept it: LLR {:.2} in [-2.94, 2.94] after 200 pairs, \
         undecided at the gate's bound of 400 games, and an undecided test does not accept",
        result.llr
    )));
    check_against_log(&result, &gate, dir.path());
}

#[tokio::test]
async fn a_clearly_stronger_program_is_accepted() {
    let dir = tempfile::tempdir().expect("a directory");
    let league = league(dir.path());
    let gate = parse_gate("sprt elo0=0 elo1=10 games=400").expect("a gate");
    let new = python_bot("greedy.v2", "greedy_bot.py", 2);
    let old = python_bot("greedy.v1", "random_bot.py", 1);
    let result = super::gate(&new, &old, &league, &gate, dir.path()).await;
    assert_eq!(result.error, None);
    assert_eq!(result.verdict, Verdict::Accepted, "{result:?}");
    assert!(result.accepted());
    // It stopped at the first pair whose LLR reached the upper bound.
    let first = result.llrs.iter().position(|l| *l >= result.upper);
    assert_eq!(first, Some(result.llrs.len() - 1), "{:?}", result.llrs);
    assert_eq!(result.games_played as usize, 2 * result.llrs.len());
    let elo = result.elo.expect("an estimate");
    assert!(elo.value > 0.0 && elo.los > 0.99, "{elo:?}");
    check_against_log(&result, &gate, dir.path());
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
    let result = super::gate(&new, &old, &league, &gate, dir.path()).await;
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
        seed: 1,
        openings: true,
        games_played: 6,
        llr: -2.951,
        lower: sprt.lower_bound(),
        upper: sprt.upper_bound(),
        pentanomial: [3, 0, 0, 0, 0],
        llrs: vec![-1.0, -2.0, -2.951],
        elo: None,
        log: "a.v3-vs-a.v2.jsonl".into(),
        started: "2026-12-05T02:00:00Z".into(),
        finished: Some("2026-12-05T02:01:00Z".into()),
    };
    assert_eq!(
        r.refusal(),
        "the SPRT gate against a.v2 did not accept it: LLR -2.95 in [-2.94, 2.94] after 3 pairs, \
         H0 accepted (the LLR reached the lower bound: elo0 = 0 or less rather than elo1 = 10 or more); \
         the set's log: gate/a.v3-vs-a.v2.jsonl"
    );
    r.verdict = Verdict::Failed;
    r.error = Some("bot A could not be started".into());
    assert_eq!(
        r.refusal(),
        "the SPRT gate against a.v2 did not accept it: LLR -2.95 in [-2.94, 2.94] after 3 pairs, \
         the test could not be played: bot A could not be started; the set's log: gate/a.v3-vs-a.v2.jsonl"
    );
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["verdict"], "failed");
    assert_eq!(json["llrs"], serde_json::json!([-1.0, -2.0, -2.951]));
}
