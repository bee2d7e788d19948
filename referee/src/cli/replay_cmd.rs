//! `hus replay`'s command line: reads its arguments, drives the verifier of
//! [`crate::replay`] over the log with the observers it asks for (a summary, one game,
//! the HTML viewer), says what the verdict means and returns its exit code.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::RangeInclusive;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::cli::args::ReplayArgs;
use crate::replay::source::{Follow, Source};
use crate::replay::text::{self, Style};
use crate::replay::verify::Verifier;
use crate::replay::{drive, html, Verdict};

/// How often `--follow` looks for new lines.
const POLL: Duration = Duration::from_millis(100);

fn style(args: &ReplayArgs) -> Result<Style> {
    let color = match args.color.as_str() {
        "always" => true,
        "never" => false,
        "auto" => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        other => bail!("--color must be auto, always or never, not {other:?}"),
    };
    Ok(Style { color })
}

/// `verified: 7 games, 165 moves`, and what was going on when the log stopped.
fn tally(v: &Verifier) -> String {
    let mut s = format!(
        "verified: {}, {}",
        text::plural(v.games_ended(), "game", "games"),
        text::plural(v.moves(), "move", "moves")
    );
    if let Some((game, plies)) = v.in_progress() {
        s.push_str(&format!(
            "; game {game} has no game-end ({plies} of its moves verified)"
        ));
    }
    s
}

/// Tells what the verdict means: success on stdout, problems on stderr.
fn announce(verdict: &Verdict, v: &Verifier, out: &mut dyn Write, summary: bool) -> Result<()> {
    match verdict {
        Verdict::Complete => {
            if summary {
                writeln!(out, "{}", tally(v))?;
            }
        }
        Verdict::Aborted(reason) => {
            if summary {
                writeln!(
                    out,
                    "{}; the set was aborted ({})",
                    tally(v),
                    text::clean(reason, 200)
                )?;
            }
        }
        Verdict::Incomplete { cut, stopped } => {
            out.flush()?;
            let cut = match cut {
                Some(n) => format!("; its last line, {n}, is cut short mid-way and was not read"),
                None => String::new(),
            };
            let why = match stopped {
                Some(why) => format!("stopped following: {why}, and "),
                None => String::new(),
            };
            if v.games_started() == 0 {
                let only = if v.records() == 1 {
                    "only its header"
                } else {
                    "only its header and ready records"
                };
                eprintln!(
                    "INCOMPLETE: {why}the log holds {only}: it ends before its first game began, \
                     without set-end or aborted (the referee was killed or the machine stopped){cut}"
                );
                return Ok(());
            }
            eprintln!(
                "INCOMPLETE: {why}the log ends without set-end or aborted (the referee was killed or \
                 the machine stopped){cut}. What it holds is consistent: {}",
                tally(v)
            );
        }
        Verdict::Corrupt(c) => {
            out.flush()?;
            // The message quotes the log, which may hold anything: escape what could
            // act on a terminal.
            eprintln!(
                "CORRUPT: line {}: {}",
                c.line,
                text::clean(&c.message, 4000)
            );
        }
    }
    Ok(())
}

