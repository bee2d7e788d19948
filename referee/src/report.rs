//! Where a set's records go: the JSON Lines log (flushed line by line), the console,
//! and the `--json` summary.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::records::{self, Record};
use crate::set::RecordSink;

/// The log of one set: one JSON object per line, each written and flushed as it
/// happens, so a crash of the referee loses nothing already played.
pub struct LogWriter {
    path: PathBuf,
    out: BufWriter<File>,
    /// Records written so far.
    records: u64,
}

impl LogWriter {
    /// Creates a new log file in `dir` named `STEM.jsonl`, never overwriting one: a
    /// taken name gets `-2`, `-3`, ... Returns the writer and the stem used.
    pub fn create(dir: &Path, stem: &str) -> Result<(LogWriter, String)> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the log directory {}", dir.display()))?;
        for n in 1..1000 {
            let stem = if n == 1 {
                stem.to_string()
            } else {
                format!("{stem}-{n}")
            };
            let path = dir.join(format!("{stem}.jsonl"));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok((
                        LogWriter {
                            path,
                            out: BufWriter::new(file),
                            records: 0,
                        },
                        stem,
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot create the log file {}", path.display()))
                }
            }
        }
        anyhow::bail!(
            "cannot find a free log file name for {stem} in {}",
            dir.display()
        )
    }

    /// Where the log is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Deletes the log file if no record was ever written to it: a set that could not
    /// even start leaves no empty file behind for `hus replay` to puzzle over. Returns
    /// whether it was deleted.
    pub fn remove_if_unwritten(&mut self) -> bool {
        self.records == 0 && std::fs::remove_file(&self.path).is_ok()
    }
}

impl RecordSink for LogWriter {
    fn record(&mut self, record: &Record) -> Result<()> {
        let write = |out: &mut BufWriter<File>| -> std::io::Result<()> {
            serde_json::to_writer(&mut *out, record)?;
            out.write_all(b"\n")?;
            out.flush()
        };
        write(&mut self.out)
            .with_context(|| format!("cannot write to the log {}", self.path.display()))?;
        self.records += 1;
        Ok(())
    }
}

