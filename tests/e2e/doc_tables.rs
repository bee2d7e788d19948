//! The field tables of PROTOCOL.md, LOGS.md and README.md against what the referee
//! really sends and writes. A corpus of sets is played once (faults, restarts, a bot that
//! fails to start, both time controls, every preset, openings with an SPRT, a set
//! stopped by SIGINT), with one
//! bot's session recorded line by line; then every message, record and summary must
//! have each of its fields in its table, and each documented field must turn up.
//! Adding a field to a message without its row, or leaving a row for a field that is
//! gone, fails here.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::doc_support::*;

/// Everything the corpus of sets produced.
pub struct Corpus {
    /// Messages the recorded bot received, and the lines it sent.
    pub received: Vec<Value>,
    pub sent: Vec<Value>,
    /// Every record of every log.
    pub records: Vec<Value>,
    /// Every `--json` summary.
    pub summaries: Vec<Value>,
}

fn hus_random(seed: u32) -> String {
    format!("'{}' random-bot --seed {seed}", env!("CARGO_BIN_EXE_hus"))
}

pub fn greedy(seed: u32) -> String {
    format!("{} {seed}", bot("sample-bots/python/greedy_bot.py"))
}

/// Plays the corpus once per test run.
pub fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let sets = [
            // Faults in every game (a line of prose at the opponent's second turn),
            // restarts, result with fault_by and detail.
            record_set(
                &greedy(1),
                &misbehave("garbage --on 2"),
                &["--games", "3", "--seed", "2", "--move-time", "2s"],
            ),
            // The opponent answers hello with a ready whose name is a number: a fault of
            // the start-up stage, before the game it costs.
            record_set(
                &greedy(1),
                &misbehave("ready-name 7"),
                &["--games", "1", "--seed", "1"],
            ),
            // A chess clock: opponent_time_ms, the clock shape of time.
            record_set(
                &greedy(2),
                &hus_random(3),
                &["--games", "1", "--seed", "3", "--clock", "60s+1s"],
            ),
            // The other presets (rulebook captures lift the landing pit's own seeds).
            record_set(
                &greedy(3),
                &hus_random(4),
                &["--games", "2", "--seed", "4", "--rules", "rulebook"],
            ),
            record_set(
                &greedy(4),
                &hus_random(5),
                &[
                    "--games",
                    "1",
                    "--seed",
                    "5",
                    "--rules",
                    "mancala-world",
                    "--width",
                    "9",
                ],
            ),
            // Openings and an SPRT: header.openings and header.sprt, games in pairs,
            // set-end.sprt and the summary's sprt figures (wide hypotheses and error
            // rates, so that the test decides in a few pairs).
            record_set(
                &greedy(5),
                &hus_random(6),
                &[
                    "--seed",
                    "6",
                    "--openings",
                    &root().join("openings/hus-8.txt").display().to_string(),
                    "--sprt",
                    "elo0=0,elo1=400,alpha=0.2,beta=0.2",
                    "--games",
                    "40",
                ],
            ),
            // A team match: hello.team, game.order, mate fields of the records; the
            // recorded bot's partner faults (garbage at its second turn), so the
            // recorded bot hears fault_by "you".
            record_sides(
                &[&greedy(6), &misbehave("garbage --on 2")],
                &[&hus_random(7), &hus_random(8)],
                &["--games", "2", "--seed", "7", "--team-names", "red", "blue"],
            ),
        ];
        let mut corpus = Corpus {
            received: Vec::new(),
            sent: Vec::new(),
            records: aborted_log(),
            summaries: Vec::new(),
        };
        // An uploaded version as bot A: header.bots[].version.
        let dir = LogDir::new();
        let version = referee::UploadedVersion {
            bot: "alpha".into(),
            number: 1,
            sha256: "0".repeat(64),
        };
        corpus
            .records
            .extend(read_log(&play_version_set(dir.path(), version, 1)));
        for set in sets {
            corpus.received.extend(set.received);
            corpus.sent.extend(set.sent);
            corpus.records.extend(set.records);
            corpus.summaries.push(set.summary);
        }
        corpus
    })
}

