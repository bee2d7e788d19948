//! `hus match --sprt`: game pairs until the test decides. A strong bot against a weak one
//! accepts H1, two equal bots accept H0 with a high elo0, the printed LLR is what the
//! `ratings` crate computes from the log's games, `hus replay` checks the stop, bad
//! `--sprt` values are exact errors, and Ctrl-C stops with the figures so far.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ratings::{Outcome, Pentanomial, Sprt};
use serde_json::Value;

use crate::common::*;
use crate::sample_bots::alphabeta;

/// A's outcome in each game of a log, from its `game-end` records.
fn outcomes(records: &[Value]) -> Vec<Outcome> {
    of_type(records, "game-end")
        .iter()
        .map(|e| match e["winner"].as_u64() {
            Some(0) => Outcome::Win,
            Some(_) => Outcome::Loss,
            None => Outcome::Draw,
        })
        .collect()
}

/// The pentanomial after each whole pair of the games.
fn pairs_after_each(games: &[Outcome]) -> Vec<Pentanomial> {
    let mut p = Pentanomial::default();
    games
        .chunks_exact(2)
        .map(|pair| {
            p.add_pair(pair[0], pair[1]).expect("a pair");
            p
        })
        .collect()
}

/// `hus match A B --sprt SPEC EXTRA... --log-dir TMP` in text mode: its stdout and
/// the log's records.
fn sprt_match(a: &str, b: &str, spec: &str, extra: &[&str]) -> (String, Vec<Value>, LogDir) {
    let dir = LogDir::new();
    let mut args = vec![
        "match",
        a,
        b,
        "--sprt",
        spec,
        "--log-dir",
        dir.path().to_str().expect("utf-8"),
    ];
    args.extend_from_slice(&GENEROUS);
    args.extend_from_slice(extra);
    let out = hus(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = file_ending(dir.path(), ".jsonl");
    let records = read_log(&log);
    verify_log(&records);
    let replay = hus(&["replay", log.to_str().expect("utf-8")]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    (stdout, records, dir)
}

/// Every `pair K ...` line printed, and the LLR it shows, against the `ratings` crate
/// on the log's games.
fn check_printed_llrs(stdout: &str, records: &[Value], sprt: &Sprt) {
    let games = outcomes(records);
    let expected = pairs_after_each(&games);
    let printed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("pair ")).collect();
    assert_eq!(printed.len(), expected.len(), "{stdout}");
    for (k, (line, pairs)) in printed.iter().zip(&expected).enumerate() {
        let status = sprt.pentanomial(pairs);
        let a: f64 = [games[2 * k], games[2 * k + 1]]
            .iter()
            .map(|o| o.score())
            .sum();
        let c = pairs.counts;
        assert_eq!(
            *line,
            format!(
                "pair {} (games {}-{}): A {}-{} B; LLR {:.2} (bounds {:.2}, {:.2}); pentanomial [{}, {}, {}, {}, {}]",
                k + 1,
                2 * k + 1,
                2 * k + 2,
                a,
                2.0 - a,
                status.llr,
                status.lower_bound,
                status.upper_bound,
                c[0],
                c[1],
                c[2],
                c[3],
                c[4]
            )
        );
    }
    // The log's set-end holds the last figures, to the last bit the crate gives.
    let end = records.last().expect("set-end");
    let last = expected.last().expect("a pair");
    let status = sprt.pentanomial(last);
    assert_eq!(end["sprt"]["llr"].as_f64(), Some(status.llr));
    assert_eq!(end["sprt"]["pentanomial"], serde_json::json!(last.counts));
}

#[test]
fn a_strong_bot_against_a_weak_one_accepts_h1() {
    let strong = format!("{} --depth 3", alphabeta());
    let weak = hus_random(5);
    let spec = "elo0=0,elo1=200,alpha=0.05,beta=0.05";
    let sprt = Sprt::new(0.0, 200.0, 0.05, 0.05).expect("valid");
    let (stdout, records, _dir) =
        sprt_match(&strong, &weak, spec, &["--games", "100", "--seed", "3"]);
    check_printed_llrs(&stdout, &records, &sprt);
    let header = &records[0];
    assert_eq!(header["games"], 100);
    assert_eq!(
        header["sprt"],
        serde_json::json!({"elo0": 0.0, "elo1": 200.0, "alpha": 0.05, "beta": 0.05})
    );
    let end = records.last().expect("set-end");
    assert_eq!(end["type"], "set-end");
    assert_eq!(end["sprt"]["decision"], "accept-h1");
    let played = end["games_played"].as_u64().expect("games");
    assert!(played % 2 == 0 && played <= 40, "{played} games");
    // It stopped at the first pair whose LLR reached the bound, not later.
    let pairs = pairs_after_each(&outcomes(&records));
    let decided: Vec<bool> = pairs
        .iter()
        .map(|p| sprt.pentanomial(p).llr >= sprt.upper_bound())
        .collect();
    assert_eq!(decided.iter().position(|d| *d), Some(decided.len() - 1));
    // Paired: the second game of each pair goes to the other bot.
    let firsts: Vec<u64> = of_type(&records, "game-start")
        .iter()
        .map(|g| g["first"].as_u64().expect("first"))
        .collect();
    for pair in firsts.chunks_exact(2) {
        assert_eq!(pair[0] + pair[1], 1, "{firsts:?}");
    }
    assert!(
        stdout.contains(&format!(
            "H1 accepted after {} ({played} games): the LLR {:.2} reached the upper bound: the Elo difference of A over B is elo1 = 200 or more rather than elo0 = 0 or less",
            plural(played / 2, "pair", "pairs"),
            end["sprt"]["llr"].as_f64().expect("llr")
        )),
        "{stdout}"
    );
    let estimate = pairs.last().expect("pairs").elo(0.95).expect("an estimate");
    assert!(
        stdout.contains(&format!(
            "Elo difference of A over B: {:+.1}, 95% interval [{:+.1}, {:+.1}]; likelihood of superiority {:.1}%",
            estimate.elo,
            estimate.low,
            estimate.high,
            100.0 * estimate.los
        )),
        "{stdout}"
    );

    // --json: the same set (deterministic bots, same seed), its figures in the summary.
    let p = play(
        &strong,
        &weak,
        &["--sprt", spec, "--games", "100", "--seed", "3", "--json"],
    );
    let j = &p.summary["sprt"];
    assert_eq!(j["decision"], "accept-h1");
    assert_eq!(j["pairs"].as_u64(), Some(played / 2));
    assert_eq!(j["llr"], end["sprt"]["llr"]);
    assert_eq!(j["elo"]["value"].as_f64(), Some(estimate.elo));
    assert_eq!(j["elo"]["low"].as_f64(), Some(estimate.low));
    assert_eq!(j["los"].as_f64(), Some(estimate.los));
    assert_eq!(p.summary["games_played"].as_u64(), Some(played));
}

#[test]
fn two_equal_bots_accept_h0_when_elo0_is_high() {
    let bot = format!("{} --depth 2", alphabeta());
    let book = root().join("openings/hus-8.txt");
    let spec = "elo0=200,elo1=400";
    let sprt = Sprt::new(200.0, 400.0, 0.05, 0.05).expect("valid");
    let (stdout, records, _dir) = sprt_match(
        &bot,
        &bot,
        spec,
        &["--openings", book.to_str().expect("utf-8"), "--seed", "7"],
    );
    check_printed_llrs(&stdout, &records, &sprt);
    assert_eq!(records[0]["games"], 20_000, "the default most games");
    let end = records.last().expect("set-end");
    assert_eq!(end["sprt"]["decision"], "accept-h0");
    let played = end["games_played"].as_u64().expect("games");
    assert!(played <= 40, "{played} games");
    // Both games of each pair from the same opening.
    let starts = of_type(&records, "game-start");
    for pair in starts.chunks_exact(2) {
        assert_eq!(pair[0]["position"], pair[1]["position"]);
    }
    assert!(stdout.contains("H0 accepted after "), "{stdout}");
}

#[test]
fn bad_sprt_values_are_exact_errors() {
    let dir = LogDir::new();
    let d = dir.path().to_str().expect("utf-8");
    let r = random_bot();
    for (spec, extra, message) in [
        (
            "elo0=0,elo1=abc",
            &[][..],
            "invalid --sprt: elo1=abc: \"abc\" is not a number",
        ),
        (
            "elo0=0,elo2=5",
            &[][..],
            "invalid --sprt: unknown key \"elo2\" (the keys are elo0, elo1, alpha and beta)",
        ),
        (
            "elo0,elo1=5",
            &[][..],
            "invalid --sprt: \"elo0\" is not KEY=VALUE (the keys are elo0, elo1, alpha and beta)",
        ),
        (
            "elo0=0;elo1=5",
            &[][..],
            "invalid --sprt: elo0=0;elo1=5: \"0;elo1=5\" is not a number",
        ),
        (
            "elo1=5",
            &[][..],
            "invalid --sprt: elo0 is missing (e.g. elo0=0,elo1=5)",
        ),
        (
            "elo0=0,elo1=5,elo1=6",
            &[][..],
            "invalid --sprt: elo1 is given twice",
        ),
        (
            "elo0=0,elo1=5",
            &["--games", "7"][..],
            "--games must be even with --sprt (games are played in pairs), got 7",
        ),
        (
            "elo0=0,elo1=5",
            &["--early-stop"][..],
            "--early-stop cannot be combined with --sprt (the test decides when to stop)",
        ),
    ] {
        let mut args = vec!["match", &r, &r, "--sprt", spec, "--log-dir", d];
        args.extend_from_slice(extra);
        let out = hus(&args);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim_end(),
            format!("error: {message}"),
            "{spec}"
        );
    }
    // The test's own checks (ratings::Sprt::new) come through with their words.
    for (spec, word) in [
        ("elo0=5,elo1=0", "elo0"),
        ("elo0=0,elo1=5,alpha=1.5", "alpha"),
    ] {
        let out = hus(&["match", &r, &r, "--sprt", spec, "--log-dir", d]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: invalid --sprt: ") && err.contains(word),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_dir(d).expect("dir").count(),
        0,
        "no log written"
    );
}

/// `hus replay` checks the stop: a set-end whose decision the games do not support,
/// and a game after the decision, are refused.
#[test]
fn replay_checks_the_sprt_stop() {
    let (_, records, dir) = sprt_match(
        &format!("{} --depth 3", alphabeta()),
        &hus_random(5),
        "elo0=0,elo1=200",
        &["--games", "100", "--seed", "3"],
    );
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    let run = |lines: &[String]| {
        let path = dir.broken("altered.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").expect("write");
        let out = hus(&["replay", path.to_str().expect("utf-8")]);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
        )
    };
    let last = lines.len() - 1;
    let mut end = records[last].clone();
    end["sprt"]["decision"] = Value::from("none");
    let mut altered = lines.clone();
    altered[last] = end.to_string();
    let counts = records[last]["sprt"]["pentanomial"]
        .to_string()
        .replace(',', ", ");
    assert_eq!(
        run(&altered),
        (
            Some(1),
            format!(
                "CORRUPT: line {}: set-end: the log says sprt decision \"none\" with pairs {counts} but the games give \"accept-h1\" with {counts}",
                last + 1
            )
        )
    );
    // The header without its SPRT: then the set stopped early for no reason.
    let mut header = records[0].clone();
    header.as_object_mut().expect("object").remove("sprt");
    let mut altered = lines.clone();
    altered[0] = header.to_string();
    let played = records[last]["games_played"].as_u64().expect("games");
    let (code, err) = run(&altered);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "set-end after {played} of 100 games, but the set was not stopped early"
        )),
        "{err}"
    );
}

