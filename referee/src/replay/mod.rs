//! Reading and checking logs (LOGS.md): re-plays a log with the engine and checks every
//! record, and shows it through observers: a summary of the set, one game move by move,
//! a set still being played, or a self-contained HTML viewer. `hus replay`'s command
//! line is `crate::cli::replay_cmd`; the match server builds its replay pages with
//! [`viewer_page`].
//!
//! The pieces: [`source::Source`] reads lines (one reused buffer; when following it
//! waits for lines still being written), [`parse`] turns a line into a
//! [`Record`], [`verify::Verifier`] checks it against the engine and the records before
//! it, and an [`Observer`] shows what was checked. A log is untrusted input: whatever it
//! holds ends in one of the verdicts below, never in a panic.
//!
//! Exit codes of the verdicts: 0 verified (ended by `set-end`, or by `aborted`), 1
//! corrupt (the log disagrees with the rules or with itself), 2 unreadable (no such
//! file, not a hus log, an unknown `log_version`, or bad arguments), 3 incomplete (cut
//! short, but consistent as far as it goes).

pub(crate) mod html;
pub(crate) mod source;
pub(crate) mod text;
pub(crate) mod verify;
pub(crate) mod watch;

use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::records::{MoveRecord, Record, LOG_VERSION};

use source::{Next, Source};
use verify::{Checked, Corrupt, Ending, Verifier};

/// Sees every record once the verifier has accepted it.
pub trait Observer {
    fn observe(&mut self, v: &Verifier, record: &Record, checked: &Checked) -> io::Result<()>;
}

impl<T: Observer + ?Sized> Observer for &mut T {
    fn observe(&mut self, v: &Verifier, record: &Record, checked: &Checked) -> io::Result<()> {
        (**self).observe(v, record, checked)
    }
}

impl<A: Observer, B: Observer> Observer for (A, B) {
    fn observe(&mut self, v: &Verifier, record: &Record, checked: &Checked) -> io::Result<()> {
        self.0.observe(v, record, checked)?;
        self.1.observe(v, record, checked)
    }
}

/// How reading a log ended.
#[derive(Debug)]
pub enum Verdict {
    /// Ended by `set-end`, every record checked.
    Complete,
    /// Ended by `aborted` (with its reason), every record checked.
    Aborted(String),
    /// No `set-end` or `aborted`: cut short. `cut` is the number of a last line that was
    /// itself cut mid-way (and not read); `stopped` why following stopped (the writer
    /// is gone, or the idle limit).
    Incomplete {
        cut: Option<u64>,
        stopped: Option<String>,
    },
    /// The first record that disagrees.
    Corrupt(Corrupt),
}

impl Verdict {
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            Verdict::Complete | Verdict::Aborted(_) => 0,
            Verdict::Corrupt(_) => 1,
            Verdict::Incomplete { .. } => 3,
        })
    }
}

/// What one line holds.
// A record lives on the stack for one line only: boxing it would cost an allocation
// per line for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Parsed {
    Record(Record),
    /// A record of a `type` this version does not know (LOGS.md: later versions of
    /// format 1 may add some): reported, then skipped.
    Unknown(String),
}

const KNOWN_TYPES: [&str; 10] = [
    "header",
    "ready",
    "game-start",
    "move",
    "fault",
    "game-end",
    "restart",
    "shutdown",
    "set-end",
    "aborted",
];