/// The log of a set stopped by SIGINT while a bot thinks: it ends with `aborted`.
fn aborted_log() -> Vec<Value> {
    let dir = LogDir::new();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["match", &misbehave("never-answer"), &random_bot()])
        .args(["--move-time", "60s", "--seed", "1", "--quiet", "--log-dir"])
        .arg(dir.path())
        .spawn()
        .expect("hus runs");
    // Wait for the game to start, then stop the referee as Ctrl-C would.
    let started = Instant::now();
    loop {
        let begun = std::fs::read_dir(dir.path())
            .expect("log dir")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("\"game-start\"")));
        if begun {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the set never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = nix_pid(&child);
    // SAFETY: sending a signal to a child process we started and have not reaped.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let status = child.wait().expect("hus exits");
    assert_eq!(status.code(), Some(130));
    let records = read_log(&file_ending(dir.path(), ".jsonl"));
    assert_eq!(
        records.last().map(|r| r["type"].clone()),
        Some("aborted".into())
    );
    records
}

fn nix_pid(child: &std::process::Child) -> i32 {
    i32::try_from(child.id()).expect("a pid")
}

/// The rows of each `#### \`type\`` message of a PROTOCOL.md section.
fn message_tables(part: &str) -> Vec<(String, Vec<Row>, Option<usize>)> {
    named_headings(part, 4)
        .into_iter()
        .map(|name| {
            let text = section(part, &format!("#### `{name}`"));
            let rows = field_rows(text);
            let present = text
                .lines()
                .find(|l| l.starts_with("| field |"))
                .and_then(|l| l.split('|').map(str::trim).position(|c| c == "present"))
                .map(|col| col - 1);
            (name, rows, present)
        })
        .collect()
}

fn of_kind(values: &[Value], kind: &str) -> Vec<Value> {
    values
        .iter()
        .filter(|v| v["type"] == kind)
        .cloned()
        .collect()
}

#[test]
fn protocol_tables_match_the_messages_bots_receive() {
    let corpus = corpus();
    let protocol = doc("PROTOCOL.md");
    let part = section(&protocol, "### Referee to bot");
    let tables = message_tables(part);
    let names: Vec<&str> = tables.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["hello", "game", "turn", "result", "bye"]);
    for v in &corpus.received {
        let kind = v["type"].as_str().expect("a type");
        assert!(
            names.contains(&kind),
            "a {kind} message is not documented: {v}"
        );
    }
    for (name, rows, present) in &tables {
        let seen = of_kind(&corpus.received, name);
        check_fields(&format!("PROTOCOL.md `{name}`"), rows, &seen, *present);
        check_types(&format!("PROTOCOL.md `{name}`"), rows, &seen);
    }
}

#[test]
fn protocol_tables_match_what_a_bot_sends() {
    let corpus = corpus();
    let protocol = doc("PROTOCOL.md");
    let part = section(&protocol, "### Bot to referee");
    let tables = message_tables(part);
    let names: Vec<&str> = tables.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["ready", "move"]);
    for (name, rows, present) in &tables {
        let seen = of_kind(&corpus.sent, name);
        check_fields(&format!("PROTOCOL.md `{name}`"), rows, &seen, *present);
        check_types(&format!("PROTOCOL.md `{name}`"), rows, &seen);
    }
}

#[test]
fn logs_tables_match_the_records_written() {
    let corpus = corpus();
    let logs = doc("LOGS.md");
    let part = section(&logs, "## Records");
    let names = named_headings(part, 3);
    assert_eq!(
        names,
        [
            "header",
            "ready",
            "game-start",
            "move",
            "fault",
            "game-end",
            "restart",
            "shutdown",
            "set-end",
            "aborted"
        ]
    );
    for r in &corpus.records {
        let kind = r["type"].as_str().expect("a type");
        assert!(
            names.iter().any(|n| n == kind),
            "a {kind} record is not documented: {r}"
        );
    }
    // A stall of the referee's own (LOGS.md, "A stopped referee") adds a field that a
    // loaded machine may give any move of the corpus, and none at all on an idle one:
    // documented in its own table, it is taken off before the records' tables are
    // checked (tests/e2e/stalls.rs makes one and checks it).
    let stall_rows = table_rows(section(&logs, "## A stopped referee"), "record");
    let extra: Vec<(String, String)> = stall_rows
        .iter()
        .map(|r| {
            (
                backticked(&r.cells[0])[0].clone(),
                backticked(&r.cells[1])[0].clone(),
            )
        })
        .collect();
    assert_eq!(extra, [("move".to_string(), "stall_ms".to_string())]);
    for name in &names {
        let rows = field_rows(section(part, &format!("### `{name}`")));
        let mut seen = of_kind(&corpus.records, name);
        for record in &mut seen {
            for (kind, field) in &extra {
                if kind == name {
                    record.as_object_mut().map(|o| o.remove(field));
                }
            }
        }
        check_fields(&format!("LOGS.md `{name}`"), &rows, &seen, None);
    }
}