/// Ctrl-C stops the run and prints what the pairs so far say.
#[test]
fn ctrl_c_stops_with_the_figures_so_far() {
    let dir = LogDir::new();
    let paced = |seed: u32| {
        format!(
            "python3 {} {seed} 20",
            root().join("tests/bots/paced.py").display()
        )
    };
    let child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "match",
            &paced(1),
            &paced(2),
            "--sprt",
            "elo0=0,elo1=5",
            "--seed",
            "1",
        ])
        .args(GENEROUS)
        .arg("--log-dir")
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus runs");
    // Wait for two whole pairs in the log.
    let started = Instant::now();
    loop {
        let ends = std::fs::read_dir(dir.path())
            .expect("log dir")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .map(|e| {
                std::fs::read_to_string(e.path())
                    .unwrap_or_default()
                    .matches("\"game-end\"")
                    .count()
            })
            .sum::<usize>();
        if ends >= 4 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: a signal to our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().expect("hus exits");
    assert_eq!(out.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let records = read_log(&file_ending(dir.path(), ".jsonl"));
    assert_eq!(
        records.last().map(|r| r["type"].clone()),
        Some("aborted".into())
    );
    let games = outcomes(&records);
    let pairs = pairs_after_each(&games);
    let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05).expect("valid");
    let llr = pairs.last().map_or(0.0, |p| sprt.pentanomial(p).llr);
    assert!(
        stdout.contains(&format!(
            "no decision: stopped by SIGINT after {} ({}), the LLR {llr:.2} between the bounds",
            plural(pairs.len() as u64, "pair", "pairs"),
            plural(games.len() as u64, "game", "games")
        )),
        "{stdout}"
    );
    assert!(stdout.contains("Elo difference of A over B: "), "{stdout}");
}

