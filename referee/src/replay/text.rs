//! What `hus replay` prints: moves in words, boards drawn as in RULES.md section 2
//! (player 0 at the bottom), the set's summary, and the live lines of `--follow`.
//!
//! Everything taken from a log (names, commands, fault details and lines) goes through
//! [`clean`] before it reaches the terminal: a bot name holding escape sequences must
//! not be able to redraw the user's terminal.

use std::fmt::Write as _;
use std::io::{self, Write};

use engine::{AnyPosition, Board, Event, Player, Sowing};

use crate::records::{Header, MoveRecord, Record, SprtDecision, TimeRecord};
use crate::side::{BySide, Seating, Side};

use super::verify::{Checked, Verifier};
use super::Observer;

/// Whether to colour the output (ANSI escapes).
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Colour with ANSI escapes.
    pub color: bool,
}

const BOLD: &str = "1";
const DIM: &str = "2";
const RED: &str = "1;31";
const GREEN: &str = "1;32";
const YELLOW: &str = "1;33";
const PLAYED: &str = "1;7";
const UNDERLINE: &str = "4";

impl Style {
    /// `text` in the SGR `codes`, or as it is without colour.
    pub fn paint(&self, codes: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{codes}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// Most characters of a fault's detail shown: room for a crash's path of its stderr
/// file and the last line quoted from it (LOGS.md, `fault.detail`).
const DETAIL_CHARS: usize = 1000;

/// Text from the log made safe to print: control characters and invalid UTF-8
/// escaped, and cut to `max` characters.
pub fn clean(text: &str, max: usize) -> String {
    protocol::excerpt(text.as_bytes(), max)
}

/// `A (alphabeta)`, or `A` for a bot that gave no name.
pub fn label(header: &Header, bot: Side) -> String {
    let letter = bot.letter();
    match &header.bots[bot].name {
        Some(name) => format!("{letter} ({})", clean(name, 40)),
        None => letter.to_string(),
    }
}

/// For each side, each team member's label (`greedy for A (red)`); empty lists in an
/// ordinary set.
pub fn mate_labels(header: &Header) -> BySide<Vec<String>> {
    BySide::from_fn(|b| match &header.teams {
        None => Vec::new(),
        Some(teams) => teams[b]
            .members
            .iter()
            .map(|m| format!("{} for {}", clean(&m.name, 40), label(header, b)))
            .collect(),
    })
}

/// The label of side `bot`, or of its member `mate` in a team set.
pub fn who<'a>(
    labels: &'a BySide<String>,
    mates: &'a BySide<Vec<String>>,
    bot: Side,
    mate: Option<usize>,
) -> &'a str {
    mate.and_then(|i| mates[bot].get(i)).unwrap_or(&labels[bot])
}

/// `1 seed`, `2 seeds`.
pub fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

fn pit_list(pits: impl Iterator<Item = u8>) -> String {
    let v: Vec<String> = pits.map(|p| p.to_string()).collect();
    v.join(", ")
}

/// One relay or capture in words: `captured 2 from pits 0, 1 landing in 7`,
/// `relay from 8 (3 seeds)`.
pub fn event_words(event: &Event) -> String {
    match event {
        Event::Relay(r) => format!(
            "relay from {} ({})",
            r.pit,
            plural(r.seeds, "seed", "seeds")
        ),
        Event::Capture(c) => {
            let taken: u32 = c.taken.iter().map(|t| t.seeds).sum();
            let mut s = format!(
                "captured {taken} from {} {} landing in {}",
                if c.taken.len() == 1 { "pit" } else { "pits" },
                pit_list(c.taken.iter().map(|t| t.pit)),
                c.landing
            );
            if c.own > 0 {
                let _ = write!(s, ", lifting its own {}", c.own);
            }
            s
        }
    }
}

/// Every event of a move, `; `-separated (for error messages).
pub fn events_words(events: &[Event]) -> String {
    if events.is_empty() {
        return "no relay or capture".to_string();
    }
    let v: Vec<String> = events.iter().map(event_words).collect();
    v.join("; ")
}

/// A whole move: `pit 5: 13 seeds sown; captured 2 from pits 0, 1 landing in 7; relay
/// from 8 (3 seeds)`.
pub fn move_words(m: &MoveRecord) -> String {
    report_words(m.pit, m.sown, &m.events, m.truncated)
}