/// Parses one line (without its newline). The error says, in words, why it is not a
/// record.
pub fn parse(line: &[u8]) -> std::result::Result<Parsed, String> {
    // Most lines are moves, and the referee writes `type` first: a move is read straight
    // into its struct, which skips the buffering that an internally tagged enum needs.
    // Any other shape takes the general path, which reads the same fields.
    if line.starts_with(br#"{"type":"move","#) {
        if let Ok(m) = serde_json::from_slice::<MoveRecord>(line) {
            return Ok(Parsed::Record(Record::Move(m)));
        }
    }
    let err = match serde_json::from_slice::<Record>(line) {
        Ok(record) => return Ok(Parsed::Record(record)),
        Err(e) => e,
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) if e.classify() == serde_json::error::Category::Eof => {
            return Err(format!(
                "the line is cut short mid-way ({}); only the last line of a log can be",
                without_position(&e)
            ))
        }
        Err(e) => return Err(format!("not JSON ({})", without_position(&e))),
    };
    let Some(object) = value.as_object() else {
        return Err("not a JSON object".to_string());
    };
    match object.get("type") {
        Some(Value::String(t)) if KNOWN_TYPES.contains(&t.as_str()) => Err(format!(
            "a {t} record not as LOGS.md describes it: {}",
            without_position(&err)
        )),
        Some(Value::String(t)) => Ok(Parsed::Unknown(t.clone())),
        Some(_) => Err("\"type\" is not a string".to_string()),
        None => Err("a JSON object without \"type\"".to_string()),
    }
}

/// serde_json's message without its "at line 1 column N" (the line is ours to name).
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&suffix) {
        Some(t) => format!("{t}, at column {}", e.column()),
        None => text,
    }
}

/// Checks a set's records as `hus replay` checks the log they make: each is written as
/// its line and read back, then verified. Returns `hus replay`'s exit status for them (0
/// complete or aborted, 3 cut short), or what it would say of a log it refuses: for the
/// tests of crates that play sets in memory, so their logs follow the one rule too.
pub fn verify_records(records: &[Record]) -> std::result::Result<u8, String> {
    let mut v = Verifier::new();
    for (i, record) in records.iter().enumerate() {
        let number = i as u64 + 1;
        let line = serde_json::to_vec(record).map_err(|e| e.to_string())?;
        if number == 1 {
            first_line(&line, true).map_err(|e| format!("{e:#}"))?;
        }
        let record = match parse(&line) {
            Ok(Parsed::Record(r)) => r,
            Ok(Parsed::Unknown(t)) => {
                return Err(format!("line {number}: unknown record type {t}"))
            }
            Err(e) => return Err(format!("CORRUPT: line {number}: {e}")),
        };
        v.check(number, &record)
            .map_err(|c| format!("CORRUPT: line {}: {}", c.line, c.message))?;
    }
    match v.ending() {
        _ if v.header().is_none() => Err("no header".to_string()),
        Ending::Open => Ok(3),
        Ending::SetEnd | Ending::Aborted(_) => Ok(0),
    }
}

/// Line 1 must be a header of a version this hus reads. Anything else is not a log we
/// can check at all (exit 2), rather than a corrupt one.
fn first_line(line: &[u8], complete: bool) -> Result<()> {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(_) if !complete => bail!(
            "its first line is cut short: not a hus log, or one cut short while its header was written"
        ),
        Err(e) => bail!("not a hus log: line 1 is not JSON ({})", without_position(&e)),
    };
    if value.get("type").and_then(Value::as_str) != Some("header") {
        bail!("not a hus log: line 1 is not a header record (LOGS.md)");
    }
    match value.get("log_version").map(|v| (v, v.as_u64())) {
        None => bail!("not a hus log: the header has no log_version"),
        Some((_, Some(v))) if v == LOG_VERSION as u64 => Ok(()),
        Some((v, _)) => bail!(
            "log_version {v} is not one this hus ({}) reads: it reads log_version {LOG_VERSION}; \
             a newer hus may read this log",
            env!("CARGO_PKG_VERSION")
        ),
    }
}