/// Checks a gate's test (`test`, as the API and the result file give it) against its
/// batches' logs in the gate's directory `gate`: each passes `hus replay`, each batch's
/// pentanomial is its log's, and the LLR after each batch counted is the `ratings`
/// crate's (the computation of `hus match --sprt`) on the games of the batches counted
/// so far (to within 1e-12: JSON read back by serde_json may lose the last bit).
/// Returns the pairs counted.
pub(crate) fn check_gate_batches(gate: &std::path::Path, test: &Value, sprt: &Sprt) -> u64 {
    let dir = gate.join(test["log"].as_str().expect("log"));
    let batches = test["batches"].as_array().expect("batches");
    let mut pairs = Pentanomial::default();
    let mut llrs = Vec::new();
    for batch in batches {
        let log = dir.join(batch["log"].as_str().expect("a batch's log"));
        let replay = hus(&["replay", &log.display().to_string()]);
        assert_eq!(
            replay.status.code(),
            Some(0),
            "{}: {}",
            log.display(),
            String::from_utf8_lossy(&replay.stderr)
        );
        let records = read_log(&log);
        let mut own = Pentanomial::default();
        for pair in outcomes(&records).chunks_exact(2) {
            own.add_pair(pair[0], pair[1]).expect("a pair");
            pairs.add_pair(pair[0], pair[1]).expect("a pair");
        }
        assert_eq!(
            batch["pentanomial"],
            serde_json::json!(own.counts),
            "{batch}"
        );
        let llr = sprt.pentanomial(&pairs).llr;
        let shown = batch["llr"].as_f64().expect("a batch's llr");
        assert!((shown - llr).abs() <= 1e-12, "{batch} {llr}");
        llrs.push(llr);
    }
    let shown: Vec<f64> = test["llrs"]
        .as_array()
        .expect("llrs")
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect();
    assert_eq!(shown.len(), llrs.len(), "{test}");
    for (a, b) in shown.iter().zip(&llrs) {
        assert!((a - b).abs() <= 1e-12, "{shown:?} {llrs:?}");
    }
    assert_eq!(
        test["pentanomial"],
        serde_json::json!(pairs.counts),
        "{test}"
    );
    let last = llrs.last().copied().unwrap_or(0.0);
    assert!(
        (test["llr"].as_f64().expect("llr") - last).abs() <= 1e-12,
        "{test}"
    );
    pairs.pairs().expect("pairs")
}

