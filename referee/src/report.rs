//! Where a set's records go: the JSON Lines log (flushed line by line), the console,
//! and the `--json` summary.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::files::{Create, Dir};
use crate::records::{self, Record, StoppedBy};
use crate::replay::text::plural;
use crate::set::{RecordSink, WriteError};
use crate::side::{BySide, Side};
use crate::sprt::{decision_record, sprt_of_record, SprtTally};

/// The log of one set: one JSON object per line, each written and flushed as it
/// happens, so a crash of the referee loses nothing already played.
pub struct LogWriter {
    path: PathBuf,
    /// The log's name in `dir`, the directory it was created in (held open: the log is
    /// removed through it, never through a link put in its place).
    name: PathBuf,
    dir: Dir,
    out: BufWriter<File>,
    /// Records written so far.
    records: u64,
    /// `game-start` and `game-end` records written so far, and the others but the
    /// header and `aborted` (`ready`, `fault`...).
    games_started: u32,
    games_ended: u32,
    others: u64,
    /// The log directory, when this writer created it (`hus-logs/` of a first `hus
    /// match`): a set that cannot start removes it again if it is left empty.
    created_dir: Option<PathBuf>,
}

impl LogWriter {
    /// Creates a new log file in `dir` (the directory the user named, made if missing)
    /// named `STEM.jsonl`, never overwriting one: a taken name gets `-2`, `-3`, ...
    /// Returns the writer and the stem used.
    pub fn create(dir: &Path, stem: &str) -> Result<(LogWriter, String)> {
        let created_dir = (!dir.exists()).then(|| dir.to_path_buf());
        let open = Dir::create(dir)
            .with_context(|| format!("cannot create the log directory {}", dir.display()))?;
        let (mut writer, stem) = LogWriter::create_in(&open, stem)?;
        writer.created_dir = created_dir;
        Ok((writer, stem))
    }

