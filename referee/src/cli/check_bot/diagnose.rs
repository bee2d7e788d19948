//! From what the probe and the set saw to the report: one [`Check`] per question a bot
//! author has, each with a mark, what was seen, and how to fix it.
//!
//! Every fault of the set lands in exactly one check, by its kind, except that a line
//! of prose (not JSON at all) is debug output, whatever fault it caused.

use std::fmt;
use std::path::Path;

use engine::{AnyPosition, Board};

use super::probe::{Hello, Probe, TurnAnswer};
use super::{CheckConfig, Evidence};
use crate::records::{Fault, FaultKind as K, GameEnd, Record, Shutdown, Stage, StoppedBy};
use crate::set::BYE_GRACE;
use crate::side::Side;

/// A check's verdict. Warnings do not fail the check; problems do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Ok,
    Warning,
    Problem,
    /// Nothing to look at (the games were skipped, or an earlier step failed).
    Skipped,
}

impl Mark {
    fn as_str(self) -> &'static str {
        match self {
            Mark::Ok => "ok",
            Mark::Warning => "warning",
            Mark::Problem => "problem",
            Mark::Skipped => "skipped",
        }
    }
}

/// One line of the report, with indented details under it.
#[derive(Clone, Debug)]
pub struct Check {
    pub mark: Mark,
    pub title: &'static str,
    pub summary: String,
    pub details: Vec<String>,
}

impl Check {
    fn new(mark: Mark, title: &'static str, summary: impl Into<String>) -> Check {
        Check {
            mark,
            title,
            summary: summary.into(),
            details: Vec::new(),
        }
    }

    fn detail(mut self, line: impl Into<String>) -> Check {
        self.details.push(line.into());
        self
    }

    fn details_from(mut self, line: Option<String>) -> Check {
        self.details.extend(line);
        self
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<8} {}: {}",
            self.mark.as_str(),
            self.title,
            self.summary
        )?;
        for detail in &self.details {
            writeln!(f, "{:9}{detail}", "")?;
        }
        Ok(())
    }
}

const STARTS: &str = "starts up";
const FLUSHES: &str = "flushes stdout";
const DEBUG: &str = "keeps debug output off stdout";
const MESSAGES: &str = "sends well-formed messages";
const PITS: &str = "plays legal pits";
const UNASKED: &str = "answers only when asked";
const TIME: &str = "answers in time";
const CRASH: &str = "keeps running";
const EXITS: &str = "exits when told";
const LEAKS: &str = "leaves no processes behind";
const GAMES: &str = "plays whole games";
const OWN_WARNINGS: &str = "writes no warnings";

/// The start of a line of a bot's stderr that check-bot reports as the bot's own
/// warning (PROTOCOL.md, "stderr"): Python's `hus.bot` writes one whenever it plays a
/// fallback move for a `choose` that failed. The referee of a match never reads it.
pub const BOT_WARNING: &str = "hus-warning: ";
/// The bot's warnings shown under the check, the first one in its summary.
const WARNINGS_SHOWN: usize = 3;
/// The characters of a warning shown (a stderr line can be a megabyte long).
const WARNING_CHARS: usize = 300;

/// Above this share of the start-up allowance, a start is slow enough to warn about.
const SLOW_START: f64 = 0.25;
/// Above this share of the move time, a move is slow enough to warn about.
const SLOW_MOVE: f64 = 0.5;
/// Faults shown under a check besides the first one.
const MORE_FAULTS_SHOWN: usize = 3;

const FLUSH_FIX: &str = "your bot wrote its answer but did not flush stdout: flush after every line (print(..., flush=True), System.out.flush(), fflush(stdout), ...)";
const DEBUG_FIX: &str = "fix: print debug output to stderr, not stdout (Python: print(..., file=sys.stderr); JavaScript: console.error; Java: System.err.println; Rust: eprintln!)";
const EXIT_FIX: &str = "your bot must exit when it reads bye or when stdin closes";