/// The SPRT gate of the server (`server::gate::gate`, docs/upload.md) plays its test in
/// batches: batch 0 is the set `hus match --sprt` plays with the same bots, book and
/// seed and `--games` twice the batch's pairs (the same games: each game's winner,
/// length and last position, and the LLR hus match prints after its last pair is the
/// gate's after batch 0), and the LLR after each batch is the one `hus match --sprt`
/// computes on the games of the batches so far.
#[test]
fn the_gate_plays_the_set_hus_match_sprt_plays() {
    let greedy = format!("{} 2", greedy_bot());
    let random = format!("{} 1", random_bot());
    let book = root().join("openings/hus-8.txt");
    let book_arg = book.to_str().expect("utf-8");
    let spec = "elo0=0,elo1=10";
    let (stdout, records, _dir) = sprt_match(
        &greedy,
        &random,
        spec,
        &["--games", "8", "--openings", book_arg, "--seed", "11"],
    );
    let sprt = Sprt::new(0.0, 10.0, 0.05, 0.05).expect("valid");

    let tmp = LogDir::new();
    let text = format!(
        "seed = 11\nmove_time = \"10s\"\nready_time = \"30s\"\nopenings = {book:?}\n\
         gate = \"sprt elo0=0 elo1=10 games=400 batch=4\"\n\
         [[bot]]\nname = \"x\"\ncommand = \"x\"\n[[bot]]\nname = \"y\"\ncommand = \"y\"\n"
    );
    let league = league::LeagueConfig::parse(&tmp.path().join("L.toml"), &text).expect("a league");
    let gate = league.gate.expect("a gate");
    let bot = |name: &str, command: &str| league::BotConfig {
        name: name.to_string(),
        transport: league::Transport::Process {
            spec: referee::BotSpec::parse(command).expect("a command"),
            limits: referee::Limits::default(),
        },
        version: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // One batch at a time: batch 0 is counted first.
    let result = runtime.block_on(server::gate::gate(
        &bot("g.v2", &greedy),
        &bot("g.v1", &random),
        &league,
        &gate,
        tmp.path(),
        1,
    ));
    assert_eq!(
        result.verdict,
        server::gate::Verdict::Accepted,
        "{result:?}"
    );
    assert_eq!(result.batches[0].batch, 0);
    let gated = read_log(
        &tmp.path()
            .join("gate")
            .join(&result.log)
            .join(&result.batches[0].log),
    );
    let games = |records: &[Value]| -> Vec<(Value, Value, Value)> {
        of_type(records, "game-end")
            .iter()
            .map(|e| {
                (
                    e["winner"].clone(),
                    e["plies"].clone(),
                    e["position"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(games(&gated), games(&records));
    let starts = |records: &[Value]| -> Vec<(Value, Value)> {
        of_type(records, "game-start")
            .iter()
            .map(|g| (g["first"].clone(), g["position"].clone()))
            .collect()
    };
    assert_eq!(starts(&gated), starts(&records));
    // hus match's figures after its last pair: the gate's after batch 0, to the last bit.
    let end = records.last().expect("set-end")["sprt"].clone();
    assert_eq!(end["llr"].as_f64(), Some(result.llrs[0]));
    assert_eq!(
        end["pentanomial"],
        serde_json::json!(result.batches[0].pentanomial)
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("pair ")).collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(
        lines[3].contains(&format!("; LLR {:.2} (bounds", result.llrs[0])),
        "{}",
        lines[3]
    );
    // Every batch replays, and the LLR after each is the ratings crate's on the games.
    let test = serde_json::to_value(&result).expect("json");
    let pairs = check_gate_batches(&tmp.path().join("gate"), &test, &sprt);
    assert_eq!(pairs, result.pairs());
    assert!(result.llr >= result.upper);
    assert!(result.llrs[..result.llrs.len() - 1]
        .iter()
        .all(|l| *l < result.upper));
}
