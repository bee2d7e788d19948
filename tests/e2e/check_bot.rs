//! `hus check-bot`: each misbehaviour gets the right diagnosis and exit status, good
//! bots pass every check, and `hus random-bot` plays whole sets.
//!
//! Where a verdict depends on time, the margin is the bot's own delay against the
//! deadline; a healthy bot's speed is never what a check hangs on (`GENEROUS` unless
//! the test is about time, and then the opponent is the built-in random mover).

use std::path::{Path, PathBuf};

use crate::common::*;

/// Every check of the report, in order.
const CHECKS: [&str; 12] = [
    "starts up",
    "flushes stdout",
    "keeps debug output off stdout",
    "sends well-formed messages",
    "plays legal pits",
    "answers only when asked",
    "answers in time",
    "keeps running",
    "exits when told",
    "leaves no processes behind",
    "plays whole games",
    "writes no warnings",
];

const MARKS: [&str; 4] = ["ok", "warning", "problem", "skipped"];

struct Checked {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    dir: LogDir,
}

impl Checked {
    /// The mark and summary of a check.
    fn check(&self, title: &str) -> (&str, &str) {
        self.stdout
            .lines()
            .find_map(|line| {
                let (mark, rest) = line.split_once(' ')?;
                let summary = rest.trim_start().strip_prefix(title)?.strip_prefix(": ")?;
                MARKS.contains(&mark).then_some((mark, summary))
            })
            .unwrap_or_else(|| panic!("no check {title:?} in:\n{}", self.stdout))
    }

    fn mark(&self, title: &str) -> &str {
        self.check(title).0
    }

    /// The indented lines under a check.
    fn details(&self, title: &str) -> Vec<&str> {
        let mut lines = self.stdout.lines();
        for line in lines.by_ref() {
            if line.split_once(' ').is_some_and(|(mark, rest)| {
                MARKS.contains(&mark) && rest.trim_start().starts_with(title)
            }) {
                break;
            }
        }
        lines
            .take_while(|l| l.starts_with("         "))
            .map(str::trim)
            .collect()
    }

    /// Asserts the mark, and that the summary contains `text`.
    fn expect(&self, title: &str, mark: &str, text: &str) {
        let (m, summary) = self.check(title);
        assert_eq!(m, mark, "{title}: {}", self.stdout);
        assert!(
            summary.contains(text),
            "{title}: {summary:?} should contain {text:?}\n{}",
            self.stdout
        );
    }

    fn detail_with(&self, title: &str, start: &str) -> &str {
        self.details(title)
            .into_iter()
            .find(|d| d.starts_with(start))
            .unwrap_or_else(|| panic!("{title}: no detail {start:?} in:\n{}", self.stdout))
    }

    fn marks(&self) -> Vec<&str> {
        CHECKS.iter().map(|t| self.mark(t)).collect()
    }
}

/// `hus check-bot BOT --seed 1 --log-dir TMP EXTRA...`, with `--games 2` unless
/// EXTRA says otherwise, and `GENEROUS` allowances unless EXTRA sets its own. Under
/// these, "starts up" warns only past 7.5 s and "answers in time" past 5 s: a healthy
/// bot is never warned, however loaded the machine.
fn check_bot(bot: &str, extra: &[&str]) -> Checked {
    let dir = LogDir::new();
    let log_dir = dir.path().to_str().expect("utf-8 path").to_string();
    let mut args = vec!["check-bot", bot, "--seed", "1", "--log-dir", &log_dir];
    if !extra.contains(&"--games") {
        args.extend_from_slice(&["--games", "2"]);
    }
    if !extra.contains(&"--move-time") {
        args.extend_from_slice(&GENEROUS[..2]);
    }
    if !extra.contains(&"--ready-time") {
        args.extend_from_slice(&GENEROUS[2..]);
    }
    args.extend_from_slice(extra);
    run(&args, dir)
}

fn run(args: &[&str], dir: LogDir) -> Checked {
    let output = hus(args);
    Checked {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        dir,
    }
}