/// Where a fault goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bucket {
    Start,
    Debug,
    Messages,
    Pits,
    Unasked,
    Time,
    Crash,
}

fn bucket(fault: &Fault) -> Bucket {
    let prose = fault.line.as_deref().is_some_and(looks_like_prose);
    match fault.kind {
        K::Malformed | K::UnsolicitedMessage if prose => Bucket::Debug,
        K::StartUp => Bucket::Start,
        K::InvalidPit | K::IllegalMove => Bucket::Pits,
        K::UnsolicitedMessage => Bucket::Unasked,
        K::TimeOut => Bucket::Time,
        K::Crash => Bucket::Crash,
        K::Malformed | K::WrongMessage | K::OversizedLine => Bucket::Messages,
    }
}

/// Text meant for a human, not a protocol line: not JSON at all, and with letters in it.
fn looks_like_prose(line: &str) -> bool {
    let t = line.trim();
    !t.starts_with('{')
        && !t.starts_with('[')
        && serde_json::from_str::<serde_json::Value>(t).is_err()
        && t.chars().any(char::is_alphabetic)
}

/// What the set's records say about the checked bot (bot 0).
#[derive(Default)]
struct Facts<'a> {
    played: bool,
    faults: Vec<&'a Fault>,
    opponent_faults: Vec<&'a Fault>,
    /// Start-up times, ms.
    readies: Vec<f64>,
    /// Move times, ms.
    moves: Vec<f64>,
    /// How it ended after `bye`, when it was still running then.
    after_bye: Option<&'a Shutdown>,
    /// What it left running, in the console's words, once per process.
    leaks: Vec<String>,
    games: Vec<&'a GameEnd>,
    moved_first: u32,
    moved_second: u32,
    captures: u32,
    restarts: u32,
}

impl<'a> Facts<'a> {
    fn of(records: &'a [Record]) -> Facts<'a> {
        let mut facts = Facts {
            played: true,
            ..Facts::default()
        };
        for record in records {
            match record {
                Record::Fault(f) if f.bot == Side::A => facts.faults.push(f),
                Record::Fault(f) => facts.opponent_faults.push(f),
                Record::Ready(r) if r.bot == Side::A => facts.readies.push(r.ms),
                Record::Move(m) => {
                    if m.bot == Side::A {
                        facts.moves.push(m.ms);
                    }
                    let captured = m
                        .events
                        .iter()
                        .any(|e| matches!(e, engine::Event::Capture(_)));
                    facts.captures += u32::from(captured);
                }
                Record::GameStart(g) if g.first == Side::A => facts.moved_first += 1,
                Record::GameStart(_) => facts.moved_second += 1,
                Record::GameEnd(g) => facts.games.push(g),
                Record::Restart(r) if r.bot == Side::A => facts.restarts += 1,
                Record::Shutdown(s) if s.bot == Side::A => facts
                    .leaks
                    .extend(crate::report::leak_words(&s.strays, s.leaked, s.stopped_by)),
                _ => {}
            }
        }
        // The shutdowns right before set-end are those after bye.
        facts.after_bye = records
            .iter()
            .rev()
            .skip_while(|r| matches!(r, Record::SetEnd(_)))
            .map_while(|r| match r {
                Record::Shutdown(s) => Some(s),
                _ => None,
            })
            .find(|s| s.bot == Side::A);
        facts
    }

    fn faults_in(&self, bucket_: Bucket) -> Vec<&'a Fault> {
        self.faults
            .iter()
            .copied()
            .filter(|f| bucket(f) == bucket_)
            .collect()
    }
}