/// `hus replay ARCHIVE`: verifies each log of an archive, a line each (`STEM:
/// verified: ...`, or what is wrong), and with `unpack` also writes it to that
/// directory. The exit status is the worst log's: 1 if one disagrees, else 3 if one was
/// cut short, else 0.
fn archive_run(path: &Path, unpack: Option<&Path>) -> Result<ExitCode> {
    let mut worst = 0u8;
    let mut logs = 0usize;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    crate::archive::each_log(path, |stem, log| {
        logs += 1;
        if let Some(dir) = unpack {
            crate::archive::write_log(dir, stem, &log)?;
        }
        let mut src = Source::new(
            crate::logfile::LogReader::Memory(io::Cursor::new(log)),
            None,
        );
        let mut v = Verifier::new();
        let name = text::clean(stem, 300);
        let (code, said) = match drive(&mut src, &mut v, &mut Quiet) {
            // A log of an archive that cannot be read is a log that disagrees.
            Err(e) => (
                1,
                format!("UNREADABLE: {}", text::clean(&format!("{e:#}"), 400)),
            ),
            Ok(Verdict::Complete) => (0, tally(&v)),
            Ok(Verdict::Aborted(reason)) => (
                0,
                format!(
                    "{}; the set was aborted ({})",
                    tally(&v),
                    text::clean(&reason, 200)
                ),
            ),
            Ok(Verdict::Incomplete { .. }) => (
                3,
                format!(
                    "INCOMPLETE: it ends without set-end or aborted; {}",
                    tally(&v)
                ),
            ),
            Ok(Verdict::Corrupt(c)) => (
                1,
                format!("CORRUPT: line {}: {}", c.line, text::clean(&c.message, 400)),
            ),
        };
        // 1 outranks 3, which outranks 0.
        worst = if worst == 1 || code == 1 {
            1
        } else {
            worst.max(code)
        };
        writeln!(out, "{name}: {said}")?;
        Ok(true)
    })
    .with_context(|| format!("cannot read {}", path.display()))?;
    out.flush()?;
    if logs == 0 {
        bail!("{} is an archive without any log", path.display());
    }
    Ok(ExitCode::from(worst))
}

/// Sees nothing: the verdict is all `hus replay ARCHIVE` prints of each log.
struct Quiet;

impl crate::replay::Observer for Quiet {
    fn observe(
        &mut self,
        _: &Verifier,
        _: &crate::records::Record,
        _: &crate::replay::verify::Checked,
    ) -> io::Result<()> {
        Ok(())
    }
}