/// Prints a console line. A closed stdout (`hus match ... | head`) must neither panic
/// nor stop the set: the log is the record, so write errors are ignored here.
macro_rules! say {
    () => {{
        let _ = writeln!(std::io::stdout());
    }};
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Per-bot figures for the final table and the summary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BotStats {
    pub command: String,
    pub name: Option<String>,
    pub points: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub faults: u32,
    pub moves: u64,
    pub total_ms: f64,
    pub max_ms: f64,
}

impl BotStats {
    pub fn mean_ms(&self) -> f64 {
        if self.moves == 0 {
            0.0
        } else {
            self.total_ms / self.moves as f64
        }
    }
}

/// One game in the `--json` summary: its `game-end` record (LOGS.md) with the bot that
/// moved first, which says how the player order of `position` maps to the bot order of
/// `winner`, `points` and `faulted`.
#[derive(Clone, Debug, Serialize)]
pub struct GameSummary {
    pub game: u32,
    /// The bot that moved first: player 0 of `position`.
    pub first: usize,
    pub reason: String,
    /// A bot, or `null` for a draw.
    pub winner: Option<usize>,
    pub faulted: Vec<usize>,
    pub double: bool,
    /// By bot: A, B.
    pub points: [u32; 2],
    pub plies: u32,
    /// The final position, in notation: player 0 (the bot `first`) first.
    pub position: String,
}

/// Prints one line per game as it ends, faults as they happen, and the final table;
/// keeps the figures for the `--json` summary.
pub struct Console {
    /// Print nothing (the figures are still kept).
    pub quiet: bool,
    /// Each bot's figures, in bot order (A, B).
    pub bots: [BotStats; 2],
    /// Every game's end, in order, with who began it.
    pub games: Vec<GameSummary>,
    /// Every fault, in order.
    pub faults: Vec<records::Fault>,
    /// The set's header, once written.
    pub header: Option<records::Header>,
    /// The set's end, once written.
    pub set_end: Option<records::SetEnd>,
    game_ms: [f64; 2],
    first: usize,
}

impl Console {
    /// A console for a set between these two bot commands.
    pub fn new(quiet: bool, commands: [String; 2]) -> Console {
        let [a, b] = commands;
        Console {
            quiet,
            bots: [
                BotStats {
                    command: a,
                    ..BotStats::default()
                },
                BotStats {
                    command: b,
                    ..BotStats::default()
                },
            ],
            games: Vec::new(),
            faults: Vec::new(),
            header: None,
            set_end: None,
            game_ms: [0.0; 2],
            first: 0,
        }
    }

    /// `A (greedy)`.
    pub fn label(&self, bot: usize) -> String {
        let letter = ["A", "B"][bot];
        match &self.bots[bot].name {
            Some(name) => format!("{letter} ({})", protocol::excerpt(name.as_bytes(), 40)),
            None => letter.to_string(),
        }
    }

    /// Prints the final table of the set, and where its log is.
    pub fn print_table(&self, log: &Path) {
        if self.quiet {
            return;
        }
        say!();
        say!(
            "{:<28} {:>7} {:>5} {:>5} {:>5} {:>6} {:>9} {:>9}",
            "bot",
            "points",
            "won",
            "drawn",
            "lost",
            "faults",
            "mean ms",
            "max ms"
        );
        for b in 0..2 {
            let s = &self.bots[b];
            say!(
                "{:<28} {:>7} {:>5} {:>5} {:>5} {:>6} {:>9.2} {:>9.2}",
                self.label(b),
                s.points,
                s.wins,
                s.draws,
                s.losses,
                s.faults,
                s.mean_ms(),
                s.max_ms
            );
        }
        if let Some(end) = &self.set_end {
            match end.winner {
                Some(w) => say!("{} wins the set", self.label(w)),
                None => say!("the set is drawn"),
            }
        }
        say!("log: {}", log.display());
    }
}

impl RecordSink for Console {
    fn record(&mut self, record: &Record) -> Result<()> {
        match record {
            Record::Header(h) => {
                for b in 0..2 {
                    self.bots[b].name = h.bots[b].name.clone();
                }
                if !self.quiet {
                    say!(
                        "hus: {} at width {}, {} games, seed {}",
                        h.rules.preset,
                        h.rules.width,
                        h.games,
                        h.seed
                    );
                    for b in 0..2 {
                        say!("  {}: {}", self.label(b), h.bots[b].command);
                    }
                }
                self.header = Some(h.clone());
            }
            Record::Ready(r) => self.bots[r.bot].name = r.name.clone(),
            Record::GameStart(g) => {
                self.game_ms = [0.0; 2];
                self.first = g.first;
            }
            Record::Move(m) => {
                let s = &mut self.bots[m.bot];
                s.moves += 1;
                s.total_ms += m.ms;
                s.max_ms = s.max_ms.max(m.ms);
                self.game_ms[m.bot] += m.ms;
            }
            Record::Fault(f) => {
                self.bots[f.bot].faults += 1;
                if !self.quiet {
                    say!(
                        "  fault {}: {} {}: {}",
                        f.place(),
                        self.label(f.bot),
                        f.kind,
                        f.detail
                    );
                    say!("    position: {}", f.position);
                    if let Some(line) = &f.line {
                        say!("    line: {line}");
                    }
                }
                self.faults.push(f.clone());
            }
            Record::GameEnd(g) => {
                for b in 0..2 {
                    self.bots[b].points += g.points[b];
                    match g.winner {
                        Some(w) if w == b => self.bots[b].wins += 1,
                        Some(_) => self.bots[b].losses += 1,
                        None => self.bots[b].draws += 1,
                    }
                }
                if !self.quiet {
                    let result = match g.winner {
                        Some(w) => format!("{} won", self.label(w)),
                        None => "draw".to_string(),
                    };
                    say!(
                        "game {}: {} began; {} by {} after {} plies, points {}-{}; time A {:.1} ms, B {:.1} ms",
                        g.game,
                        self.label(self.first),
                        result,
                        g.reason,
                        g.plies,
                        g.points[0],
                        g.points[1],
                        self.game_ms[0],
                        self.game_ms[1]
                    );
                }
                self.games.push(GameSummary {
                    game: g.game,
                    first: self.first,
                    reason: g.reason.clone(),
                    winner: g.winner,
                    faulted: g.faulted.clone(),
                    double: g.double,
                    points: g.points,
                    plies: g.plies,
                    position: g.position.clone(),
                });
            }
            Record::Restart(r) => {
                if !self.quiet {
                    say!("  restarting {} for game {}", self.label(r.bot), r.game);
                }
            }
            Record::Shutdown(s) => {
                if !self.quiet && (s.leaked || s.stopped_by != "itself") {
                    say!(
                        "  {} stopped by {}{}",
                        self.label(s.bot),
                        s.stopped_by,
                        if s.leaked {
                            "; a process it started kept its pipes open"
                        } else {
                            ""
                        }
                    );
                }
            }
            Record::SetEnd(e) => self.set_end = Some(e.clone()),
            Record::Aborted(_) => {}
        }
        Ok(())
    }
}

/// Sends every record to the log first, then to the console.
pub struct Tee<'a> {
    pub log: &'a mut LogWriter,
    pub console: &'a mut Console,
}

impl RecordSink for Tee<'_> {
    fn record(&mut self, record: &Record) -> Result<()> {
        self.log.record(record)?;
        self.console.record(record)
    }
}