/// Every check, in the order of the report.
pub fn checks(config: &CheckConfig, evidence: &Evidence) -> Vec<Check> {
    let facts = match &evidence.set {
        Some(set) => Facts::of(&set.records),
        None => Facts::default(),
    };
    let probe = &evidence.probe;
    let stderr = evidence.stderr.display().to_string();
    let mut checks = vec![
        starts(config, probe, &facts),
        flushes(probe),
        debug_output(probe, &facts),
        faults_check(
            &facts,
            Bucket::Messages,
            MESSAGES,
            "every line was a valid message",
        ),
        faults_check(
            &facts,
            Bucket::Pits,
            PITS,
            "every move was one of the legal pits",
        ),
        unasked(probe, &facts),
        in_time(config, &facts),
        crashes(&facts, &stderr),
        exits(probe, &facts),
        leaks(probe, &facts),
        games(&facts),
        own_warnings(&evidence.stderr),
    ];
    // A line nobody asked for can race with the next turn and be taken as its answer:
    // then the fault it causes there is only a consequence.
    let extra_lines = checks
        .iter()
        .any(|c| c.title == UNASKED && c.mark == Mark::Problem);
    if extra_lines {
        for check in &mut checks {
            if (check.title == PITS || check.title == MESSAGES) && check.mark == Mark::Problem {
                let fix = check.details.pop();
                check.details.push(format!(
                    "it also sent lines nobody asked for (see \"{UNASKED}\"): this line may be one of them, taken as the answer to the next turn"
                ));
                check.details.extend(fix);
            }
        }
    }
    checks
}