/// Reads, checks and shows every line, up to the end of the log (or, following, up to
/// `set-end` or `aborted`). An error is a log that cannot be read at all.
pub fn drive<R: io::Read>(
    src: &mut Source<R>,
    v: &mut Verifier,
    observer: &mut dyn Observer,
) -> Result<Verdict> {
    loop {
        let (number, complete) = match src.next()? {
            Next::End => break,
            Next::TooLong(number) => {
                return Ok(Verdict::Corrupt(Corrupt {
                    line: number,
                    message: format!("longer than {} bytes", source::MAX_LINE),
                }))
            }
            Next::Line { number, complete } => (number, complete),
        };
        let line = src.line();
        if number == 1 {
            first_line(line, complete)?;
        }
        let stopped = src.stopped().map(str::to_string);
        let record = match parse(line) {
            Ok(Parsed::Record(record)) => record,
            Ok(Parsed::Unknown(t)) => {
                eprintln!(
                    "warning: line {number}: unknown record type {}, skipped (a newer hus may have written it)",
                    text::clean(&serde_json::to_string(&t).unwrap_or_default(), 200)
                );
                continue;
            }
            Err(_) if !complete => {
                return Ok(Verdict::Incomplete {
                    cut: Some(number),
                    stopped,
                })
            }
            Err(message) => {
                return Ok(Verdict::Corrupt(Corrupt {
                    line: number,
                    message,
                }))
            }
        };
        let checked = match v.check(number, &record) {
            Ok(checked) => checked,
            Err(corrupt) => return Ok(Verdict::Corrupt(corrupt)),
        };
        if let Record::Header(h) = &record {
            if let Some(note) = src.watch(h.writer.clone()) {
                eprintln!("note: {note}");
            }
        }
        observer.observe(v, &record, &checked)?;
        if src.following() && *v.ending() != Ending::Open {
            break;
        }
    }
    if v.header().is_none() {
        bail!("the file is empty: no record at all, not even the header a hus log starts with");
    }
    Ok(match v.ending() {
        Ending::Open => Verdict::Incomplete {
            cut: None,
            stopped: src.stopped().map(str::to_string),
        },
        Ending::SetEnd => Verdict::Complete,
        Ending::Aborted(reason) => Verdict::Aborted(reason.clone()),
    })
}

/// An observer that gives up (an `Interrupted` error) at the first record after `stop`
/// is set: the caller no longer wants what is being built.
struct Stoppable<'s, O> {
    inner: O,
    stop: &'s AtomicBool,
}

impl<O: Observer> Observer for Stoppable<'_, O> {
    fn observe(&mut self, v: &Verifier, record: &Record, checked: &Checked) -> io::Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the page is no longer wanted",
            ));
        }
        self.inner.observe(v, record, checked)
    }
}