/// [`move_words`] from the parts of a move, for moves that are not in a log
/// (`hus line`).
pub fn report_words(pit: u32, sown: u32, events: &[Event], truncated: bool) -> String {
    let mut s = format!("pit {pit}: {} sown", plural(sown, "seed", "seeds"));
    for e in events {
        s.push_str("; ");
        s.push_str(&event_words(e));
    }
    if truncated {
        s.push_str("; stopped by the 3000-seed rule");
    }
    s
}

/// Which pits of a board to point out: those of the move that led to it.
#[derive(Default)]
pub struct Marks {
    played: Option<(Player, usize)>,
    taken: Vec<(Player, usize)>,
    landing: Vec<(Player, usize)>,
    relays: Vec<(Player, usize)>,
}

impl Marks {
    /// The marks of move `m` (its player moved, the opponent's pits were taken).
    pub fn of_move(m: &MoveRecord) -> Marks {
        Marks::of(m.player, m.pit as usize, &m.events)
    }

    /// The marks of `mover` playing `pit`, with the move's relays and captures.
    pub fn of(mover: Player, pit: usize, events: &[Event]) -> Marks {
        let mut marks = Marks {
            played: Some((mover, pit)),
            ..Marks::default()
        };
        for e in events {
            match e {
                Event::Relay(r) => marks.relays.push((mover, r.pit as usize)),
                Event::Capture(c) => {
                    marks.landing.push((mover, c.landing as usize));
                    for t in &c.taken {
                        marks.taken.push((mover.other(), t.pit as usize));
                    }
                }
            }
        }
        marks
    }
}

/// The pit at column `col` (0 = left, as seen from player 0's seat) of `player`'s
/// front or back row: RULES.md section 2. Clockwise, player 0's front row runs 0..W-1
/// left to right and their back row 2W-1..W; player 1's rows are the same turned half
/// round. Anticlockwise is the mirror image.
pub fn pit_at(sowing: Sowing, w: usize, player: Player, front: bool, col: usize) -> usize {
    let mirrored = matches!(
        (sowing, player),
        (Sowing::Clockwise, Player::One) | (Sowing::Anticlockwise, Player::Zero)
    );
    match (front, mirrored) {
        (true, false) => col,
        (true, true) => w - 1 - col,
        (false, false) => 2 * w - 1 - col,
        (false, true) => w + col,
    }
}

const CELL: usize = 5;
const LABEL: usize = 10;

/// Draws `pos` with player 0 at the bottom: per player a row of pit numbers on each side
/// of its two rows, the names, and the side to move (unless `over`).
pub fn draw_board(
    out: &mut String,
    pos: &AnyPosition,
    names: &[String; 2],
    marks: &Marks,
    over: bool,
    style: &Style,
) {
    draw_board_from(out, pos, names, marks, over, style, Player::Zero);
}