#[test]
fn readme_table_of_the_match_json_summary_matches_it() {
    let corpus = corpus();
    let readme = doc("README.md");
    let rows = field_rows(section(&readme, "### The `--json` summary"));
    check_fields("README `--json` summary", &rows, &corpus.summaries, None);
}

/// `hus line --json` for lines that show every field: captures and relays, a
/// repetition, an illegal pit, a game that goes on.
pub fn line_json(args: &[&str]) -> Value {
    let mut all = vec!["line", "--json"];
    all.extend_from_slice(args);
    let out = hus(&all);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "hus {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("hus line --json prints JSON")
}

pub const WALKERS: &str = "hus 8 2,1,0,0,0,0,0,0/0,0,0,0,0,0,0,0 2,1,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0";

pub fn walker_pits() -> Vec<String> {
    (0..16)
        .flat_map(|p| [p.to_string(), p.to_string()])
        .collect()
}

#[test]
fn readme_table_of_hus_line_json_matches_it() {
    let readme = doc("README.md");
    let rows = field_rows(section(&readme, "### Asking the rules: `hus line`"));
    let walkers = walker_pits();
    let mut repetition = vec!["--position", WALKERS];
    repetition.extend(walkers.iter().map(String::as_str));
    let seen = [
        line_json(&["--rules", "rulebook", "7", "4", "5", "6"]),
        line_json(&["7", "4", "9"]),
        line_json(&repetition),
    ];
    check_fields("README `hus line --json`", &rows, &seen, None);
}

/// The fields of README's `--json` row of `hus rate` (`name` or `name` (`child`, ...),
/// `name[]` (...) for an array of objects) as field paths.
fn listed_fields(cell: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut depth = 0;
    let mut parent = String::new();
    let mut in_name = false;
    let mut name = String::new();
    for c in cell.chars() {
        match c {
            '`' if in_name => {
                in_name = false;
                let path = if depth == 0 {
                    // `sets[]` (an array of objects) is the field `sets`.
                    parent = name.clone();
                    name.trim_end_matches("[]").to_string()
                } else {
                    format!("{parent}.{name}")
                };
                out.insert(path);
                name.clear();
            }
            '`' => in_name = true,
            c if in_name => name.push(c),
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    out
}

#[test]
fn readme_rate_json_fields_are_what_it_prints() {
    let readme = doc("README.md");
    let rows = table_rows(
        section(&readme, "## How strong is my bot: `hus rate`"),
        "option",
    );
    let row = rows
        .iter()
        .find(|r| r.names.first().map(String::as_str) == Some("--json"))
        .expect("a --json row");
    let documented = listed_fields(&row.cells[2]);
    // Only the random rung: the built-in random mover, rated in milliseconds.
    let logs = crate::common::LogDir::new();
    let log_dir = logs.path().to_str().expect("utf-8");
    let bot = hus_random(2);
    let out = crate::common::hus(&[
        "rate",
        &bot,
        "--only",
        "random",
        "--games",
        "8",
        "--seed",
        "1",
        "--json",
        "--log-dir",
        log_dir,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(summary["bot"], bot.as_str());
    let printed = paths(&summary);
    assert_eq!(printed, documented, "hus rate --json against README's row");
    for set in summary["sets"].as_array().expect("sets") {
        let log = set["log"].as_str().expect("log");
        let replay = crate::common::hus(&["replay", log]);
        assert_eq!(replay.status.code(), Some(0), "{log}");
    }
}