/// A path printed after `prefix` on a line of its own.
fn printed_path(stdout: &str, prefix: &str) -> PathBuf {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|rest| PathBuf::from(rest.split([',', ';']).next().unwrap_or(rest).trim()))
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{stdout}"))
}

fn assert_all_ok(c: &Checked, bot: &str) {
    assert_eq!(c.code, Some(0), "{bot}: {}{}", c.stdout, c.stderr);
    assert_eq!(c.marks(), ["ok"; CHECKS.len()], "{bot}:\n{}", c.stdout);
    assert!(
        c.stdout.contains("\nno problems, no warnings.\n"),
        "{}",
        c.stdout
    );
}

#[test]
fn good_bots_pass_every_check() {
    // Without --log-dir: a clean check deletes its temporary directory.
    let dir = LogDir::new();
    let bot = random_bot();
    let mut args = vec!["check-bot", &bot, "--games", "2"];
    args.extend_from_slice(&GENEROUS);
    let c = run(&args, dir);
    assert_all_ok(&c, "random");
    let temp = printed_path(&c.stdout, "(the log was in the temporary directory ");
    assert!(temp.is_absolute(), "{}", c.stdout);
    assert!(!temp.exists(), "{} should be gone", temp.display());

    // With --log-dir: the log is kept, and it is a valid log of the games.
    let c = check_bot(&greedy_bot(), &[]);
    assert_all_ok(&c, "greedy");
    let log = printed_path(&c.stdout, "log: ");
    assert!(log.starts_with(c.dir.path()), "{}", log.display());
    let records = read_log(&log);
    verify_log(&records);
    assert_eq!(of_type(&records, "game-end").len(), 2);
    assert_eq!(named_header(&records)["bots"][1]["name"], "hus-random");
    // Seed 1 seats the bot both ways.
    c.expect(
        "plays whole games",
        "ok",
        "it moved first in 1 and second in 1",
    );

    let c = check_bot(&hus_random(5), &[]);
    assert_all_ok(&c, "hus random-bot");
}

#[test]
fn a_bot_that_does_not_flush() {
    let dir = LogDir::new();
    // Python block-buffers stdout on a pipe; the explicit buffer makes that so even
    // under PYTHONUNBUFFERED. Only the exit (at the end of stdin) flushes it.
    let script = |flush_ready: &str| {
        format!(
            r#"import io, json, sys
sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False), 1 << 16))
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write('{{"type":"ready","name":"no-flush"}}\n')
        {flush_ready}
    elif msg["type"] == "turn":
        sys.stdout.write(json.dumps({{"type": "move", "pit": msg["legal"][0]}}) + "\n")
    elif msg["type"] == "bye":
        break