/// `hus replay`: verifies a log, shows its games, follows it, or writes the viewer.
pub fn run(args: &ReplayArgs) -> Result<ExitCode> {
    let style = style(args)?;
    if args.follow && (args.game.is_some() || args.html.is_some()) {
        bail!(
            "--follow cannot be combined with --game or --html (run those on the log afterwards)"
        );
    }
    if args.ply.is_some() && args.html.is_some() {
        bail!(
            "--ply shows a position in the terminal; with --html, open the page at #game=N&ply=K"
        );
    }
    let select = match (args.game, args.games.as_deref()) {
        (Some(n), _) => Some(n..=n),
        (None, Some(range)) => Some(parse_games(range)?),
        (None, None) => None,
    };
    let path = &args.log;
    let archive = crate::archive::is_archive_file(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let file = match (archive, &args.set) {
        (true, None) if args.follow || args.game.is_some() || args.html.is_some() => bail!(
            "{} is an archive of logs: name one with --set STEM (hus replay {} lists them)",
            path.display(),
            path.display()
        ),
        (true, None) => return archive_run(path, args.unpack.as_deref()),
        (true, Some(_)) if args.follow => {
            bail!("--follow is for a log being written; an archive holds finished logs")
        }
        (true, Some(stem)) => {
            let text = crate::archive::read_log(path, stem)
                .with_context(|| format!("cannot read {}", path.display()))?
                .with_context(|| {
                    format!(
                        "{} holds no log of a set {:?} (hus replay {} lists them)",
                        path.display(),
                        text::clean(stem, 200),
                        path.display()
                    )
                })?;
            crate::logfile::LogReader::Memory(io::Cursor::new(text))
        }
        (false, _) if args.set.is_some() || args.unpack.is_some() => bail!(
            "--set and --unpack are for an archive of logs; {} is a log",
            path.display()
        ),
        (false, _) => crate::logfile::open_log(path)
            .with_context(|| format!("cannot open {}", path.display()))?,
    };
    let idle_limit = match args.idle_limit.as_deref() {
        Some(text) => Some(crate::config::check_positive(
            crate::config::parse_duration(text).context("invalid --idle-limit")?,
            "--idle-limit",
        )?),
        None => None,
    };
    let mut src = Source::new(file, args.follow.then(|| Follow::new(POLL, idle_limit)));
    let mut v = Verifier::new();
    let stdout = io::stdout();
    let context = || path.display().to_string();

    if let (Some(number), None) = (args.game, &args.html) {
        let mut view = text::GameView::new(BufWriter::new(stdout.lock()), style, number, args.ply);
        let verdict = drive(&mut src, &mut v, &mut view).with_context(context)?;
        view.flush()?;
        if let Verdict::Corrupt(_) = verdict {
            announce(&verdict, &v, &mut io::stdout(), false)?;
            return Ok(verdict.exit_code());
        }
        if !view.found {
            bail!(
                "{}: there is no game {number} (the log holds {})",
                path.display(),
                text::plural(
                    v.games_ended() + u32::from(v.in_progress().is_some()),
                    "game",
                    "games"
                )
            );
        }
        if args.ply.is_some() && !view.shown {
            bail!(
                "{}: game {number} has {}: --ply must be 0 to {}",
                path.display(),
                text::plural(view.plies, "ply", "plies"),
                view.plies
            );
        }
        announce(&verdict, &v, &mut io::stdout(), false)?;
        return Ok(verdict.exit_code());
    }

    let mut report = text::Report::new(BufWriter::new(stdout.lock()), style, args.follow);
    report.line(&format!(
        "log: {}",
        text::clean(&path.display().to_string(), 500)
    ))?;
    let mut collector = html::Collector::new(select.clone(), args.max_page_moves);
    let verdict = match &args.html {
        None => drive(&mut src, &mut v, &mut report),
        Some(_) => drive(&mut src, &mut v, &mut (&mut report, &mut collector)),
    }
    .with_context(context)?;
    // A log that ends before its first game: the lines about the set, still.
    report.finish_introduction(&v)?;
    if let Some(out) = &args.html {
        if !matches!(verdict, Verdict::Corrupt(_)) {
            let games = text::plural(collector.seen, "game", "games");
            let kept = collector.kept();
            if let (Some(range), None) = (&select, kept) {
                report.flush()?;
                bail!(
                    "{}: no viewer written: there is no game {} (the log holds {games})",
                    path.display(),
                    if range.start() == range.end() {
                        range.start().to_string()
                    } else {
                        format!("from {} to {}", range.start(), range.end())
                    }
                );
            }
            if collector.too_many_moves() {
                announce(&verdict, &v, report.writer(), true)?;
                report.flush()?;
                bail!(
                    "no viewer written: the page would hold {} moves ({}), more than \
                     --max-page-moves {}; choose games with --game N or a range with --games A-B",
                    collector.moves,
                    match &select {
                        Some(r) => format!("games {} to {}", r.start(), r.end()),
                        None => format!("all {games}"),
                    },
                    args.max_page_moves,
                );
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let page = html::page(&v, collector, &verdict, &name)?;
            write_file(out, &page)?;
            let part = match (&select, kept) {
                (Some(_), Some((first, last))) if first == last => {
                    format!(" (game {first} of {games})")
                }
                (Some(_), Some((first, last))) => format!(" (games {first} to {last} of {games})"),
                _ => String::new(),
            };
            report.line(&format!("viewer: {}{part}", out.display()))?;
        }
    }
    announce(&verdict, &v, report.writer(), true)?;
    if args.html.is_some() && matches!(verdict, Verdict::Corrupt(_)) {
        eprintln!("no viewer written: the log is corrupt");
    }
    report.flush()?;
    Ok(verdict.exit_code())
}

/// `--games A-B` (or `--games A`): the games of the page.
fn parse_games(text: &str) -> Result<RangeInclusive<u32>> {
    let number = |t: &str| -> Result<u32> {
        match t.trim().parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => bail!("--games {text:?}: games are numbered from 1 (write a range as 3-7)"),
        }
    };
    let (first, last) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => (number(text)?, number(text)?),
    };
    if first > last {
        bail!("--games {text:?}: the first game is after the last");
    }
    Ok(first..=last)
}

fn write_file(path: &Path, content: &str) -> Result<()> {
    let mut file = crate::files::create_file(path, crate::files::Create::Replace, None)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(content.as_bytes())
        .and_then(|_| file.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}