    /// [`LogWriter::create`] in the open directory `dir` (a league's `logs/`, reached
    /// without following a link): no link is followed there either.
    pub fn create_in(dir: &Dir, stem: &str) -> Result<(LogWriter, String)> {
        let dir = dir
            .open_dir(Path::new(""))
            .with_context(|| format!("cannot open the log directory {}", dir.path().display()))?;
        for n in 1..1000 {
            let stem = if n == 1 {
                stem.to_string()
            } else {
                format!("{stem}-{n}")
            };
            let name = PathBuf::from(format!("{stem}.jsonl"));
            let path = dir.join(&name);
            match dir.create_file(&name, Create::New, None) {
                Ok(file) => {
                    return Ok((
                        LogWriter {
                            path,
                            name,
                            dir,
                            out: BufWriter::new(file),
                            records: 0,
                            games_started: 0,
                            games_ended: 0,
                            others: 0,
                            created_dir: None,
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
            dir.path().display()
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

    /// Ends the log of a set cut off before its end (Ctrl-C, SIGTERM, a person who
    /// quits, a league that stops) with its `aborted` record, stamped now. A write
    /// error is ignored: the set is over either way, and what was played is on disk.
    ///
    /// A set stopped before `play_set` wrote its header (the stop won the race with the
    /// set's first step) never began: its empty file is removed rather than given an
    /// `aborted` line that no reader could take for a log.
    pub fn end_aborted(&mut self, reason: impl Into<String>) {
        if self.records == 0 {
            let _ = self.dir.remove_file(&self.name);
            return;
        }
        let aborted = Record::Aborted(records::Aborted {
            reason: reason.into(),
            finished: records::now_rfc3339(),
        });
        let _ = self.record(&aborted);
    }

    /// After `play_set` failed before anything was played
    /// ([`SetError::nothing_played`](crate::SetError::nothing_played): a bot that cannot
    /// start, a header that cannot be written): removes the log, which holds no more
    /// than its header, each file of `beside` (the bots' stderr files) that is empty,
    /// and the log directory if this writer created it and it is left empty: such a set
    /// leaves nothing behind (README). Returns the files of `beside` that were kept (a
    /// bot wrote in its stderr before failing).
    pub fn discard_unstarted(&mut self, beside: &[PathBuf]) -> Vec<PathBuf> {
        let _ = self.dir.remove_file(&self.name);
        let kept = beside
            .iter()
            .filter(|p| !remove_if_empty(p))
            .cloned()
            .collect();
        if let Some(dir) = &self.created_dir {
            // Fails, as it should, when anything else is in it.
            let _ = std::fs::remove_dir(dir);
        }
        kept
    }

    /// What the log of a set stopped part-way holds, for the message that says where it
    /// is: `the games played so far are in LOG`, or that no game was played (or none
    /// finished) and what it holds instead.
    pub fn stopped_words(&self) -> String {
        let path = self.path.display();
        if self.records == 0 {
            "the set had not begun, and no log was written".to_string()
        } else if self.games_ended > 0 {
            format!("the games played so far are in {path}")
        } else if self.games_started > 0 {
            format!("no game was finished; the log {path} holds the first game up to the stop")
        } else if self.others == 0 {
            format!("no game was played; the log {path} holds its header only")
        } else {
            format!("no game was played; the log {path} holds its header and the bots' start only")
        }
    }
}

/// Deletes `path` if it is an empty file, or does not exist; whether it is gone.
fn remove_if_empty(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) if m.len() == 0 => std::fs::remove_file(path).is_ok(),
        Ok(_) => false,
        Err(_) => true,
    }
}

impl RecordSink for LogWriter {
    fn record(&mut self, record: &Record) -> Result<(), WriteError> {
        let write = |out: &mut BufWriter<File>| -> std::io::Result<()> {
            serde_json::to_writer(&mut *out, record)?;
            out.write_all(b"\n")?;
            out.flush()
        };
        write(&mut self.out).map_err(|error| WriteError {
            path: self.path.clone(),
            error,
        })?;
        self.records += 1;
        match record {
            Record::GameStart(_) => self.games_started += 1,
            Record::GameEnd(_) => self.games_ended += 1,
            Record::Header(_) | Record::Aborted(_) => {}
            _ => self.others += 1,
        }
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

/// A member of a team (team sets): its name and its share of its side's moves.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MateStats {
    /// The name given in the log's header (`teams[].members[].name`).
    pub name: String,
    pub command: String,
    /// The name it announced in `ready`, if it did.
    pub announced: Option<String>,
    pub faults: u32,
    pub moves: u64,
    #[serde(skip)]
    pub total_ms: f64,
    pub max_ms: f64,
}

impl MateStats {
    pub fn mean_ms(&self) -> f64 {
        if self.moves == 0 {
            0.0
        } else {
            self.total_ms / self.moves as f64
        }
    }
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
/// moved first and the start, which say how the player order of `position` maps to the
/// bot order of `winner`, `points` and `faulted`.
#[derive(Clone, Debug, Serialize)]
pub struct GameSummary {
    pub game: u32,
    /// The bot that moved first: the player to move in `start`.
    pub first: Side,
    /// The position the game started from (the preset's, or an opening).
    pub start: String,
    /// Team sets only: each side's order of members in this game (`game-start.order`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<BySide<Vec<usize>>>,
    pub reason: records::GameEndReason,
    /// A bot, or `null` for a draw.
    pub winner: Option<Side>,
    pub faulted: Vec<Side>,
    pub double: bool,
    /// By bot: A, B.
    pub points: BySide<u32>,
    pub plies: u32,
    /// The final position, in notation: player 0 first (the bot `first` when `start`
    /// has player 0 to move).
    pub position: String,
}

/// Prints one line per game as it ends, faults as they happen, and the final table;
/// keeps the figures for the `--json` summary.
pub struct Console {
    /// Print nothing (the figures are still kept).
    pub quiet: bool,
    /// Each bot's figures, in bot order (A, B); in a team set, each team's.
    pub bots: BySide<BotStats>,
    /// Team sets only: each team's name and its members' figures.
    pub teams: Option<BySide<(String, Vec<MateStats>)>>,
    /// Every game's end, in order, with who began it.
    pub games: Vec<GameSummary>,
    /// Every fault, in order.
    pub faults: Vec<records::Fault>,
    /// The set's header, once written.
    pub header: Option<records::Header>,
    /// The set's end, once written.
    pub set_end: Option<records::SetEnd>,
    /// With an SPRT (from the header): the pairs so far.
    pub sprt: Option<SprtTally>,
    game_ms: BySide<f64>,
    first: Side,
    start: String,
    order: Option<BySide<Vec<usize>>>,
    /// The winner of the first game of a pair still open.
    pair_opened: Option<Option<Side>>,
    /// Whether the set's opening lines are printed (at its first game).
    introduced: bool,
}

impl Console {
    /// A console for a set between these two bot commands.
    pub fn new(quiet: bool, commands: [String; 2]) -> Console {
        let [a, b] = commands;
        Console {
            quiet,
            bots: BySide::new(
                BotStats {
                    command: a,
                    ..BotStats::default()
                },
                BotStats {
                    command: b,
                    ..BotStats::default()
                },
            ),
            teams: None,
            games: Vec::new(),
            faults: Vec::new(),
            header: None,
            set_end: None,
            sprt: None,
            game_ms: BySide::default(),
            first: Side::A,
            start: String::new(),
            order: None,
            pair_opened: None,
            introduced: false,
        }
    }

    /// The SPRT's figures, for the end of the set (or of a set stopped part-way): the
    /// decision, the LLR and its bounds, the pairs, and the Elo difference of A over B
    /// with its 95% interval and the likelihood of superiority.
    pub fn print_sprt(&self, stopped: Option<&str>) {
        let Some(tally) = &self.sprt else {
            return;
        };
        if self.quiet {
            return;
        }
        let t = tally.sprt();
        let st = tally.status();
        let pairs = tally.pairs().pairs().unwrap_or(0);
        let games = plural(self.games.len() as u64, "game", "games");
        say!();
        say!(
            "SPRT elo0 = {}, elo1 = {}, alpha = {}, beta = {}; LLR bounds {:.2} and {:.2}",
            t.elo0(),
            t.elo1(),
            t.alpha(),
            t.beta(),
            st.lower_bound,
            st.upper_bound
        );
        let decision = match (st.decision, stopped) {
            (ratings::Decision::AcceptH1, _) => format!(
                "H1 accepted after {} ({games}): the LLR {:.2} reached the upper bound: the Elo \
                 difference of A over B is elo1 = {} or more rather than elo0 = {} or less",
                plural(pairs, "pair", "pairs"),
                st.llr,
                t.elo1(),
                t.elo0()
            ),
            (ratings::Decision::AcceptH0, _) => format!(
                "H0 accepted after {} ({games}): the LLR {:.2} reached the lower bound: the Elo \
                 difference of A over B is elo0 = {} or less rather than elo1 = {} or more",
                plural(pairs, "pair", "pairs"),
                st.llr,
                t.elo0(),
                t.elo1()
            ),
            (ratings::Decision::Continue, Some(signal)) => format!(
                "no decision: stopped by {signal} after {} ({games}), the LLR {:.2} between the bounds",
                plural(pairs, "pair", "pairs"),
                st.llr
            ),
            (ratings::Decision::Continue, None) => format!(
                "no decision after {} ({games}, the most --games allows): the LLR {:.2} between the bounds",
                plural(pairs, "pair", "pairs"),
                st.llr
            ),
        };
        say!("{decision}");
        let c = tally.pairs().counts;
        say!(
            "pentanomial (pairs in which A scored 0, 0.5, 1, 1.5, 2 points): [{}, {}, {}, {}, {}]",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4]
        );
        match tally.pairs().elo(0.95) {
            Ok(e) => say!(
                "Elo difference of A over B: {:+.1}, 95% interval [{:+.1}, {:+.1}]; likelihood of superiority {:.1}%",
                e.elo,
                e.low,
                e.high,
                100.0 * e.los
            ),
            Err(_) => say!("Elo difference of A over B: no whole pair played"),
        }
    }

    /// The SPRT's figures for the `--json` summary (`null` without an SPRT).
    pub fn sprt_json(&self) -> serde_json::Value {
        let Some(tally) = &self.sprt else {
            return serde_json::Value::Null;
        };
        let t = tally.sprt();
        let st = tally.status();
        let elo = tally.pairs().elo(0.95).ok();
        serde_json::json!({
            "elo0": t.elo0(),
            "elo1": t.elo1(),
            "alpha": t.alpha(),
            "beta": t.beta(),
            "decision": decision_record(st.decision),
            "llr": st.llr,
            "lower": st.lower_bound,
            "upper": st.upper_bound,
            "pairs": tally.pairs().pairs(),
            "pentanomial": tally.pairs().counts,
            "elo": elo.map(|e| serde_json::json!({"value": e.elo, "low": e.low, "high": e.high})),
            "los": elo.map(|e| e.los),
        })
    }

    /// Prints the set's opening lines: its rules, its sides and their commands. Only
    /// once the first game starts: the header is written before the bots start, and the
    /// names they announce (in the labels) come after it, in `ready`.
    fn introduce(&self) {
        let Some(h) = &self.header else {
            return;
        };
        if self.quiet {
            return;
        }
        say!(
            "hus: {} at width {}, {} games, seed {}",
            h.rules.preset,
            h.rules.width,
            h.games,
            h.seed
        );
        for b in Side::BOTH {
            match &h.teams {
                None => say!("  {}: {}", self.label(b), h.bots[b].command),
                Some(teams) => {
                    say!("  {}: a team of {}", self.label(b), teams[b].members.len());
                    for (i, m) in teams[b].members.iter().enumerate() {
                        say!("    {}{} {}: {}", b.letter(), i + 1, m.name, m.command);
                    }
                }
            }
        }
        if let Some(t) = &self.sprt {
            let t = t.sprt();
            say!(
                "  SPRT: elo0 = {}, elo1 = {}, alpha = {}, beta = {}; at most {} games, in pairs",
                t.elo0(),
                t.elo1(),
                t.alpha(),
                t.beta(),
                h.games
            );
        }
        if !h.openings.is_empty() {
            say!(
                "  openings: {} of them, each for a pair of games with the first mover swapped",
                h.openings.len()
            );
        }
    }

    /// `A (greedy)`.
    pub fn label(&self, bot: Side) -> String {
        let letter = bot.letter();
        match &self.bots[bot].name {
            Some(name) => format!("{letter} ({})", protocol::excerpt(name.as_bytes(), 40)),
            None => letter.to_string(),
        }
    }

    /// `greedy for A (red)`: a member of a team; `A (greedy)` for the bot of an
    /// ordinary set.
    pub fn mate_label(&self, bot: Side, mate: Option<usize>) -> String {
        match (&self.teams, mate) {
            (Some(teams), Some(i)) => match teams[bot].1.get(i) {
                Some(m) => format!(
                    "{} for {}",
                    protocol::excerpt(m.name.as_bytes(), 40),
                    self.label(bot)
                ),
                None => format!("{}{}", bot.letter(), i + 1),
            },
            _ => self.label(bot),
        }
    }

    /// The teams' figures for the `--json` summary (`null` in an ordinary set).
    pub fn teams_json(&self) -> serde_json::Value {
        match &self.teams {
            None => serde_json::Value::Null,
            Some(teams) => serde_json::Value::Array(
                teams
                    .iter()
                    .map(|(name, members)| {
                        serde_json::json!({
                            "name": name,
                            "members": members.iter().map(|m| serde_json::json!({
                                "name": m.name,
                                "command": m.command,
                                "announced": m.announced,
                                "moves": m.moves,
                                "faults": m.faults,
                                "mean_ms": m.mean_ms(),
                                "max_ms": m.max_ms,
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect(),
            ),
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
        for (b, s) in self.bots.sides() {
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
        if let Some(teams) = &self.teams {
            for (b, (_, members)) in teams.sides() {
                for (i, m) in members.iter().enumerate() {
                    say!(
                        "  {:<26} {:>7} {:>5} {:>5} {:>5} {:>6} {:>9.2} {:>9.2}",
                        self.mate_label(b, Some(i)),
                        "",
                        "",
                        "",
                        "",
                        m.faults,
                        m.mean_ms(),
                        m.max_ms
                    );
                }
            }
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
    fn record(&mut self, record: &Record) -> Result<(), WriteError> {
        match record {
            Record::Header(h) => {
                for b in Side::BOTH {
                    self.bots[b].name = h.bots[b].name.clone();
                }
                self.teams = h.teams.as_ref().map(|teams| {
                    BySide::from_fn(|b| {
                        let members = teams[b]
                            .members
                            .iter()
                            .map(|m| MateStats {
                                name: m.name.clone(),
                                command: m.command.clone(),
                                announced: m.announced.clone(),
                                ..MateStats::default()
                            })
                            .collect();
                        (teams[b].name.clone(), members)
                    })
                });
                self.sprt = h
                    .sprt
                    .as_ref()
                    .and_then(|r| sprt_of_record(r).ok())
                    .map(SprtTally::new);
                self.header = Some(h.clone());
            }
            Record::Ready(r) => match (self.teams.as_mut(), r.mate) {
                (Some(teams), Some(i)) => {
                    if let Some(m) = teams[r.bot].1.get_mut(i) {
                        m.announced = r.name.clone();
                    }
                }
                _ => self.bots[r.bot].name = r.name.clone(),
            },
            Record::GameStart(g) => {
                if !self.introduced {
                    self.introduced = true;
                    self.introduce();
                }
                self.game_ms = BySide::default();
                self.first = g.first;
                self.order = g.order.clone();
                self.start.clone_from(&g.position);
            }
            Record::Move(m) => {
                let s = &mut self.bots[m.bot];
                s.moves += 1;
                s.total_ms += m.ms;
                s.max_ms = s.max_ms.max(m.ms);
                self.game_ms[m.bot] += m.ms;
                if let (Some(teams), Some(i)) = (self.teams.as_mut(), m.mate) {
                    if let Some(t) = teams[m.bot].1.get_mut(i) {
                        t.moves += 1;
                        t.total_ms += m.ms;
                        t.max_ms = t.max_ms.max(m.ms);
                    }
                }
            }
            Record::Fault(f) => {
                self.bots[f.bot].faults += 1;
                if let (Some(teams), Some(i)) = (self.teams.as_mut(), f.mate) {
                    if let Some(t) = teams[f.bot].1.get_mut(i) {
                        t.faults += 1;
                    }
                }
                if !self.quiet {
                    say!(
                        "  fault {}: {} {}: {}",
                        f.place(),
                        self.mate_label(f.bot, f.mate),
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
                for b in Side::BOTH {
                    self.bots[b].points += g.points[b];
                    match g.winner {
                        Some(w) if w == b => self.bots[b].wins += 1,
                        Some(_) => self.bots[b].losses += 1,
                        None => self.bots[b].draws += 1,
                    }
                }
                if let Some(tally) = self.sprt.as_mut() {
                    // One line per pair, not per game: an SPRT may play thousands.
                    let opened = self.pair_opened.take();
                    if let Some(status) = tally.add_game(g.game, g.winner) {
                        if !self.quiet {
                            let a = [opened.flatten(), g.winner]
                                .iter()
                                .map(|w| match w {
                                    Some(Side::A) => 1.0,
                                    Some(Side::B) => 0.0,
                                    None => 0.5,
                                })
                                .sum::<f64>();
                            let c = tally.pairs().counts;
                            say!(
                                "pair {} (games {}-{}): A {}-{} B; LLR {:.2} (bounds {:.2}, {:.2}); pentanomial [{}, {}, {}, {}, {}]",
                                g.game / 2,
                                g.game - 1,
                                g.game,
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
                            );
                        }
                    } else {
                        self.pair_opened = Some(g.winner);
                    }
                } else if !self.quiet {
                    let result = match g.winner {
                        Some(w) => format!("{} won", self.label(w)),
                        None => "draw".to_string(),
                    };
                    let order = match (&self.order, &self.teams) {
                        (Some(order), Some(teams)) => {
                            let names = |b: Side| {
                                order[b]
                                    .iter()
                                    .map(|&i| teams[b].1.get(i).map_or("?", |m| m.name.as_str()))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            };
                            format!("; order A: {}; B: {}", names(Side::A), names(Side::B))
                        }
                        _ => String::new(),
                    };
                    say!(
                        "game {}: {} began; {} by {} after {} plies, points {}-{}; time A {:.1} ms, B {:.1} ms{}",
                        g.game,
                        self.label(self.first),
                        result,
                        g.reason,
                        g.plies,
                        g.points[Side::A],
                        g.points[Side::B],
                        self.game_ms[Side::A],
                        self.game_ms[Side::B],
                        order
                    );
                }
                self.games.push(GameSummary {
                    game: g.game,
                    first: self.first,
                    start: self.start.clone(),
                    order: self.order.clone(),
                    reason: g.reason,
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
                    say!(
                        "  restarting {} for game {}",
                        self.mate_label(r.bot, r.mate),
                        r.game
                    );
                }
            }
            Record::Shutdown(s) => {
                let label = self.mate_label(s.bot, s.mate);
                if !self.quiet && s.stopped_by != StoppedBy::Itself {
                    say!("  {label} stopped by {}", s.stopped_by);
                }
                if !self.quiet {
                    for words in leak_words(&s.strays, s.leaked, s.stopped_by) {
                        say!("  {label}: {words}");
                    }
                }
            }
            Record::SetEnd(e) => self.set_end = Some(e.clone()),
            Record::Aborted(_) => {}
        }
        Ok(())
    }
}

/// `a process it started (pid 12, `sleep 7`) was still running after it exited; hus
/// ended it`: said the same by the console and `hus check-bot`.
pub(crate) fn stray_words(stray: &records::StrayProcess, stopped_by: StoppedBy) -> String {
    format!(
        "a process it started (pid {}, `{}`{}) was still running after it {}; hus ended it",
        stray.pid,
        stray.command,
        if stray.left_group {
            ", which had left its process group"
        } else {
            ""
        },
        if stopped_by == StoppedBy::Itself {
            "exited"
        } else {
            "was stopped"
        }
    )
}

/// What a bot left running, one sentence per process; when its pipes stayed open and
/// no process could be named, one sentence saying so.
pub(crate) fn leak_words(
    strays: &[records::StrayProcess],
    leaked: bool,
    stopped_by: StoppedBy,
) -> Vec<String> {
    let mut words: Vec<String> = strays.iter().map(|s| stray_words(s, stopped_by)).collect();
    if leaked && words.is_empty() {
        words.push("a process it started kept its pipes open after it was stopped".to_string());
    }
    words
}

/// Sends every record to the log first, then to the console.
pub struct Tee<'a> {
    pub log: &'a mut LogWriter,
    pub console: &'a mut Console,
}

impl RecordSink for Tee<'_> {
    fn record(&mut self, record: &Record) -> Result<(), WriteError> {
        self.log.record(record)?;
        self.console.record(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_stopped_before_its_header_leaves_no_file_and_says_so() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (mut log, stem) = LogWriter::create(dir.path(), "r1-a-vs-b").expect("log");
        assert_eq!(stem, "r1-a-vs-b");
        let path = log.path().to_path_buf();
        assert!(path.exists());
        log.end_aborted("stopped by SIGTERM");
        assert!(!path.exists(), "an aborted line alone is not a log");
        assert_eq!(
            log.stopped_words(),
            "the set had not begun, and no log was written"
        );
    }

    #[test]
    fn a_set_stopped_after_its_first_record_ends_with_aborted() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (mut log, _) = LogWriter::create(dir.path(), "r1-a-vs-b").expect("log");
        log.record(&Record::Ready(records::Ready {
            bot: Side::A,
            mate: None,
            name: Some("a".into()),
            ms: 1.0,
            peer: None,
            rtt_ms: None,
        }))
        .expect("written");
        log.end_aborted("stopped by SIGTERM");
        let text = std::fs::read_to_string(log.path()).expect("the log stays");
        let kinds: Vec<String> = text
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("a record");
                v["type"].as_str().expect("a type").to_string()
            })
            .collect();
        assert_eq!(kinds, ["ready", "aborted"]);
        assert_eq!(
            log.stopped_words(),
            format!(
                "no game was played; the log {} holds its header and the bots' start only",
                log.path().display()
            )
        );
    }
}