/// [`draw_board`] as seen from the seat of `bottom`: that player's rows at the bottom,
/// the board turned half round when it is player 1 (`hus play` draws the person's side
/// at the bottom). The pit numbers are the same; only the point of view changes.
pub fn draw_board_from(
    out: &mut String,
    pos: &AnyPosition,
    names: &[String; 2],
    marks: &Marks,
    over: bool,
    style: &Style,
    bottom: Player,
) {
    let rules = pos.rules();
    let (w, sowing) = (rules.width(), rules.preset().sowing());
    // Column `col` from `bottom`'s seat is column `w - 1 - col` from player 0's.
    let column = |col: usize| match bottom {
        Player::Zero => col,
        Player::One => w - 1 - col,
    };
    let name_line = |out: &mut String, player: Player| {
        let mut text = format!("player {}", player.index());
        if !names[player.index()].is_empty() {
            text.push_str(&format!(": {}", names[player.index()]));
        }
        let mover = !over && pos.to_move() == player;
        if mover {
            text.push_str("  <- to move");
        }
        let _ = writeln!(
            out,
            "{:LABEL$}{}",
            "",
            if mover {
                style.paint(GREEN, &text)
            } else {
                style.paint(BOLD, &text)
            }
        );
    };
    let numbers = |out: &mut String, player: Player, front: bool| {
        let mut row = String::new();
        for col in 0..w {
            let _ = write!(
                row,
                "{:>CELL$}",
                pit_at(sowing, w, player, front, column(col))
            );
        }
        let _ = writeln!(
            out,
            "{}{}",
            style.paint(
                DIM,
                &format!("{:<LABEL$}", format!("P{} pit", player.index()))
            ),
            style.paint(DIM, &row)
        );
    };
    let seeds = |out: &mut String, player: Player, front: bool| {
        let _ = write!(
            out,
            "{:<LABEL$}",
            format!(
                "P{} {}",
                player.index(),
                if front { "front" } else { "back" }
            )
        );
        for col in 0..w {
            let pit = pit_at(sowing, w, player, front, column(col));
            let n = pos.seeds(player, pit);
            let at = (player, pit);
            let (text, codes) = if marks.played == Some(at) {
                (format!("[{n}]"), Some(PLAYED))
            } else if marks.taken.contains(&at) {
                (format!("({n})"), Some(RED))
            } else if marks.landing.contains(&at) {
                (n.to_string(), Some(YELLOW))
            } else if marks.relays.contains(&at) {
                (n.to_string(), Some(UNDERLINE))
            } else {
                (n.to_string(), None)
            };
            let padded = format!("{text:>CELL$}");
            match codes {
                Some(codes) if style.color => {
                    // Colour the number only, not the padding before it.
                    let lead = CELL.saturating_sub(text.len());
                    let _ = write!(out, "{:lead$}{}", "", style.paint(codes, &text));
                }
                _ => out.push_str(&padded),
            }
        }
        out.push('\n');
    };
    let top = bottom.other();
    name_line(out, top);
    numbers(out, top, false);
    seeds(out, top, false);
    seeds(out, top, true);
    numbers(out, top, true);
    let _ = writeln!(out, "{:LABEL$}{}", "", "-".repeat(CELL * w + 1));
    numbers(out, bottom, true);
    seeds(out, bottom, true);
    seeds(out, bottom, false);
    numbers(out, bottom, false);
    name_line(out, bottom);
}

fn time_words(t: &TimeRecord) -> String {
    match t {
        TimeRecord::PerMove { move_ms, ready_ms } => {
            format!("{move_ms} ms per move (ready within {ready_ms} ms)")
        }
        TimeRecord::Clock {
            base_ms,
            increment_ms,
            ready_ms,
        } => {
            format!("clock {base_ms} ms + {increment_ms} ms per move (ready within {ready_ms} ms)")
        }
        TimeRecord::Unknown => "a time control this hus does not know".to_string(),
    }
}

/// The lines about the set that open the summary.
fn header_lines(out: &mut String, h: &Header, style: &Style) {
    let _ = writeln!(
        out,
        "{} {} at width {}, {} games{}, seed {}",
        style.paint(BOLD, "set:"),
        h.rules.preset,
        h.rules.width,
        h.games,
        if h.early_stop { " (early stop)" } else { "" },
        h.seed
    );
    let _ = writeln!(out, "time: {}", time_words(&h.time));
    let _ = writeln!(
        out,
        "referee: {}, started {}",
        clean(&h.referee, 60),
        clean(&h.started, 40)
    );
    for b in Side::BOTH {
        match &h.teams {
            None => {
                let _ = writeln!(out, "  {}: {}", label(h, b), clean(&h.bots[b].command, 200));
            }
            Some(teams) => {
                let _ = writeln!(
                    out,
                    "  {}: a team of {}",
                    label(h, b),
                    teams[b].members.len()
                );
                for (i, m) in teams[b].members.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "    {}{} {}: {}",
                        b.letter(),
                        i + 1,
                        clean(&m.name, 40),
                        clean(&m.command, 200)
                    );
                }
            }
        }
    }
    if !h.openings.is_empty() {
        let _ = writeln!(
            out,
            "openings: {}, each for a pair of games with the first mover swapped",
            h.openings.len()
        );
    }
    if let Some(t) = &h.sprt {
        let _ = writeln!(
            out,
            "SPRT: elo0 = {}, elo1 = {}, alpha = {}, beta = {}; games in pairs, at most {}",
            t.elo0, t.elo1, t.alpha, t.beta, h.games
        );
    }
}

#[derive(Default, Clone, Copy)]
struct BotTime {
    moves: u64,
    total_ms: f64,
    max_ms: f64,
}

/// The summary of a set (and, with `follow`, every move as it arrives): one line per
/// game, faults, and the final table.
pub struct Report<W: Write> {
    out: W,
    style: Style,
    follow: bool,
    labels: BySide<String>,
    /// Team sets: each member's label.
    mates: BySide<Vec<String>>,
    first: Side,
    game_ms: BySide<f64>,
    times: BySide<BotTime>,
    buf: String,
    /// Whether the lines about the set are written (before the first record after the
    /// bots' start).
    introduced: bool,
}