fn starts(config: &CheckConfig, probe: &Probe, facts: &Facts) -> Check {
    let allowance = config.set.ready_time.as_millis();
    match &probe.hello {
        Hello::Late { ms, line } => {
            let what = match line {
                None => format!("its ready came after {ms:.0} ms"),
                Some(line) => format!("after {ms:.0} ms it wrote: {line}"),
            };
            return Check::new(
                Mark::Problem,
                STARTS,
                format!("no ready within the {allowance} ms allowance: {what}"),
            )
            .detail("fix: answer hello with ready at once and load big data after that (or lazily); if your matches allow more, check with --ready-time");
        }
        Hello::Silent { status } => {
            let then = match status {
                Some(status) => format!("it then exited ({status})"),
                None => "it was still running".to_string(),
            };
            return Check::new(
                Mark::Problem,
                STARTS,
                format!("it never answered hello, not even when its stdin was closed; {then}"),
            )
            .detail(r#"fix: read the hello line from stdin, then write {"type":"ready","name":"my-bot"} and a newline on stdout, and flush"#);
        }
        Hello::Unflushed { .. } => {
            return Check::new(
                Mark::Skipped,
                STARTS,
                format!(
                "not measured: its ready came only when its stdin was closed (see \"{FLUSHES}\")"
            ),
            )
        }
        Hello::Ready { .. } | Hello::Other | Hello::Gone => {}
    }
    let failed = facts.faults_in(Bucket::Start);
    if let Some(first) = failed.first() {
        return with_faults(
            Check::new(Mark::Problem, STARTS, headline(first)),
            &failed,
            false,
        )
        .detail("fix: answer hello with ready within time.ready_ms of your program's start; load big data after that");
    }
    let starts: Vec<f64> = match probe.hello {
        Hello::Ready { ms } => std::iter::once(ms)
            .chain(facts.readies.iter().copied())
            .collect(),
        _ => facts.readies.clone(),
    };
    let Some(slowest) = starts.iter().copied().reduce(f64::max) else {
        // It answered hello in time, but with a line that is no valid ready (a ready
        // whose name is a number, a move): that is a message problem, not a slow start.
        let answered = facts
            .faults
            .iter()
            .find(|f| f.stage == Stage::StartUp && f.line.is_some());
        if let Some(f) = answered {
            let after =
                f.ms.map(|ms| format!(", after {ms:.0} ms"))
                    .unwrap_or_default();
            return Check::new(
                Mark::Skipped,
                STARTS,
                format!(
                    "it answered hello in time{after}, but not with a valid ready: see \"{}\"",
                    match bucket(f) {
                        Bucket::Debug => DEBUG,
                        _ => MESSAGES,
                    }
                ),
            );
        }
        return Check::new(
            Mark::Skipped,
            STARTS,
            "it never answered hello with ready (see below)",
        );
    };
    let share = slowest / (config.set.ready_time.as_secs_f64() * 1000.0);
    if share > SLOW_START {
        Check::new(
            Mark::Warning,
            STARTS,
            format!(
                "its slowest start took {slowest:.0} ms, {:.0}% of the {allowance} ms allowance",
                share * 100.0
            ),
        )
        .detail("fix: start faster, or a busier machine may not wait for it: answer ready before loading big data")
    } else {
        let at_most = if starts.len() == 1 {
            String::new()
        } else {
            format!(" at most, in {} starts", starts.len())
        };
        Check::new(
            Mark::Ok,
            STARTS,
            format!("ready after {slowest:.0} ms{at_most} (allowance {allowance} ms)"),
        )
    }
}

fn flushes(probe: &Probe) -> Check {
    match (&probe.hello, &probe.turn) {
        (
            Hello::Unflushed {
                after_close_ms,
                line,
            },
            _,
        ) => Check::new(Mark::Problem, FLUSHES, FLUSH_FIX)
            .detail(format!(
                "it answered hello only when its stdin was closed, {after_close_ms:.1} ms later: {line}"
            ))
            .detail("if it does flush: read stdin one line at a time, do not wait for the end of the input"),
        (
            _,
            Some(TurnAnswer::Unflushed {
                after_close_ms,
                line,
            }),
        ) => Check::new(Mark::Problem, FLUSHES, FLUSH_FIX)
            .detail(format!(
                "its ready came at once, but its first move only when its stdin was closed, {after_close_ms:.1} ms later: {line}"
            ))
            .detail("if it does flush: read stdin one line at a time, do not wait for the end of the input")
            .detail("the games were not played: every move would have timed out"),
        (Hello::Silent { .. }, _) => {
            Check::new(Mark::Skipped, FLUSHES, "not checked: it never answered hello")
        }
        (Hello::Gone, _) => Check::new(
            Mark::Skipped,
            FLUSHES,
            "not checked: it exited before answering hello",
        ),
        _ => Check::new(
            Mark::Ok,
            FLUSHES,
            "its answers arrived while its stdin was still open",
        ),
    }
}

fn debug_output(probe: &Probe, facts: &Facts) -> Check {
    // (where, line): the probe's unasked lines first, then the games' faults.
    let mut seen: Vec<(String, &str)> = probe
        .unasked
        .iter()
        .filter(|(_, line)| looks_like_prose(line))
        .map(|(when, line)| (format!("{when}, unasked"), line.as_str()))
        .collect();
    for f in facts.faults_in(Bucket::Debug) {
        let place = format!("{} ({}: {})", f.place(), f.kind, f.detail);
        seen.push((place, f.line.as_deref().unwrap_or_default()));
    }
    let Some((place, line)) = seen.first() else {
        return if facts.played || !probe.unasked.is_empty() {
            Check::new(Mark::Ok, DEBUG, "no stray text on stdout")
        } else {
            skipped(DEBUG)
        };
    };
    let mut check = Check::new(
        Mark::Problem,
        DEBUG,
        "it wrote text on stdout that is not a protocol message",
    )
    .detail(format!("its line: {line}"))
    .detail(place.clone());
    if seen.len() > 1 {
        check = check.detail(format!("{} such lines in all", seen.len()));
    }
    check.detail(DEBUG_FIX)
}

fn unasked(probe: &Probe, facts: &Facts) -> Check {
    let extra: Vec<&(&str, String)> = probe
        .unasked
        .iter()
        .filter(|(_, line)| !looks_like_prose(line))
        .collect();
    let faults = facts.faults_in(Bucket::Unasked);
    let fix_text = "fix: send exactly one ready per hello and one move per turn, and nothing after result or bye: an extra line is not kept for the next turn";
    if let Some((when, line)) = extra.first() {
        let mut check = Check::new(
            Mark::Problem,
            UNASKED,
            format!("{when} it sent a line that nobody asked for"),
        )
        .detail(format!("its line: {line}"));
        if let Some(first) = faults.first() {
            check = check.detail(format!("in the games too: {}", headline(first)));
        }
        return check.detail(fix_text);
    }
    if !faults.is_empty() {
        return faults_check(facts, Bucket::Unasked, UNASKED, "");
    }
    let probed = matches!(probe.turn, Some(TurnAnswer::Answered { .. }));
    if facts.played || probed {
        Check::new(Mark::Ok, UNASKED, "one answer per question, nothing more")
    } else {
        skipped(UNASKED)
    }
}

/// A check whose problems are just the faults of one bucket.
fn faults_check(facts: &Facts, bucket_: Bucket, title: &'static str, fine: &str) -> Check {
    if !facts.played {
        return skipped(title);
    }
    let faults = facts.faults_in(bucket_);
    let Some(first) = faults.first() else {
        return Check::new(Mark::Ok, title, fine);
    };
    with_faults(
        Check::new(Mark::Problem, title, headline(first)),
        &faults,
        bucket_ == Bucket::Pits,
    )
    .detail(format!("fix: {}", fix(first)))
}

fn in_time(config: &CheckConfig, facts: &Facts) -> Check {
    if !facts.played {
        return skipped(TIME);
    }
    let allowance = config.allowance_words();
    let stats = (!facts.moves.is_empty()).then(|| {
        let n = facts.moves.len();
        let mean = facts.moves.iter().sum::<f64>() / n as f64;
        let max = facts.moves.iter().copied().fold(0.0, f64::max);
        (n, mean, max)
    });
    let timed_out = facts.faults_in(Bucket::Time);
    if let Some(first) = timed_out.first() {
        let mut check = with_faults(
            Check::new(Mark::Problem, TIME, headline(first)),
            &timed_out,
            false,
        );
        if let Some((n, mean, max)) = stats {
            check = check.detail(format!(
                "its other moves: {n}, mean {mean:.1} ms, max {max:.1} ms of {allowance}"
            ));
        }
        return check.detail(format!("fix: {}", fix(first)));
    }
    let Some((n, mean, max)) = stats else {
        return Check::new(Mark::Skipped, TIME, "no move to time");
    };
    let share = max / (config.move_time().as_secs_f64() * 1000.0);
    if share > SLOW_MOVE {
        Check::new(
            Mark::Warning,
            TIME,
            format!(
                "its slowest move took {max:.1} ms, {:.0}% of {allowance} (mean {mean:.1} ms over {n} moves)",
                share * 100.0
            ),
        )
        .detail("fix: keep a margin, a busier machine can push it over: stop thinking at about half of time_ms")
    } else {
        Check::new(
            Mark::Ok,
            TIME,
            format!("{n} moves, mean {mean:.1} ms, max {max:.1} ms of {allowance}"),
        )
    }
}

fn crashes(facts: &Facts, stderr: &str) -> Check {
    if !facts.played {
        return skipped(CRASH);
    }
    let crashed = facts.faults_in(Bucket::Crash);
    let Some(first) = crashed.first() else {
        return Check::new(Mark::Ok, CRASH, "it never crashed");
    };
    let mut check = with_faults(
        Check::new(Mark::Problem, CRASH, headline(first)),
        &crashed,
        false,
    );
    if first.detail.contains("exit status 0") {
        check = check.detail("it exited by itself: a bot must keep running until bye or the end of stdin, and ignore messages it does not know");
    }
    check.detail(format!(
        "fix: read its stderr, {stderr}: a traceback or panic message there usually says why"
    ))
}

fn exits(probe: &Probe, facts: &Facts) -> Check {
    let mut seen = Vec::new();
    let mut wrong = Vec::new();
    if let Some(s) = facts.after_bye {
        seen.push("after bye");
        if s.stopped_by != StoppedBy::Itself {
            wrong.push(format!(
                "after bye and the end of its stdin it was still running {} s later, and was stopped by {}",
                BYE_GRACE.as_secs_f64(),
                s.stopped_by.as_str().to_uppercase()
            ));
        }
    }
    if probe.exit_judged {
        seen.push("when its stdin closed without bye");
        if probe.stopped_by != StoppedBy::Itself {
            wrong.push(format!(
                "when its stdin was closed (without bye) it kept running, and was stopped by {}",
                probe.stopped_by.as_str().to_uppercase()
            ));
        }
    }
    if !wrong.is_empty() {
        let mut check = Check::new(Mark::Problem, EXITS, EXIT_FIX);
        for w in wrong {
            check = check.detail(w);
        }
        return check.detail(
            "fix: leave your read loop and exit on bye, and when reading stdin returns end-of-file",
        );
    }
    if seen.is_empty() {
        return Check::new(
            Mark::Skipped,
            EXITS,
            "not checked: it was never idle when its stdin closed",
        );
    }
    Check::new(Mark::Ok, EXITS, format!("it exited {}", seen.join(" and ")))
}

/// Most left-running processes listed one by one.
const MAX_LEAKS_SHOWN: usize = 5;

fn leaks(probe: &Probe, facts: &Facts) -> Check {
    let leaks: Vec<&String> = probe.leaks.iter().chain(&facts.leaks).collect();
    let check = match leaks.as_slice() {
        [] => return Check::new(Mark::Ok, LEAKS, "no process it started outlived it"),
        [one] => Check::new(Mark::Problem, LEAKS, one.to_string()),
        [first, rest @ ..] => {
            let mut check = Check::new(
                Mark::Problem,
                LEAKS,
                format!("{} processes it started outlived it", leaks.len()),
            )
            .detail(first.to_string());
            for leak in rest.iter().take(MAX_LEAKS_SHOWN - 1) {
                check = check.detail(leak.to_string());
            }
            if rest.len() >= MAX_LEAKS_SHOWN {
                check = check.detail(format!("and {} more", leaks.len() - MAX_LEAKS_SHOWN));
            }
            check
        }
    };
    check.detail("fix: make the processes your bot starts exit with it (or start none); hus killed them, another host may not")
}

fn games(facts: &Facts) -> Check {
    if !facts.played {
        return Check::new(
            Mark::Skipped,
            GAMES,
            "not played: fix the problems above first",
        );
    }
    let n = facts.games.len();
    let count = |f: &dyn Fn(&GameEnd) -> bool| facts.games.iter().filter(|g| f(g)).count();
    let won = count(&|g| g.winner == Some(Side::A));
    let lost = count(&|g| g.winner == Some(Side::B));
    let drawn = n - won - lost;
    let by_fault = count(&|g| g.faulted.contains(&Side::A));
    let summary = format!(
        "{n} game{} against the random mover: {won} won, {lost} lost, {drawn} drawn; it moved first in {} and second in {}; {} move{} with captures",
        plural(n),
        facts.moved_first,
        facts.moved_second,
        facts.captures,
        plural(facts.captures as usize)
    );
    let mut check = if by_fault > 0 {
        Check::new(Mark::Problem, GAMES, summary).detail(format!(
            "{by_fault} of {n} game{} lost by its faults (above)",
            plural(n)
        ))
    } else if let Some(f) = facts.opponent_faults.first() {
        Check::new(Mark::Warning, GAMES, summary).detail(format!(
            "the random mover faulted, not your bot (is the machine overloaded?): {}: {}",
            f.kind, f.detail
        ))
    } else {
        Check::new(Mark::Ok, GAMES, summary)
    };
    if facts.restarts > 0 {
        check = check.detail(format!(
            "it was restarted {} time{} after its faults",
            facts.restarts,
            plural(facts.restarts as usize)
        ));
    }
    if n > 0 && (facts.moved_first == 0 || facts.moved_second == 0) {
        let never = if facts.moved_first == 0 {
            "first"
        } else {
            "second"
        };
        check = check.detail(format!(
            "it never moved {never}: play 2 games or more (--games), or another --seed, to see both"
        ));
    }
    check
}

/// The `hus-warning: ` lines of the bot's stderr file (the probe's process and every
/// process of the set write to it; it holds at most `STDERR_CAP` bytes a process), each
/// shown as the referee shows what a bot wrote: escaped and cut (`protocol::excerpt`).
fn own_warnings(stderr: &Path) -> Check {
    // No file: the bot wrote nothing on its stderr.
    let bytes = std::fs::read(stderr).unwrap_or_default();
    let warnings: Vec<String> = bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(BOT_WARNING.as_bytes()))
        .map(|warning| protocol::excerpt(warning.trim_ascii(), WARNING_CHARS))
        .collect();
    let Some(first) = warnings.first() else {
        return Check::new(
            Mark::Ok,
            OWN_WARNINGS,
            format!(
                "no line of its stderr starts with \"{}\"",
                BOT_WARNING.trim_end()
            ),
        );
    };
    let n = warnings.len();
    let mut check = Check::new(
        Mark::Warning,
        OWN_WARNINGS,
        format!(
            "{n} line{} of its stderr start{} with \"{}\": {first}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
            BOT_WARNING.trim_end()
        ),
    );
    for more in warnings.iter().skip(1).take(WARNINGS_SHOWN - 1) {
        check = check.detail(more.clone());
    }
    if n > WARNINGS_SHOWN {
        check = check.detail(format!("and {} more", n - WARNINGS_SHOWN));
    }
    check.detail("the bot says it did not play the move it meant to (Python's hus.bot: choose raised or returned a pit that is not legal, and a random legal pit was played instead); its stderr has the tracebacks")
}