/// The viewer page of `hus replay --html` for the log at `path`, with every game, as a
/// string (the match server serves it). A log holding more than `max_moves` moves, or
/// a corrupt one, is an error that says so. Setting `stop` (from another thread) makes
/// it give up at the next record with an error: the log is read record by record, so
/// a page nobody waits for any more stops costing CPU at once.
pub fn viewer_page(path: &Path, max_moves: u64, stop: &AtomicBool) -> Result<String> {
    let file = crate::logfile::open_log(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mut src = Source::new(file, None);
    let mut v = Verifier::new();
    let mut collector = html::Collector::new(None, max_moves);
    let mut observer = Stoppable {
        inner: &mut collector,
        stop,
    };
    let verdict =
        drive(&mut src, &mut v, &mut observer).with_context(|| path.display().to_string())?;
    if let Verdict::Corrupt(c) = &verdict {
        bail!(
            "{}: line {}: {}",
            path.display(),
            c.line,
            text::clean(&c.message, 400)
        );
    }
    if collector.too_many_moves() {
        bail!(
            "{}: the page would hold {} moves, more than {max_moves}",
            path.display(),
            collector.moves
        );
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    html::page(&v, collector, &verdict, &name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log's first records, as `hus match` writes them: a set that has not begun.
    const START: &str = concat!(
        r#"{"type":"header","log_version":1,"referee":"hus 0.1.0","rules":{"preset":"hus","width":8},"#,
        r#""time":{"mode":"per-move","move_ms":1000,"ready_ms":10000},"seed":3,"games":2,"early_stop":false,"#,
        r#""bots":[{"command":"a","name":"a","stderr":"x.a.stderr"},{"command":"b","name":"b","stderr":"x.b.stderr"}],"#,
        r#""started":"2026-12-02T06:37:32.673587173Z","line_limit":65536}"#,
        "\n",
        r#"{"type":"ready","bot":0,"name":"a","ms":3.85}"#,
        "\n",
        r#"{"type":"ready","bot":1,"name":"b","ms":3.6}"#,
        "\n",
    );

    #[test]
    fn replay_page_is_built_and_given_up_when_stop_is_set() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, START).expect("write the log");
        let page = viewer_page(&path, 10, &AtomicBool::new(false)).expect("a page");
        assert!(page.contains(r#""status":"incomplete""#), "{page}");
        let err = viewer_page(&path, 10, &AtomicBool::new(true)).expect_err("given up");
        assert_eq!(
            format!("{err:#}"),
            format!("{}: the page is no longer wanted", path.display())
        );
    }

    #[test]
    fn a_remote_bots_closed_shutdown_is_read_and_an_unknown_stopped_by_is_corrupt() {
        let shutdown = |by: &str| {
            format!(
                r#"{{"type":"shutdown","bot":1,"status":null,"stopped_by":"{by}","leaked":false,"escaped":[],"strays":[],"stderr_bytes":0,"stderr_cut":false}}"#
            )
        };
        match parse(shutdown("closed").as_bytes()) {
            Ok(Parsed::Record(Record::Shutdown(s))) => {
                assert_eq!(s.stopped_by, crate::records::StoppedBy::Closed)
            }
            other => panic!("closed is a value of stopped_by: {:?}", other.err()),
        }
        assert_eq!(
            parse(shutdown("gone").as_bytes()).err(),
            Some(
                "a shutdown record not as LOGS.md describes it: unknown variant `gone`, \
                 expected one of `itself`, `sigterm`, `sigkill`, `closed`"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_fault_kind_stage_or_end_reason_the_referee_does_not_write_is_corrupt() {
        let fault = |kind: &str, stage: &str| {
            format!(
                r#"{{"type":"fault","game":1,"ply":0,"bot":0,"kind":"{kind}","detail":"d","line":null,"position":"p","ms":null,"stage":"{stage}"}}"#
            )
        };
        match parse(fault("time-out", "start-up").as_bytes()) {
            Ok(Parsed::Record(Record::Fault(f))) => assert_eq!(
                (f.kind, f.stage),
                (
                    crate::records::FaultKind::TimeOut,
                    crate::records::Stage::StartUp
                )
            ),
            other => panic!("a fault: {:?}", other.err()),
        }
        assert_eq!(
            parse(fault("timeout", "game").as_bytes()).err(),
            Some(
                "a fault record not as LOGS.md describes it: unknown variant `timeout`, \
                 expected one of `time-out`, `start-up`, `crash`, `malformed`, `wrong-message`, \
                 `invalid-pit`, `illegal-move`, `oversized-line`, `unsolicited-message`"
                    .to_string()
            )
        );
        assert_eq!(
            parse(fault("crash", "end").as_bytes()).err(),
            Some(
                "a fault record not as LOGS.md describes it: unknown variant `end`, \
                 expected one of `game`, `start-up`, `result`"
                    .to_string()
            )
        );
        let end = r#"{"type":"game-end","game":1,"reason":"resigned","winner":0,"faulted":[],"double":false,"points":[1,0],"plies":3,"position":"p"}"#;
        assert_eq!(
            parse(end.as_bytes()).err(),
            Some(
                "a game-end record not as LOGS.md describes it: unknown variant `resigned`, \
                 expected one of `no-moves`, `repetition`, `no-capture-limit`, `time-out`, \
                 `start-up`, `crash`, `malformed`, `wrong-message`, `invalid-pit`, \
                 `illegal-move`, `oversized-line`, `unsolicited-message`"
                    .to_string()
            )
        );
    }
}