impl<W: Write> Report<W> {
    pub fn new(out: W, style: Style, follow: bool) -> Report<W> {
        Report {
            out,
            style,
            follow,
            labels: BySide::from_fn(|b| b.letter().to_string()),
            mates: BySide::default(),
            first: Side::A,
            game_ms: BySide::default(),
            times: BySide::default(),
            buf: String::new(),
            introduced: false,
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The output, for lines after the summary.
    pub fn writer(&mut self) -> &mut W {
        &mut self.out
    }

    /// Writes a line straight to the output.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.out, "{text}")
    }

    fn table(&mut self, v: &Verifier, winner: Option<Side>, decided: bool) {
        let score = v.score();
        let faults = v.faults();
        let out = &mut self.buf;
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<28} {:>7} {:>5} {:>5} {:>5} {:>6} {:>9} {:>9}",
            "bot", "points", "won", "drawn", "lost", "faults", "mean ms", "max ms"
        );
        let (points, wins) = (BySide::from(score.points), BySide::from(score.wins));
        for (b, t) in self.times.sides() {
            let mean = if t.moves == 0 {
                0.0
            } else {
                t.total_ms / t.moves as f64
            };
            let lost = wins[b.other()];
            let _ = writeln!(
                out,
                "{:<28} {:>7} {:>5} {:>5} {:>5} {:>6} {:>9.2} {:>9.2}",
                self.labels[b], points[b], wins[b], score.draws, lost, faults[b], mean, t.max_ms
            );
        }
        if decided {
            let text = match winner {
                Some(w) => format!("{} wins the set", self.labels[w]),
                None => "the set is drawn".to_string(),
            };
            let _ = writeln!(out, "{}", self.style.paint(BOLD, &text));
        }
    }
}

impl<W: Write> Observer for Report<W> {
    fn observe(&mut self, v: &Verifier, record: &Record, _checked: &Checked) -> io::Result<()> {
        self.buf.clear();
        match record {
            // The set is introduced once its bots are named: the header is written
            // before they start, and their names come in `ready` (the verifier takes
            // them into its header).
            Record::Header(_) | Record::Ready(_) => {}
            _ if !self.introduced => {
                self.introduce(v);
                self.observe_after_introduction(v, record, _checked);
            }
            _ => self.observe_after_introduction(v, record, _checked),
        }
        if !self.buf.is_empty() {
            self.out.write_all(self.buf.as_bytes())?;
        }
        if self.follow {
            self.out.flush()?;
        }
        Ok(())
    }
}

impl<W: Write> Report<W> {
    /// Opens the summary with the lines about the set (once), labels the bots.
    pub fn introduce(&mut self, v: &Verifier) {
        if self.introduced {
            return;
        }
        self.introduced = true;
        if let Some(h) = v.header() {
            self.labels = BySide::from_fn(|b| label(h, b));
            self.mates = mate_labels(h);
            let style = self.style;
            header_lines(&mut self.buf, h, &style);
        }
    }

    /// Writes the introduction if no record asked for it yet (a log that ends before
    /// its first game): the final verdict follows it.
    pub fn finish_introduction(&mut self, v: &Verifier) -> io::Result<()> {
        self.buf.clear();
        self.introduce(v);
        if !self.buf.is_empty() {
            self.out.write_all(self.buf.as_bytes())?;
        }
        Ok(())
    }