fn skipped(title: &'static str) -> Check {
    Check::new(Mark::Skipped, title, "no games were played")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `illegal-move in game 1 at ply 0: pit 16 does not exist (pits are 0 to 15)`, or
/// `malformed answering hello, before game 1: ...` for a fault outside a game.
fn headline(fault: &Fault) -> String {
    format!("{} {}: {}", fault.kind, fault.place(), fault.detail)
}

/// The first fault's evidence under its check, then the others in short.
fn with_faults(mut check: Check, faults: &[&Fault], position: bool) -> Check {
    let Some(first) = faults.first() else {
        return check;
    };
    if position {
        check = check.detail(format!(
            "position: {} (RULES.md notation; hus perft --position takes it)",
            first.position
        ));
        if let Some(legal) = legal_pits(&first.position) {
            check = check.detail(format!("legal pits were: {legal}"));
        }
    }
    if let Some(line) = &first.line {
        check = check.detail(format!("its line: {line}"));
    }
    check.details_from(more_faults(faults))
}

/// `the same 3 times in all (games 1, 2, 3)`, or the other faults one per line;
/// nothing for a single fault.
fn more_faults(faults: &[&Fault]) -> Option<String> {
    let (first, rest) = faults.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let same = rest
        .iter()
        .all(|f| f.kind == first.kind && f.detail == first.detail);
    let games: Vec<String> = faults.iter().map(|f| f.game.to_string()).collect();
    if same {
        return Some(format!(
            "the same {} times in all (games {})",
            faults.len(),
            games.join(", ")
        ));
    }
    let mut text = format!("{} times in all; also:", faults.len());
    for f in rest.iter().take(MORE_FAULTS_SHOWN) {
        text.push_str(&format!("\n{:9}  {}", "", headline(f)));
    }
    if rest.len() > MORE_FAULTS_SHOWN {
        text.push_str(&format!(
            "\n{:9}  ... and {} more (see the log)",
            "",
            rest.len() - MORE_FAULTS_SHOWN
        ));
    }
    Some(text)
}

/// `4, 5, 6, 7` from a position in notation.
fn legal_pits(position: &str) -> Option<String> {
    let pos: AnyPosition = position.parse().ok()?;
    let pits: Vec<String> = pos.legal_moves().map(|p| p.to_string()).collect();
    Some(pits.join(", "))
}

/// How to fix a fault, by its kind.
fn fix(fault: &Fault) -> String {
    let line = fault.line.as_deref().unwrap_or_default();
    match fault.kind {
        K::Malformed if serde_json::from_str::<serde_json::Value>(line).is_ok_and(|v| v.is_number()) => {
            r#"it sent a bare number: send a JSON object instead, {"type":"move","pit":4}"#.into()
        }
        K::Malformed if fault.stage == Stage::StartUp &&  fault.detail.contains("\"name\"") => {
            r#"answer hello with {"type":"ready","name":"my-bot"}: the name is a string, or null, or left out"#.into()
        }
        K::Malformed => r#"write each message as one JSON object on one line, ending in a newline: {"type":"move","pit":4}"#.into(),
        K::WrongMessage => r#"answer hello with {"type":"ready"} and each turn with {"type":"move","pit":N}; type names are lower-case"#.into(),
        K::OversizedLine => "keep every line under 65536 bytes, and end each one with a newline".into(),
        K::InvalidPit => r#"pit must be a plain JSON integer from the turn's "legal" list: {"type":"move","pit":4}, not "4" or 4.0"#.into(),
        K::IllegalMove => r#"answer with one of the pits in the turn's "legal" list; pits are numbered in your own sowing order, front row 0..W-1, back row W..2W-1 (PROTOCOL.md, "Pit numbering")"#.into(),
        K::UnsolicitedMessage => "send exactly one ready per hello and one move per turn, and nothing after result or bye: an extra line is not kept for the next turn".into(),
        K::TimeOut => "answer within the turn's time_ms, with a margin: time your search from when the turn line arrives and stop well before time_ms".into(),
        K::StartUp | K::Crash => "see PROTOCOL.md, \"Faults\"".into(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_bots_warnings_are_counted_escaped_and_cut() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("bot.a.stderr");
        assert_eq!(own_warnings(&path).mark, Mark::Ok, "no file: no warnings");
        let mut text = b"[bot] a log line\nhus-warning: first \x1b[31mred\x1b[0m\r\n".to_vec();
        text.extend(b"  hus-warning: not at the start of the line\nhus-warning: second\n");
        text.extend(b"hus-warning: third\nhus-warning: ");
        text.extend(vec![b'x'; 5000]);
        std::fs::write(&path, &text).expect("write");
        let check = own_warnings(&path);
        assert_eq!(check.mark, Mark::Warning);
        assert_eq!(
            check.summary,
            r#"4 lines of its stderr start with "hus-warning:": first \x1b[31mred\x1b[0m"#
        );
        assert_eq!(check.details[..2], ["second", "third"]);
        assert_eq!(check.details[2], "and 1 more");
    }

    use super::*;

    #[test]
    fn prose_is_told_from_protocol_lines() {
        assert!(looks_like_prose("thinking... pit 4 looks good"));
        assert!(looks_like_prose("Loading model"));
        assert!(!looks_like_prose(r#"{"type":"move","pit":4}"#));
        assert!(!looks_like_prose(r#"{"type":"move","pit":4"#));
        assert!(!looks_like_prose("[1,2,3]"));
        assert!(!looks_like_prose("4"));
        assert!(!looks_like_prose("true"));
    }

    #[test]
    fn legal_pits_come_from_the_position() {
        let start = "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0";
        assert_eq!(
            legal_pits(start).as_deref(),
            Some("4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15")
        );
        assert_eq!(legal_pits("nonsense"), None);
    }
}
