//! What the document tests share: reading the Markdown of PROTOCOL.md, LOGS.md, README.md
//! and RULES.md (sections, field tables, code blocks), turning JSON into the field paths
//! the tables name, running documented commands in a scratch directory as a user would,
//! and recording what bots really receive.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::*;

/// A document of the repository, by name (`PROTOCOL.md`).
pub fn doc(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The text under the first heading that starts with `heading` (`#### \`hello\``),
/// up to the next heading of the same level or higher.
pub fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let start = text
        .lines()
        .scan(0usize, |at, line| {
            let here = *at;
            *at += line.len() + 1;
            Some((here, line))
        })
        .find(|(_, line)| line.starts_with(heading))
        .map(|(at, _)| at)
        .unwrap_or_else(|| panic!("no heading {heading:?}"));
    let body = &text[start..];
    let mut end = body.len();
    let mut offset = 0;
    for (i, line) in body.lines().enumerate() {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if i > 0 && hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            end = offset;
            break;
        }
        offset += line.len() + 1;
    }
    &body[..end.min(body.len())]
}

/// The headings of `level` (`####`) in `text` whose title starts with a backticked
/// name: `#### \`hello\`: the first line` gives `hello`.
pub fn named_headings(text: &str, level: usize) -> Vec<String> {
    let prefix = format!("{} `", "#".repeat(level));
    text.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter_map(|rest| rest.split('`').next())
        .map(str::to_string)
        .collect()
}

/// One row of a field table: the names in its first cell, and its other cells.
#[derive(Clone, Debug)]
pub struct Row {
    pub names: Vec<String>,
    pub cells: Vec<String>,
}

/// The rows of every table in `text` whose first column is headed `field`.
pub fn field_rows(text: &str) -> Vec<Row> {
    table_rows(text, "field")
}

/// The rows of every table in `text` whose first column is headed `first` (`field`,
/// `option`).
pub fn table_rows(text: &str, first: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells = table_cells(line);
        if cells.first().map(String::as_str) == Some(first) {
            in_table = true;
            continue;
        }
        // The line under the header (`|---|---|`): dashes, bars and colons only.
        if !in_table
            || cells
                .iter()
                .all(|c| c.chars().all(|ch| matches!(ch, '-' | '|' | ':')))
        {
            continue;
        }
        rows.push(Row {
            names: backticked(&cells[0]),
            cells,
        });
    }
    rows
}

/// The cells of a table's line: split at each `|` outside backticks (an empty cell
/// stays a cell), each trimmed.
pub fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = vec![String::new()];
    let mut code = false;
    for c in inner.chars() {
        if c == '|' && !code {
            cells.push(String::new());
            continue;
        }
        if c == '`' {
            code = !code;
        }
        if let Some(cell) = cells.last_mut() {
            cell.push(c);
        }
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

/// The backticked names of a cell, `[i]` written as `[]`: "`game`, `ply`" gives
/// `game` and `ply`; "`bots[i].name`" gives `bots[].name`.
pub fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|name| name.replace("[i]", "[]"))
        .collect()
}

/// The documented names of a set of rows, with every parent of a dotted name
/// (`rules` for `rules.preset`, `bots` for `bots[].name`).
pub fn documented(rows: &[Row]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for name in rows.iter().flat_map(|r| r.names.iter()) {
        names.insert(name.clone());
        let mut parent = name.as_str();
        while let Some(cut) = parent.rfind(['.', '[']) {
            parent = &parent[..cut];
            names.insert(parent.to_string());
        }
    }
    names
}

/// Every field path of a JSON object: `a`, `a.b` for an object field, `a[].b` for the
/// fields of objects in an array. Arrays of other values are leaves.
pub fn paths(value: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(value, "", &mut out);
    out
}