    fn observe_after_introduction(&mut self, v: &Verifier, record: &Record, _checked: &Checked) {
        let style = self.style;
        match record {
            Record::Header(_) | Record::Ready(_) => {}
            Record::GameStart(g) => {
                self.first = g.first;
                self.game_ms = BySide::default();
                if self.follow {
                    let player = match _checked {
                        Checked::Started(start) => start.to_move().index(),
                        _ => 0,
                    };
                    let _ = writeln!(
                        self.buf,
                        "game {} begins: {} moves first (player {player})",
                        g.game, self.labels[g.first]
                    );
                }
            }
            Record::Move(m) => {
                let t = &mut self.times[m.bot];
                t.moves += 1;
                t.total_ms += m.ms;
                t.max_ms = t.max_ms.max(m.ms);
                self.game_ms[m.bot] += m.ms;
                if self.follow {
                    let _ = writeln!(
                        self.buf,
                        "  game {} ply {}: {} {:.2} ms, {}",
                        m.game,
                        m.ply,
                        who(&self.labels, &self.mates, m.bot, m.mate),
                        m.ms,
                        move_words(m)
                    );
                }
            }
            Record::Fault(f) => {
                let _ = writeln!(
                    self.buf,
                    "  {} {}: {} {}: {}",
                    style.paint(RED, "fault"),
                    clean(&f.place(), 100),
                    who(&self.labels, &self.mates, f.bot, f.mate),
                    f.kind,
                    clean(&f.detail, DETAIL_CHARS)
                );
                if let Some(line) = &f.line {
                    let _ = writeln!(self.buf, "    line: {}", clean(line, 300));
                }
            }
            Record::Restart(r) => {
                let _ = writeln!(
                    self.buf,
                    "  restarting {} for game {}",
                    self.labels[r.bot], r.game
                );
            }
            Record::GameEnd(e) => {
                let result = match e.winner {
                    Some(w) => format!("{} won", self.labels[w]),
                    None => "draw".to_string(),
                };
                let by = if e.faulted.is_empty() {
                    String::new()
                } else {
                    let who: Vec<&str> = e.faulted.iter().map(|b| b.letter()).collect();
                    format!(" (fault by {})", who.join(" and "))
                };
                let _ = writeln!(
                    self.buf,
                    "game {}: {} began; {} by {}{} after {}, points {}-{}; time A {:.1} ms, B {:.1} ms",
                    e.game,
                    self.labels[self.first],
                    result,
                    e.reason,
                    by,
                    plural(e.plies, "ply", "plies"),
                    e.points[Side::A],
                    e.points[Side::B],
                    self.game_ms[Side::A],
                    self.game_ms[Side::B]
                );
            }
            Record::SetEnd(e) => {
                if let Some(t) = &e.sprt {
                    let c = t.pentanomial;
                    let _ = writeln!(
                        self.buf,
                        "SPRT: {} after {} games: LLR {:.2} (bounds {:.2}, {:.2}); pentanomial [{}, {}, {}, {}, {}]",
                        match t.decision {
                            SprtDecision::AcceptH1 => "H1 accepted",
                            SprtDecision::AcceptH0 => "H0 accepted",
                            SprtDecision::Undecided => "no decision",
                        },
                        e.games_played,
                        t.llr,
                        t.lower,
                        t.upper,
                        c[0],
                        c[1],
                        c[2],
                        c[3],
                        c[4]
                    );
                }
                self.table(v, e.winner, true)
            }
            Record::Aborted(a) => {
                let _ = writeln!(
                    self.buf,
                    "{}: {}",
                    style.paint(YELLOW, "aborted"),
                    clean(&a.reason, 200)
                );
                self.table(v, None, false);
            }
            Record::Shutdown(_) => {}
        }
    }
}

/// `hus replay LOG --game N [--ply K]`: one game, move by move, or one of its positions.
pub struct GameView<W: Write> {
    out: W,
    style: Style,
    number: u32,
    ply: Option<u32>,
    /// Player names (by player) in this game.
    names: [String; 2],
    labels: BySide<String>,
    /// Team sets: each member's label.
    mates: BySide<Vec<String>>,
    pub found: bool,
    /// With `ply`: the position was shown.
    pub shown: bool,
    /// Moves of this game seen so far.
    pub plies: u32,
    buf: String,
}

