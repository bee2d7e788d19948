//! `hus replay LOG --html OUT.html`: one self-contained page (no network, inline CSS and
//! JS) that replays the set, or the games chosen with `--game N` / `--games A-B`. The
//! viewer's source is in `viewer.html`, `viewer.css`, `rules.js`, `board.js` (the board
//! drawing, shared with `hus play --web`) and `viewer.js` beside this file; the set goes
//! into the page as JSON in a `<script type="application/json">` element, with `<`, `>`, `&`, U+2028 and U+2029 escaped so that nothing in a log (a bot
//! named `</script><script>...`) can end that element. The script inserts every text
//! from the log with `textContent`.
//!
//! The page holds, per move, only the pit played and the time taken: `rules.js`
//! computes the boards, relays and captures from the starting position, so a page
//! grows by about 9 bytes per move (README, "Replaying a log"). Every game also holds
//! the last position the log has for it, already checked by the engine: the page
//! compares its own last board with it and says so if they ever differ.

use std::io;
use std::ops::RangeInclusive;

use anyhow::Result;
use engine::{AnyPosition, Sowing};
use serde::Serialize;

use crate::records::{Fault, FaultKind, GameEnd, GameEndReason, Record, Stage, TimeRecord};
use crate::side::{BySide, Side};

use super::text;
use super::verify::{Checked, Verifier};
use super::{Observer, Verdict};

const TEMPLATE: &str = include_str!("viewer.html");
/// The viewer's style sheet (the board's look included).
pub const CSS: &str = include_str!("viewer.css");
/// `HusRules`: the engine's move function ported to JavaScript.
pub const RULES_JS: &str = include_str!("rules.js");
/// `HusBoard`: the board drawing (SVG), on `HusRules` positions.
pub const BOARD_JS: &str = include_str!("board.js");
const JS: &str = include_str!("viewer.js");
const CSS_SLOT: &str = "/*HUS-CSS*/";
const JS_SLOT: &str = "/*HUS-JS*/";
const DATA_SLOT: &str = "/*HUS-DATA*/";

/// Milliseconds to the hundredth, as the viewer shows them: one byte less per move.
fn hundredths(ms: f64) -> f64 {
    (ms * 100.0).round() / 100.0
}

#[derive(Serialize)]
struct FaultData {
    ply: u32,
    /// Where, in words: `at ply 4 (the log's ply 3)`, or before the game for a fault
    /// while starting.
    at: String,
    bot: Side,
    kind: FaultKind,
    detail: String,
    line: Option<String>,
    ms: Option<f64>,
}

impl From<&Fault> for FaultData {
    fn from(f: &Fault) -> Self {
        FaultData {
            ply: f.ply,
            at: match f.stage {
                // Plies counted from 1, as the move list and the dashboard count them.
                Stage::Game => format!("at ply {} (the log's ply {})", f.ply + 1, f.ply),
                Stage::StartUp | Stage::Result => f.place(),
            },
            bot: f.bot,
            kind: f.kind,
            detail: f.detail.clone(),
            line: f.line.clone(),
            ms: f.ms,
        }
    }
}

#[derive(Serialize)]
struct EndData {
    reason: GameEndReason,
    winner: Option<Side>,
    faulted: Vec<Side>,
    double: bool,
    points: BySide<u32>,
    plies: u32,
}

impl From<&GameEnd> for EndData {
    fn from(e: &GameEnd) -> Self {
        EndData {
            reason: e.reason,
            winner: e.winner,
            faulted: e.faulted.clone(),
            double: e.double,
            points: e.points,
            plies: e.plies,
        }
    }
}

#[derive(Serialize)]
struct GameData {
    game: u32,
    /// The bot that moves first: the player to move in `start`.
    first: Side,
    /// The starting position, in the notation of RULES.md.
    start: String,
    /// The pit of each move, in order: the page plays them with `rules.js`.
    pits: Vec<u8>,
    /// The time each move took, in ms.
    ms: Vec<f64>,
    /// Team sets: the member of its team who played each move (`move.mate`); empty
    /// otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mates: Vec<u8>,
    faults: Vec<FaultData>,
    end: Option<EndData>,
    /// The engine's position after the last move the log holds (or the start), for the
    /// page to check its own against.
    last: String,
}

/// Keeps the chosen games as they are checked.
#[derive(Default)]
pub struct Collector {
    games: Vec<GameData>,
    /// The games to keep; all when `None`.
    select: Option<RangeInclusive<u32>>,
    /// The engine's position after the last move of each kept game.
    last: Vec<AnyPosition>,
    /// Whether the records being read belong to a kept game.
    keeping: bool,
    /// Games in the log, kept or not.
    pub seen: u32,
    /// Moves of the kept games.
    pub moves: u64,
    /// The most moves to keep: past that the page is refused (`--max-page-moves`).
    max_moves: u64,
}