sys.stdout.flush()
"#
        )
    };
    let never = dir.path().join("never_flushes.py");
    let moves = dir.path().join("flushes_only_ready.py");
    std::fs::write(&never, script("pass")).expect("write bot");
    std::fs::write(&moves, script("sys.stdout.flush()")).expect("write bot");
    let python = |p: &Path| format!("python3 {}", p.display());

    let wording = "your bot wrote its answer but did not flush stdout: flush after every line (print(..., flush=True), System.out.flush(), ";
    // The probe closes its stdin 2 s after the allowance, and waits 1 s more for the
    // line: an interpreter that takes 8 s to start and exit is not expected here.
    let c = check_bot(&python(&never), &["--ready-time", "5s"]);
    assert_eq!(c.code, Some(1), "{}{}", c.stdout, c.stderr);
    c.expect("flushes stdout", "problem", wording);
    let seen = c.detail_with(
        "flushes stdout",
        "it answered hello only when its stdin was closed",
    );
    assert!(
        seen.ends_with(r#"{"type":"ready","name":"no-flush"}"#),
        "{seen}"
    );
    c.expect(
        "starts up",
        "skipped",
        "its ready came only when its stdin was closed",
    );
    c.expect("plays whole games", "skipped", "not played");

    let c = check_bot(&python(&moves), &["--move-time", "200ms"]);
    assert_eq!(c.code, Some(1), "{}{}", c.stdout, c.stderr);
    c.expect("starts up", "ok", "ready after");
    c.expect("flushes stdout", "problem", wording);
    let seen = c.detail_with(
        "flushes stdout",
        "its ready came at once, but its first move only when its stdin was closed",
    );
    assert!(seen.ends_with(r#"{"type": "move", "pit": 4}"#), "{seen}");
}

#[test]
fn debug_text_on_stdout() {
    let c = check_bot(&misbehave("garbage"), &[]);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    c.expect(
        "keeps debug output off stdout",
        "problem",
        "it wrote text on stdout that is not a protocol message",
    );
    let details = c.details("keeps debug output off stdout");
    assert_eq!(details[0], "its line: thinking... pit 4 looks good");
    assert!(
        details
            .last()
            .is_some_and(|d| d.starts_with("fix: print debug output to stderr, not stdout")),
        "{details:?}"
    );
    // The malformed line is debug output, not also a malformed-message problem.
    assert_eq!(c.mark("sends well-formed messages"), "ok");
    c.expect("plays whole games", "problem", "0 won, 2 lost");
}

/// The position and legal pits under "plays legal pits" agree with the engine.
fn assert_position_and_legal(c: &Checked) {
    let position = c.detail_with("plays legal pits", "position: ");
    let notation = position
        .strip_prefix("position: ")
        .and_then(|p| p.split(" (").next())
        .expect("notation");
    let pos: engine::Position = notation.parse().expect("a position in notation");
    let legal: Vec<String> = pos.legal_moves().map(|p| p.to_string()).collect();
    assert_eq!(
        c.detail_with("plays legal pits", "legal pits were: "),
        format!("legal pits were: {}", legal.join(", "))
    );
}

#[test]
fn illegal_pits() {
    let c = check_bot(&misbehave("pit-out-of-range"), &[]);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    c.expect(
        "plays legal pits",
        "problem",
        "pit 16 does not exist (pits are 0 to 15)",
    );
    c.expect(
        "plays legal pits",
        "problem",
        "illegal-move in game 1 at ply ",
    );
    assert_position_and_legal(&c);
    assert_eq!(
        c.detail_with("plays legal pits", "its line: "),
        r#"its line: {"type": "move", "pit": 16}"#
    );

    let c = check_bot(&misbehave("pit-too-few"), &[]);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    c.expect("plays legal pits", "problem", "a move needs at least 2");
    assert_position_and_legal(&c);
    c.expect("keeps running", "ok", "it never crashed");
}

#[test]
fn time_outs() {
    // One game, which the bot begins (seed 1): the random mover has nothing to answer
    // before the bot's time-out, so 200 ms is only the bot's own deadline.
    let c = check_bot(
        &misbehave("never-answer"),
        &["--move-time", "200ms", "--games", "1"],
    );
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    c.expect("answers in time", "problem", "no move within 200 ms");
    c.expect("answers in time", "problem", "time-out in game 1 at ply ");
    // Closing its stdin brought nothing either: not a flushing problem.
    assert_eq!(c.mark("flushes stdout"), "ok");
}

#[test]
fn slow_moves_are_a_warning() {
    // The first move of each process at 60% of the time, the others at once: past the
    // warning (half the time) whatever the load, since a delay only adds to it, and
    // 1.6 s before the deadline.
    let c = check_bot(&misbehave("answer-at 0.6"), &["--move-time", "4s"]);
    assert_eq!(c.code, Some(0), "{}", c.stdout);
    c.expect("answers in time", "warning", "its slowest move took ");
    c.expect("answers in time", "warning", "of the 4000 ms allowed");
}

#[test]
fn crashes_point_to_stderr() {
    // Without --log-dir: a problem keeps the temporary directory.
    let dir = LogDir::new();
    let c = run(
        &[
            "check-bot",
            &misbehave("exit 3"),
            "--games",
            "2",
            "--seed",
            "1",
            GENEROUS[0],
            GENEROUS[1],
            GENEROUS[2],
            GENEROUS[3],
        ],
        dir,
    );
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    c.expect("keeps running", "problem", "crash in game 1 at ply ");
    c.expect("keeps running", "problem", "(exit status 3)");
    let stderr = printed_path(&c.stdout, "your bot's stderr: ");
    assert!(
        c.detail_with("keeps running", "fix: read its stderr, ")
            .contains(&stderr.display().to_string()),
        "{}",
        c.stdout
    );
    assert!(stderr.is_file(), "{}", stderr.display());
    let log = printed_path(&c.stdout, "log: ");
    assert!(log.is_file(), "{}", log.display());
    let temp = printed_path(&c.stdout, "(kept in the temporary directory ");
    assert!(log.starts_with(&temp), "{}", c.stdout);
    std::fs::remove_dir_all(&temp).expect("remove the kept directory");
}

#[test]
fn not_exiting_after_bye() {
    let c = check_bot(&misbehave("no-exit-after-bye"), &[]);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    c.expect(
        "exits when told",
        "problem",
        "your bot must exit when it reads bye or when stdin closes",
    );
    c.detail_with(
        "exits when told",
        "after bye and the end of its stdin it was still running 2 s later, and was stopped by SIGTERM",
    );
    // Everything else is fine.
    let problems = c.marks().iter().filter(|m| **m != "ok").count();
    assert_eq!(problems, 1, "{}", c.stdout);
}

#[test]
fn slow_start_up_is_a_warning() {
    // Ready 2.5 s after hello: past the warning (a quarter of the allowance) whatever
    // the load, since a delay only adds to it, and 5.5 s before the deadline for the
    // interpreter's own start.
    let c = check_bot(&misbehave("late-hello 2.5"), &["--ready-time", "8s"]);
    assert_eq!(c.code, Some(0), "{}", c.stdout);
    c.expect("starts up", "warning", "its slowest start took ");
    c.expect("starts up", "warning", "of the 8000 ms allowance");
    assert!(
        c.stdout.contains("\nno problems, 1 warning.\n"),
        "{}",
        c.stdout
    );
}

#[test]
fn two_moves_for_one_turn() {
    let c = check_bot(&misbehave("two-moves"), &[]);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    c.expect(
        "answers only when asked",
        "problem",
        "after its first move it sent a line that nobody asked for",
    );
    assert_eq!(
        c.detail_with("answers only when asked", "its line: "),
        r#"its line: {"type": "move", "pit": 4}"#
    );
}

#[test]
fn a_command_that_does_not_exist() {
    let c = check_bot("hus-no-such-bot --fast", &[]);
    assert_eq!(c.code, Some(2), "{}{}", c.stdout, c.stderr);
    assert!(
        c.stderr.starts_with(
            "error: cannot start the bot \"hus-no-such-bot --fast\": No such file or directory"
        ),
        "{}",
        c.stderr
    );
    assert!(
        c.stderr.contains("is the program installed"),
        "{}",
        c.stderr
    );
    assert!(!c.stdout.contains("ok "), "{}", c.stdout);

    let c = check_bot(&random_bot(), &["--games", "0"]);
    assert_eq!(c.code, Some(2));
    assert!(
        c.stderr.contains("--games must be 1 to 1000"),
        "{}",
        c.stderr
    );
}

#[test]
fn random_bot_plays_itself() {
    let p = play(
        &hus_random(1),
        &hus_random(2),
        &["--games", "7", "--seed", "3"],
    );
    assert_eq!(p.summary["games_played"], 7);
    assert!(of_type(&p.records, "fault").is_empty(), "{:?}", p.records);
    for b in 0..2 {
        assert_eq!(p.summary["bots"][b]["faults"], 0);
        assert_eq!(p.summary["bots"][b]["name"], "hus-random");
    }
    let shutdowns = of_type(&p.records, "shutdown");
    assert_eq!(shutdowns.len(), 2);
    assert!(shutdowns.iter().all(|s| s["stopped_by"] == "itself"));
}

/// The check as a library (`referee::check_bot`, what the server runs on an uploaded
/// version, and what `hus check-bot` runs): given its set (here a clock, not a time per
/// move), its bot and the random mover's command, with the uploaded version in the
/// log's header. Its future is `Send`, for a server's runtime.
fn check_as_library(
    bot: &str,
    version: Option<referee::UploadedVersion>,
) -> (referee::CheckVerdict, Vec<String>, LogDir) {
    use referee::{check_bot, BotSpec, CheckConfig, Limits, SetConfig, TimeControl};
    let dir = LogDir::new();
    let config = CheckConfig {
        bot: BotSpec::parse(bot).expect("command"),
        limits: Limits::default(),
        opponent: CheckConfig::random_mover(Path::new(env!("CARGO_BIN_EXE_hus")), 3),
        set: SetConfig {
            rules: engine::Rules::new(engine::Preset::Hus, 8).expect("rules"),
            games: 2,
            seed: referee::check_seed(1, 2),
            time: TimeControl::Clock {
                base: std::time::Duration::from_secs(20),
                increment: std::time::Duration::from_millis(500),
            },
            ready_time: std::time::Duration::from_secs(30),
            early_stop: false,
            openings: Vec::new(),
            sprt: None,
        },
        version,
    };
    let mut said = Vec::new();
    let mut progress = |line: &str| -> anyhow::Result<()> {
        said.push(line.to_string());
        Ok(())
    };
    let future = check_bot(&config, dir.path(), &mut progress);
    fn is_send<T: Send>(_: &T) {}
    is_send(&future);
    let verdict = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(future)
        .expect("the check runs");
    (verdict, said, dir)
}

#[test]
fn the_check_as_a_library_passes_a_good_bot_on_a_clock_and_names_its_version() {
    let version = referee::UploadedVersion {
        bot: "alpha".into(),
        number: 2,
        sha256: "ab".repeat(32),
    };
    let bot = hus_random(9);
    let (verdict, said, dir) = check_as_library(&bot, Some(version));
    assert!(verdict.passed, "{verdict:?}");
    assert_eq!(
        (verdict.problems, verdict.first_problem.as_deref()),
        (0, None)
    );
    assert_eq!(
        (verdict.fault.as_ref(), verdict.stderr.as_str()),
        (None, "")
    );
    let titles: Vec<&str> = verdict
        .checks
        .iter()
        .map(|c| {
            let (_, rest) = c.split_once(' ').expect("a mark");
            rest.trim_start().split_once(": ").expect("a title").0
        })
        .collect();
    assert_eq!(titles, CHECKS);
    let in_time = verdict
        .checks
        .iter()
        .find(|c| c.contains("answers in time"))
        .expect("the time check");
    assert!(
        in_time.starts_with("ok       answers in time: ")
            && in_time.ends_with(" ms of the 20000 ms on its clock at the start\n"),
        "{in_time}"
    );
    assert_eq!(
        said,
        vec![
            format!(
                "hus check-bot: {bot}\n  hus at width 8, a clock of 20000 ms + 500 ms per move, 30000 ms to start, seed {}\n",
                referee::check_seed(1, 2)
            ),
            "  playing 2 games against the built-in random mover ...\n".to_string(),
        ]
    );
    let log = verdict.log.as_ref().expect("the set's log");
    assert!(log.starts_with(dir.path()));
    let records = read_log(log);
    assert_eq!(
        records[0]["bots"][0]["version"],
        serde_json::json!({"bot": "alpha", "number": 2, "sha256": "ab".repeat(32)})
    );
    assert_eq!(records[0]["bots"][1].get("version"), None);
    assert_eq!(records[0]["time"]["mode"], "clock");
}

#[test]
fn the_check_as_a_library_gives_the_first_fault_and_the_end_of_stderr() {
    let (verdict, _, _dir) = check_as_library(&misbehave("garbage-saying-game"), None);
    assert!(!verdict.passed);
    assert_eq!(verdict.problems, 2, "{:#?}", verdict.checks);
    assert_eq!(
        verdict.first_problem.as_deref(),
        Some("problem  keeps debug output off stdout: it wrote text on stdout that is not a protocol message")
    );
    let fault = verdict.fault.as_ref().expect("a fault");
    assert_eq!(
        (fault.kind, fault.detail.as_str()),
        (
            referee::FaultKind::Malformed,
            "line is not valid JSON: expected ident at line 1 column 2"
        )
    );
    assert!(
        verdict.stderr.ends_with("my last words in game 2\n"),
        "{:?}",
        verdict.stderr
    );
    assert!(verdict.log.is_some());
}