impl<W: Write> GameView<W> {
    pub fn new(out: W, style: Style, number: u32, ply: Option<u32>) -> GameView<W> {
        GameView {
            out,
            style,
            number,
            ply,
            names: Default::default(),
            labels: BySide::from_fn(|b| b.letter().to_string()),
            mates: BySide::default(),
            found: false,
            shown: false,
            plies: 0,
            buf: String::new(),
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn position(&mut self, k: u32, pos: &AnyPosition, marks: &Marks, over: bool) {
        let style = self.style;
        let heading = if over {
            format!("ply {k}: game over")
        } else {
            let p = pos.to_move().index();
            format!("ply {k}: player {p}, {}, to move", self.names[p])
        };
        let _ = writeln!(self.buf, "{}", style.paint(BOLD, &heading));
        draw_board(&mut self.buf, pos, &self.names, marks, over, &style);
    }
}

impl<W: Write> Observer for GameView<W> {
    fn observe(&mut self, v: &Verifier, record: &Record, checked: &Checked) -> io::Result<()> {
        self.buf.clear();
        let style = self.style;
        match (record, checked) {
            (Record::GameStart(g), Checked::Started(start)) if g.game == self.number => {
                // By now the bots are named (the verifier's header has the names of
                // the first `ready` records).
                if let Some(h) = v.header() {
                    self.labels = BySide::from_fn(|b| label(h, b));
                    self.mates = mate_labels(h);
                }
                self.found = true;
                self.names = Seating::new(g.first, start.to_move())
                    .sides_by_player()
                    .map(|b| self.labels[b].clone());
                if self.ply.is_none() {
                    let rules = start.rules();
                    let _ = writeln!(
                        self.buf,
                        "{}",
                        style.paint(
                            BOLD,
                            &format!(
                                "game {}: {} at width {} ({} sowing); player 0 = {}, player 1 = {}",
                                g.game,
                                rules.preset(),
                                rules.width(),
                                match rules.preset().sowing() {
                                    Sowing::Clockwise => "clockwise",
                                    Sowing::Anticlockwise => "anticlockwise",
                                },
                                self.names[0],
                                self.names[1]
                            )
                        )
                    );
                    let _ = writeln!(
                        self.buf,
                        "Pit numbers are each owner's own (RULES.md section 2). [n]: the pit played; (n): a pit captured from{}.\n",
                        if style.color {
                            "; yellow: where a capture landed; underlined: relays"
                        } else {
                            ""
                        }
                    );
                }
                if matches!(self.ply, None | Some(0)) {
                    self.position(0, start, &Marks::default(), false);
                    if self.ply == Some(0) {
                        let _ = writeln!(self.buf, "position: {start}");
                        self.shown = true;
                    }
                }
            }
            (Record::Move(m), Checked::Moved(after, end)) if m.game == self.number => {
                self.plies = m.ply + 1;
                let line = format!(
                    "ply {}: {} played pit {} in {:.2} ms: {}",
                    m.ply,
                    who(&self.labels, &self.mates, m.bot, m.mate),
                    m.pit,
                    m.ms,
                    move_words(m)
                );
                match self.ply {
                    None => {
                        let _ = writeln!(self.buf, "\n{line}");
                        self.position(m.ply + 1, after, &Marks::of_move(m), end.is_some());
                    }
                    Some(k) if k == m.ply + 1 => {
                        let _ = writeln!(self.buf, "last move: {line}");
                        self.position(k, after, &Marks::of_move(m), end.is_some());
                        let _ = writeln!(self.buf, "position: {after}");
                        self.shown = true;
                    }
                    Some(_) => {}
                }
            }
            (Record::Fault(f), _) if f.game == self.number && self.ply.is_none() => {
                let _ = writeln!(
                    self.buf,
                    "\n{} {}: {} {}: {}",
                    style.paint(RED, "fault"),
                    clean(&f.place(), 100),
                    who(&self.labels, &self.mates, f.bot, f.mate),
                    f.kind,
                    clean(&f.detail, DETAIL_CHARS)
                );
                if let Some(line) = &f.line {
                    let _ = writeln!(self.buf, "  line: {}", clean(line, 300));
                }
            }
            (Record::GameEnd(e), _) if e.game == self.number && self.ply.is_none() => {
                let result = match e.winner {
                    Some(w) => format!("{} won", self.labels[w]),
                    None => "draw".to_string(),
                };
                let _ = writeln!(
                    self.buf,
                    "\n{}",
                    style.paint(
                        BOLD,
                        &format!(
                            "result: {result} by {} after {}{}, points {}-{} (A-B)",
                            e.reason,
                            plural(e.plies, "ply", "plies"),
                            if e.double { " (double)" } else { "" },
                            e.points[Side::A],
                            e.points[Side::B]
                        )
                    )
                );
            }
            _ => {}
        }
        if !self.buf.is_empty() {
            self.out.write_all(self.buf.as_bytes())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drawings of RULES.md section 2 at W = 8, top row first.
    #[test]
    fn pit_numbers_follow_the_drawings_of_the_rules() {
        let row = |sowing, player, front| -> Vec<usize> {
            (0..8)
                .map(|c| pit_at(sowing, 8, player, front, c))
                .collect()
        };
        use Player::{One, Zero};
        let cw = Sowing::Clockwise;
        assert_eq!(row(cw, One, false), [8, 9, 10, 11, 12, 13, 14, 15]);
        assert_eq!(row(cw, One, true), [7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(row(cw, Zero, true), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(row(cw, Zero, false), [15, 14, 13, 12, 11, 10, 9, 8]);
        let acw = Sowing::Anticlockwise;
        assert_eq!(row(acw, One, false), [15, 14, 13, 12, 11, 10, 9, 8]);
        assert_eq!(row(acw, One, true), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(row(acw, Zero, true), [7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(row(acw, Zero, false), [8, 9, 10, 11, 12, 13, 14, 15]);
    }

    #[test]
    fn a_move_in_words() {
        let m: MoveRecord = serde_json::from_str(
            r#"{"game":1,"ply":1,"bot":1,"player":1,"pit":5,"ms":0.148,"sown":13,"events":[{"kind":"capture","landing":7,"taken":[{"pit":0,"seeds":1},{"pit":1,"seeds":1}],"own":0,"sown":2,"sown_from":7},{"kind":"relay","pit":8,"seeds":3}],"truncated":false,"position":""}"#,
        )
        .expect("a move record");
        assert_eq!(
            move_words(&m),
            "pit 5: 13 seeds sown; captured 2 from pits 0, 1 landing in 7; relay from 8 (3 seeds)"
        );
    }

    #[test]
    fn the_start_drawn_without_colour() {
        let pos = AnyPosition::start(engine::Rules::default());
        let mut out = String::new();
        let names = ["A (x)".to_string(), "B (y)".to_string()];
        draw_board(
            &mut out,
            &pos,
            &names,
            &Marks::default(),
            false,
            &Style { color: false },
        );
        let expected = "          player 1: B (y)
P1 pit        8    9   10   11   12   13   14   15
P1 back       2    2    2    2    2    2    2    2
P1 front      2    2    2    2    0    0    0    0
P1 pit        7    6    5    4    3    2    1    0
          -----------------------------------------
P0 pit        0    1    2    3    4    5    6    7
P0 front      0    0    0    0    2    2    2    2
P0 back       2    2    2    2    2    2    2    2
P0 pit       15   14   13   12   11   10    9    8
          player 0: A (x)  <- to move
";
        assert_eq!(out, expected);
    }

    /// From player 1's seat the board is turned half round: what player 1 sees of a
    /// position is what player 0 sees of the same position with the players' pits
    /// swapped (labels swapped too). Checked after a few moves, with marks.
    #[test]
    fn the_board_drawn_from_player_1s_seat_is_player_0s_view_mirrored() {
        for rules in [
            engine::Rules::default(),
            engine::Rules::new(engine::Preset::MancalaWorld, 9).expect("rules"),
        ] {
            let mut pos = AnyPosition::start(rules);
            let mut marks = Marks::default();
            for _ in 0..3 {
                let mover = pos.to_move();
                let pit = pos.legal_moves().next().expect("a legal move");
                let report = pos.play(pit).expect("a legal move");
                marks = Marks::of(mover, pit, &report.events);
            }
            let style = Style { color: false };
            let names = ["x".to_string(), "y".to_string()];
            let mut seen = String::new();
            draw_board_from(&mut seen, &pos, &names, &marks, false, &style, Player::One);

            let setup = engine::Setup {
                rules,
                pits: [pos.pits(Player::One), pos.pits(Player::Zero)],
                to_move: pos.to_move().other(),
            };
            let swapped = AnyPosition::from_setup(&setup).expect("a position");
            let swap = |list: &Vec<(Player, usize)>| {
                list.iter()
                    .map(|&(p, n)| (p.other(), n))
                    .collect::<Vec<_>>()
            };
            let swapped_marks = Marks {
                played: marks.played.map(|(p, n)| (p.other(), n)),
                taken: swap(&marks.taken),
                landing: swap(&marks.landing),
                relays: swap(&marks.relays),
            };
            let mut mirror = String::new();
            draw_board(
                &mut mirror,
                &swapped,
                &["y".to_string(), "x".to_string()],
                &swapped_marks,
                false,
                &style,
            );
            let relabelled = mirror
                .replace("P0", "P#")
                .replace("P1", "P0")
                .replace("P#", "P1")
                .replace("player 0", "player #")
                .replace("player 1", "player 0")
                .replace("player #", "player 1");
            assert_eq!(seen, relabelled);
            assert!(seen
                .lines()
                .last()
                .is_some_and(|l| l.contains("player 1: y")));
        }
    }
}