impl Collector {
    /// A collector of the games in `select` (all when `None`), keeping at most
    /// `max_moves` moves.
    pub fn new(select: Option<RangeInclusive<u32>>, max_moves: u64) -> Collector {
        Collector {
            select,
            max_moves,
            ..Collector::default()
        }
    }

    /// Whether the kept games hold more moves than a page may.
    pub fn too_many_moves(&self) -> bool {
        self.moves > self.max_moves
    }

    /// The numbers of the first and last game kept, if any.
    pub fn kept(&self) -> Option<(u32, u32)> {
        Some((self.games.first()?.game, self.games.last()?.game))
    }
}

impl Observer for Collector {
    fn observe(&mut self, _v: &Verifier, record: &Record, checked: &Checked) -> io::Result<()> {
        match (record, checked) {
            (Record::GameStart(g), Checked::Started(start)) => {
                self.seen += 1;
                self.keeping = match &self.select {
                    Some(range) => range.contains(&g.game),
                    None => true,
                };
                if self.keeping {
                    self.games.push(GameData {
                        game: g.game,
                        first: g.first,
                        start: start.to_string(),
                        pits: Vec::new(),
                        ms: Vec::new(),
                        mates: Vec::new(),
                        faults: Vec::new(),
                        end: None,
                        last: String::new(),
                    });
                    self.last.push(*start);
                }
            }
            (Record::Move(m), Checked::Moved(after, _)) if self.keeping => {
                self.moves += 1;
                // Past the limit the page is refused: count, but keep nothing more.
                if self.too_many_moves() {
                    return Ok(());
                }
                if let (Some(game), Some(last)) = (self.games.last_mut(), self.last.last_mut()) {
                    // A pit is below 2W <= 32: it was checked by the engine.
                    game.pits.push(m.pit as u8);
                    game.ms.push(hundredths(m.ms));
                    if let Some(mate) = m.mate {
                        // Checked by the verifier against the team's size.
                        game.mates.push(u8::try_from(mate).unwrap_or(u8::MAX));
                    }
                    *last = *after;
                }
            }
            (Record::Fault(f), _) if self.keeping => {
                if let Some(game) = self.games.last_mut() {
                    game.faults.push(f.into());
                }
            }
            (Record::GameEnd(e), _) if self.keeping => {
                if let Some(game) = self.games.last_mut() {
                    game.end = Some(e.into());
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[derive(Serialize)]
struct BotData {
    letter: &'static str,
    name: Option<String>,
    command: String,
    /// Team sets: the team's members by name, in the team's list order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    members: Vec<String>,
}

#[derive(Serialize)]
struct RulesData {
    preset: String,
    width: u32,
    sowing: &'static str,
    /// The preset's starting position, in notation: a game that starts elsewhere
    /// starts from an opening.
    start: String,
}

/// Which games of the log the page holds, when not all.
#[derive(Serialize)]
struct SelectionData {
    first: u32,
    last: u32,
    /// Games in the log.
    of: u32,
}

#[derive(Serialize)]
struct SetData {
    points: BySide<u32>,
    wins: BySide<u32>,
    draws: u32,
    faults: BySide<u32>,
    winner: Option<Side>,
}

#[derive(Serialize)]
struct Data {
    source: String,
    referee: String,
    rules: RulesData,
    time: String,
    /// The set's seed in decimal, a string: a JavaScript number keeps 53 bits, and a
    /// seed has 64 (a page that read it as a number would show other digits).
    seed: String,
    games_planned: u32,
    bots: [BotData; 2],
    /// `complete`, `aborted` or `incomplete`.
    status: &'static str,
    /// The status in words.
    status_text: String,
    set: SetData,
    /// Set when the page holds only some of the log's games.
    selection: Option<SelectionData>,
    games: Vec<GameData>,
}

/// Makes JSON safe inside a `<script>` element: the characters replaced can only occur
/// inside JSON strings, where their `\u` escapes mean the same.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page for a checked (complete, aborted or incomplete) log.
pub fn page(
    v: &Verifier,
    mut collector: Collector,
    verdict: &Verdict,
    source: &str,
) -> Result<String> {
    let Some(h) = v.header() else {
        anyhow::bail!("no header");
    };
    let rules = v.rules();
    let score = v.score();
    let leader = score.leader().and_then(Side::from_index);
    let (status, status_text) = match verdict {
        Verdict::Complete => (
            "complete",
            match leader {
                Some(w) => format!("{} wins the set", text::label(h, w)),
                None => "the set is drawn".to_string(),
            },
        ),
        Verdict::Aborted(reason) => ("aborted", format!("the set was aborted: {reason}")),
        Verdict::Incomplete { .. } | Verdict::Corrupt(_) => (
            "incomplete",
            "the log is incomplete: the set was cut short".to_string(),
        ),
    };
    let data = Data {
        source: source.to_string(),
        referee: h.referee.clone(),
        rules: RulesData {
            preset: rules.preset().name().to_string(),
            width: rules.width() as u32,
            sowing: match rules.preset().sowing() {
                Sowing::Clockwise => "clockwise",
                Sowing::Anticlockwise => "anticlockwise",
            },
            start: AnyPosition::start(rules).to_string(),
        },
        time: match h.time {
            TimeRecord::PerMove { move_ms, .. } => format!("{move_ms} ms per move"),
            TimeRecord::Clock {
                base_ms,
                increment_ms,
                ..
            } => format!("clock {base_ms} ms + {increment_ms} ms per move"),
            TimeRecord::Unknown => "unknown time control".to_string(),
        },
        seed: h.seed.to_string(),
        games_planned: h.games,
        bots: Side::BOTH.map(|b| BotData {
            letter: b.letter(),
            name: h.bots[b].name.clone(),
            command: h.bots[b].command.clone(),
            members: h.teams.as_ref().map_or_else(Vec::new, |t| {
                t[b].members.iter().map(|m| m.name.clone()).collect()
            }),
        }),
        status,
        status_text,
        set: SetData {
            points: score.points.into(),
            wins: score.wins.into(),
            draws: score.draws,
            faults: v.faults(),
            winner: leader,
        },
        selection: match (&collector.select, collector.kept()) {
            (Some(_), Some((first, last))) => Some(SelectionData {
                first,
                last,
                of: collector.seen,
            }),
            _ => None,
        },
        games: {
            for (game, last) in collector.games.iter_mut().zip(&collector.last) {
                game.last = last.to_string();
            }
            collector.games
        },
    };
    let json = script_safe(&serde_json::to_string(&data)?);
    Ok(fill(&json))
}

/// The template with the style, the scripts and the data in their slots. The data goes
/// in last, so nothing in it is ever taken for a slot.
fn fill(json: &str) -> String {
    let script = format!("{RULES_JS}\n{BOARD_JS}\n{JS}");
    let html = TEMPLATE
        .replacen(CSS_SLOT, CSS, 1)
        .replacen(JS_SLOT, &script, 1);
    match html.split_once(DATA_SLOT) {
        Some((before, after)) => {
            let mut page = String::with_capacity(html.len() + json.len());
            page.push_str(before);
            page.push_str(json);
            page.push_str(after);
            page
        }
        None => html,
    }
}

/// The first sign in a page's source (HTML, CSS or JavaScript) that it would load
/// something from elsewhere or build markup from strings: an address, an import, a
/// `url(`, `innerHTML`, `eval(`. The pages of `hus` work offline and show what bots
/// send as text; their tests check every source with this.
pub fn loads_from_elsewhere(source: &str) -> Option<&'static str> {
    // The SVG namespace is a name, not an address that is loaded.
    let source = source.replace("http://www.w3.org/2000/svg", "");
    [
        "http:",
        "https:",
        "//cdn",
        "@import",
        "url(",
        "innerHTML",
        "eval(",
    ]
    .into_iter()
    .find(|word| source.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewer_sources_fit_the_template() {
        assert_eq!(TEMPLATE.matches(CSS_SLOT).count(), 1);
        assert_eq!(TEMPLATE.matches(JS_SLOT).count(), 1);
        assert_eq!(TEMPLATE.matches(DATA_SLOT).count(), 1);
        for source in [CSS, RULES_JS, BOARD_JS, JS] {
            assert!(!source.contains(DATA_SLOT));
            assert!(!source.to_ascii_lowercase().contains("</script"));
            assert!(!source.to_ascii_lowercase().contains("</style"));
        }
        // No network: nothing is loaded from anywhere.
        for source in [TEMPLATE, CSS, RULES_JS, BOARD_JS, JS] {
            assert_eq!(loads_from_elsewhere(source), None);
            // A replay is a file: it fetches nothing at all.
            assert!(!source.contains("fetch("), "the viewer must not fetch");
        }
    }

    #[test]
    fn data_cannot_close_its_script_element() {
        let name = "</script><script>alert(1)</script> & \u{2028}\u{2029}";
        let json = serde_json::to_string(&name).expect("json");
        let safe = script_safe(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        assert!(!safe.contains('\u{2028}') && !safe.contains('\u{2029}'));
        let back: String = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, name);
        let page = fill(&safe);
        assert_eq!(
            page.matches("</script>").count(),
            2,
            "the data and the viewer script"
        );
    }
}