fn walk(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                out.insert(path.clone());
                walk(v, &path, out);
            }
        }
        Value::Array(items) => {
            for item in items.iter().filter(|i| i.is_object()) {
                walk(item, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// The value at a path of [`paths`] in every place it occurs (an array gives one value
/// per element).
pub fn values_at<'a>(value: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut current = vec![value];
    for part in path.split('.') {
        let (key, each) = match part.strip_suffix("[]") {
            Some(key) => (key, true),
            None => (part, false),
        };
        let mut next = Vec::new();
        for v in current {
            if let Some(found) = v.get(key) {
                match (each, found) {
                    (true, Value::Array(items)) => next.extend(items.iter()),
                    (true, _) => {}
                    (false, found) => next.push(found),
                }
            }
        }
        current = next;
    }
    current
}

/// Checks `seen` (every object of one kind, e.g. every `turn` message) against the
/// rows documenting it: every field sent is documented, every documented field is sent
/// at least once, and a field documented as present "always" is in every object.
/// `what` names the table in the failure messages.
pub fn check_fields(what: &str, rows: &[Row], seen: &[Value], present_column: Option<usize>) {
    assert!(!seen.is_empty(), "{what}: nothing was observed to check");
    assert!(!rows.is_empty(), "{what}: no documented field");
    let documented = documented(rows);
    let mut sent: BTreeMap<String, usize> = BTreeMap::new();
    for v in seen {
        for p in paths(v) {
            *sent.entry(p).or_default() += 1;
        }
    }
    let undocumented: Vec<&String> = sent.keys().filter(|p| !documented.contains(*p)).collect();
    assert!(
        undocumented.is_empty(),
        "{what}: fields sent but not in the table: {undocumented:?}\n(e.g. {})",
        seen[0]
    );
    let never: Vec<&String> = rows
        .iter()
        .flat_map(|r| r.names.iter())
        .filter(|n| !sent.contains_key(*n))
        .collect();
    assert!(
        never.is_empty(),
        "{what}: documented fields that never appeared: {never:?}"
    );
    if let Some(col) = present_column {
        for row in rows {
            if row.cells.get(col).map(String::as_str) != Some("always") {
                continue;
            }
            for name in &row.names {
                for v in seen {
                    assert!(
                        paths(v).contains(name),
                        "{what}: {name} is documented as always present, but is missing in {v}"
                    );
                }
            }
        }
    }
}

/// Checks the type column of PROTOCOL.md's tables: `integer`, `string`, `boolean`,
/// `object`, `array of integers`, `integer or \`null\``, `string or \`null\``, or one
/// quoted value (`"hello"`). A name documented in several rows (the two shapes of
/// `time`) may have any of their types.
pub fn check_types(what: &str, rows: &[Row], seen: &[Value]) {
    let mut types: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for row in rows {
        for name in &row.names {
            types.entry(name).or_default().push(&row.cells[1]);
        }
    }
    for v in seen {
        for (name, allowed) in &types {
            for found in values_at(v, name) {
                assert!(
                    allowed.iter().any(|t| has_type(found, t)),
                    "{what}: {name} = {found} is not of the documented type {allowed:?}"
                );
            }
        }
    }
}

fn has_type(value: &Value, documented: &str) -> bool {
    // `"opponent"`, or alternatives: `"opponent"` or `"you"`.
    if documented.starts_with("`\"") {
        return documented.split(" or ").any(|alt| {
            alt.strip_prefix("`\"")
                .and_then(|t| t.strip_suffix("\"`"))
                .is_some_and(|literal| value.as_str() == Some(literal))
        });
    }
    let nullable = documented.ends_with(" or `null`");
    let base = documented.trim_end_matches(" or `null`");
    if nullable && value.is_null() {
        return true;
    }
    match base {
        "integer" => value.is_u64(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array of strings" => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string)),
        "array of integers" => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_u64)),
        other => panic!("unknown documented type {other:?}"),
    }
}

/// The fenced code blocks of a document: (language, the line after the opening fence,
/// text).
pub fn code_blocks(text: &str) -> Vec<(String, usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.trim().to_string(), i + 2, String::new())),
            (Some(_), Some("")) => blocks.extend(open.take()),
            (Some((_, _, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// One command of a `console` block: the command (continuation lines joined), the exit
/// status a `# exit status N` comment promises (0 otherwise), and the output shown.
#[derive(Debug)]
pub struct Shown {
    pub command: String,
    pub status: i32,
    pub output: String,
    pub line: usize,
}

pub fn console_commands(text: &str) -> Vec<Shown> {
    let mut shown = Vec::new();
    for (lang, first_line, body) in code_blocks(text) {
        if lang != "console" {
            continue;
        }
        let mut lines = body.lines().enumerate().peekable();
        while let Some((i, line)) = lines.next() {
            let Some(command) = line.strip_prefix("$ ") else {
                panic!("line {}: a console block starts with `$ `", first_line + i);
            };
            let mut command = command.to_string();
            while command.ends_with('\\') {
                command.pop();
                command.push(' ');
                match lines.next() {
                    Some((_, more)) => command.push_str(more.trim()),
                    None => break,
                }
            }
            let (command, status) = match command.split_once("# exit status ") {
                Some((c, n)) => (c.trim().to_string(), n.trim().parse().expect("a status")),
                None => (command.trim().to_string(), 0),
            };
            let mut output = String::new();
            while let Some((_, l)) = lines.next_if(|(_, l)| !l.starts_with("$ ")) {
                output.push_str(l);
                output.push('\n');
            }
            shown.push(Shown {
                command,
                status,
                output,
                line: first_line + i,
            });
        }
    }
    shown
}

/// Output with what changes from run to run replaced by `#`: times in milliseconds
/// (`485 ms`), numbers with decimals (`0.29`), dates and times in file names
/// (`20261201-045210`), and the numbers of check-bot's temporary directories
/// (`hus-check-3774-0`), the `-2` of a log name that was taken; runs of spaces become
/// one. Counts, seeds and pits stay.
pub fn normalize(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let starts_number =
            bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if !starts_number {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let mut j = i;
        while j < bytes.len()
            && (bytes[j].is_ascii_digit()
                || (bytes[j] == b'.' && bytes.get(j + 1).is_some_and(u8::is_ascii_digit)))
        {
            j += 1;
        }
        let number = &text[i..j];
        let after = &text[j..];
        let before = &text[..i];
        // A log name already taken gets `-2`, `-3`, ... (LogWriter::create): two
        // documented sets of the same bots started within one second (a quick machine)
        // differ only there.
        if before.ends_with('-') && after.starts_with(".jsonl") {
            out.pop();
            i = j;
            continue;
        }
        let varies = number.contains('.')
            || after.starts_with(" ms")
            || (number.len() == 8 && after.starts_with('-'))
            || (number.len() == 6 && before.ends_with('-'))
            || before.ends_with("hus-check-")
            || (before.ends_with('-') && out.ends_with("hus-check-#-"));
        out.push_str(if varies { "#" } else { number });
        i = j;
    }
    // A number that changes can change its width too: columns are not compared.
    let mut squeezed = String::with_capacity(out.len());
    for c in out.chars() {
        if !(c == ' ' && squeezed.ends_with(' ')) {
            squeezed.push(c);
        }
    }
    squeezed
}

/// A scratch directory laid out like the repository for a user's commands: `sample-bots`
/// and `tests` linked in, `./target/release/hus` and `hus` on PATH being the binary
/// under test, and a bot of one's own (`my_bot.py`, and `./my_bot`: the template
/// random bot). Commands run with `bash -c` there.
pub struct Sandbox {
    pub dir: LogDir,
    path: String,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = LogDir::new();
        let at = dir.path();
        let link = |target: &Path, name: &str| {
            let place = at.join(name);
            if let Some(parent) = place.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::os::unix::fs::symlink(target, &place).expect("symlink");
        };
        link(&root().join("sample-bots"), "sample-bots");
        link(&root().join("openings"), "openings");
        // A copy, not a link: the league README runs keeps its directory beside the file.
        std::fs::create_dir_all(at.join("leagues")).expect("mkdir leagues");
        std::fs::copy(
            root().join("leagues/sample.toml"),
            at.join("leagues/sample.toml"),
        )
        .expect("copy the sample league");
        std::fs::copy(
            root().join("leagues/quick.toml"),
            at.join("leagues/quick.toml"),
        )
        .expect("copy the quick league");
        link(&root().join("tests"), "tests");
        let hus = PathBuf::from(env!("CARGO_BIN_EXE_hus"));
        link(&hus, "target/release/hus");
        link(&hus, "bin/hus");
        let template = root().join("sample-bots/python/random_bot.py");
        std::fs::copy(&template, at.join("my_bot.py")).expect("copy the template");
        let script = format!("#!/bin/sh\nexec python3 '{}' \"$@\"\n", template.display());
        std::fs::write(at.join("my_bot"), script).expect("write my_bot");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(at.join("my_bot"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let path = format!(
            "{}:{}",
            at.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Sandbox { dir, path }
    }

    pub fn run(&self, command: &str) -> Output {
        Command::new("bash")
            .arg("-c")
            .arg(command)
            .current_dir(self.dir.path())
            .env("PATH", &self.path)
            .env("TMPDIR", "/tmp")
            .env("NO_COLOR", "1")
            .output()
            .expect("bash runs")
    }
}

/// The command of a `hus match` line, with BOT_A wrapped in `tests/bots/transcript.py`
/// so that every line it receives and sends is written to `transcript`.
pub fn with_transcript(command: &str, transcript: &Path) -> String {
    let words = shlex::split(command).expect("a command line");
    let at = words
        .iter()
        .position(|w| w == "match")
        .expect("a hus match command");
    let mut words = words;
    words[at + 1] = format!(
        "python3 {} {} {}",
        root().join("tests/bots/transcript.py").display(),
        transcript.display(),
        words[at + 1]
    );
    shlex::try_join(words.iter().map(String::as_str)).expect("joinable")
}

/// The lines of a transcript: (from the referee, the line).
pub fn transcript_lines(path: &Path) -> Vec<(bool, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("transcript {}: {e}", path.display()))
        .lines()
        .filter_map(|l| {
            l.strip_prefix("<- ")
                .map(|m| (true, m.to_string()))
                .or_else(|| l.strip_prefix("-> ").map(|m| (false, m.to_string())))
        })
        .collect()
}

/// `hus match A B ARGS...` with bot A (any command) recorded to a transcript, in a fresh
/// log directory. Returns the received messages (as JSON), the bot's own lines, the
/// log's records and the `--json` summary. Expects exit status 0.
pub struct Recorded {
    pub received: Vec<Value>,
    pub sent: Vec<Value>,
    pub records: Vec<Value>,
    pub summary: Value,
    pub _dir: LogDir,
}

pub fn record_set(a: &str, b: &str, extra: &[&str]) -> Recorded {
    record_sides(&[a], &[b], extra)
}

/// As [`record_set`], for one bot a side or, with more, a team match (`--team-a A...
/// --team-b B...`) whose first member of team A is the one recorded.
pub fn record_sides(a: &[&str], b: &[&str], extra: &[&str]) -> Recorded {
    let dir = LogDir::new();
    let transcript = dir.path().join("a.transcript");
    let wrapped = format!(
        "python3 {} {} {}",
        root().join("tests/bots/transcript.py").display(),
        transcript.display(),
        a[0]
    );
    let log_dir = dir.path().join("logs");
    let log_dir = log_dir.to_str().expect("utf-8");
    let mut args = vec!["match"];
    if a.len() == 1 && b.len() == 1 {
        args.extend([wrapped.as_str(), b[0]]);
    } else {
        args.extend(["--team-a", wrapped.as_str()]);
        args.extend_from_slice(&a[1..]);
        args.push("--team-b");
        args.extend_from_slice(b);
    }
    args.extend(["--json", "--log-dir", log_dir]);
    // Allowances no healthy bot misses on a loaded machine; `extra` overrides them.
    args.extend_from_slice(&GENEROUS);
    args.extend_from_slice(extra);
    let out = hus(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "hus {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("the summary is JSON");
    let log = PathBuf::from(summary["log"].as_str().expect("log"));
    let records = read_log(&log);
    let mut received = Vec::new();
    let mut sent = Vec::new();
    for (from_referee, line) in transcript_lines(&transcript) {
        let value: Value = serde_json::from_str(&line).expect("each line is JSON");
        if from_referee {
            received.push(value);
        } else {
            sent.push(value);
        }
    }
    Recorded {
        received,
        sent,
        records,
        summary,
        _dir: dir,
    }
}

#[test]
fn normalize_drops_what_changes_between_runs_and_keeps_counts() {
    assert_eq!(
        normalize("log: hus-logs/20261201-045210-1-greedy_bot-vs-hus-2.jsonl"),
        normalize("log: hus-logs/20261201-045211-1-greedy_bot-vs-hus.jsonl"),
    );
    assert_eq!(
        normalize("log: hus-logs/20261201-045210-1-greedy_bot-vs-hus-2.jsonl"),
        "log: hus-logs/#-#-1-greedy_bot-vs-hus.jsonl"
    );
    assert_ne!(normalize("7 games, 3 won"), normalize("7 games, 4 won"));
    assert_eq!(normalize("took 485 ms,  0.29"), "took # ms, #");
}
