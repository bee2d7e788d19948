//! `hus replay LOG --html OUT.html`: one self-contained page (no network, inline CSS and
//! JS) that replays the set. The viewer's source is in `viewer.html`, `viewer.css` and
//! `viewer.js` beside this file; the set goes into the page as JSON in a
//! `<script type="application/json">` element, with `<`, `>`, `&`, U+2028 and U+2029
//! escaped so that nothing in a log (a bot named `</script><script>...`) can end that
//! element. The script inserts every text from the log with `textContent`.
//!
//! The boards in the page are the engine's positions, already checked against the log.

use std::io;

use anyhow::Result;
use engine::{Event, Player, Position, Sowing};
use serde::Serialize;

use crate::records::{Fault, GameEnd, Record, TimeRecord};

use super::text;
use super::verify::{Checked, Verifier};
use super::{Observer, Verdict};

const TEMPLATE: &str = include_str!("viewer.html");
const CSS: &str = include_str!("viewer.css");
const JS: &str = include_str!("viewer.js");
const CSS_SLOT: &str = "/*HUS-CSS*/";
const JS_SLOT: &str = "/*HUS-JS*/";
const DATA_SLOT: &str = "/*HUS-DATA*/";

/// Both players' pits, in their own numbering.
type Board = [Vec<u8>; 2];

fn board(pos: &Position) -> Board {
    [pos.pits(Player::Zero), pos.pits(Player::One)]
}

#[derive(Serialize)]
struct MoveData {
    ply: u32,
    bot: usize,
    player: usize,
    pit: u32,
    ms: f64,
    sown: u32,
    truncated: bool,
    events: Vec<Event>,
    /// The move in words.
    text: String,
    /// The position after it.
    board: Board,
    /// The player to move after it.
    next: usize,
}

#[derive(Serialize)]
struct FaultData {
    ply: u32,
    /// Where, in words: `at ply 3`, or before the game for a fault while starting.
    at: String,
    bot: usize,
    kind: String,
    detail: String,
    line: Option<String>,
    ms: Option<f64>,
}

impl From<&Fault> for FaultData {
    fn from(f: &Fault) -> Self {
        FaultData {
            ply: f.ply,
            at: match f.stage.as_str() {
                crate::records::STAGE_GAME => format!("at ply {}", f.ply),
                _ => f.place(),
            },
            bot: f.bot,
            kind: f.kind.clone(),
            detail: f.detail.clone(),
            line: f.line.clone(),
            ms: f.ms,
        }
    }
}

#[derive(Serialize)]
struct EndData {
    reason: String,
    winner: Option<usize>,
    faulted: Vec<usize>,
    double: bool,
    points: [u32; 2],
    plies: u32,
}

impl From<&GameEnd> for EndData {
    fn from(e: &GameEnd) -> Self {
        EndData {
            reason: e.reason.clone(),
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
    /// The bot that is player 0.
    first: usize,
    start: Board,
    to_move: usize,
    moves: Vec<MoveData>,
    faults: Vec<FaultData>,
    end: Option<EndData>,
}

/// Keeps every game as it is checked.
#[derive(Default)]
pub struct Collector {
    games: Vec<GameData>,
}

impl Observer for Collector {
    fn observe(&mut self, _v: &Verifier, record: &Record, checked: &Checked) -> io::Result<()> {
        match (record, checked) {
            (Record::GameStart(g), Checked::Started(start)) => self.games.push(GameData {
                game: g.game,
                first: g.first,
                start: board(start),
                to_move: start.to_move().index(),
                moves: Vec::new(),
                faults: Vec::new(),
                end: None,
            }),
            (Record::Move(m), Checked::Moved(after, _)) => {
                if let Some(game) = self.games.last_mut() {
                    game.moves.push(MoveData {
                        ply: m.ply,
                        bot: m.bot,
                        player: m.player,
                        pit: m.pit,
                        ms: m.ms,
                        sown: m.sown,
                        truncated: m.truncated,
                        events: m.events.clone(),
                        text: text::move_words(m),
                        board: board(after),
                        next: after.to_move().index(),
                    });
                }
            }
            (Record::Fault(f), _) => {
                if let Some(game) = self.games.last_mut() {
                    game.faults.push(f.into());
                }
            }
            (Record::GameEnd(e), _) => {
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
}

#[derive(Serialize)]
struct RulesData {
    preset: String,
    width: u32,
    sowing: &'static str,
}

#[derive(Serialize)]
struct SetData {
    points: [u32; 2],
    wins: [u32; 2],
    draws: u32,
    faults: [u32; 2],
    winner: Option<usize>,
}

#[derive(Serialize)]
struct Data {
    source: String,
    referee: String,
    rules: RulesData,
    time: String,
    seed: u64,
    games_planned: u32,
    bots: [BotData; 2],
    /// `complete`, `aborted` or `incomplete`.
    status: &'static str,
    /// The status in words.
    status_text: String,
    set: SetData,
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
pub fn page(v: &Verifier, collector: Collector, verdict: &Verdict, source: &str) -> Result<String> {
    let Some(h) = v.header() else {
        anyhow::bail!("no header");
    };
    let rules = v.rules();
    let score = v.score();
    let (status, status_text) = match verdict {
        Verdict::Complete => (
            "complete",
            match score.leader() {
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
        seed: h.seed,
        games_planned: h.games,
        bots: [0, 1].map(|b| BotData {
            letter: ["A", "B"][b],
            name: h.bots[b].name.clone(),
            command: h.bots[b].command.clone(),
        }),
        status,
        status_text,
        set: SetData {
            points: score.points,
            wins: score.wins,
            draws: score.draws,
            faults: v.faults(),
            winner: score.leader(),
        },
        games: collector.games,
    };
    let json = script_safe(&serde_json::to_string(&data)?);
    Ok(fill(&json))
}

/// The template with the style, the script and the data in their slots. The data goes
/// in last, so nothing in it is ever taken for a slot.
fn fill(json: &str) -> String {
    let html = TEMPLATE.replacen(CSS_SLOT, CSS, 1).replacen(JS_SLOT, JS, 1);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewer_sources_fit_the_template() {
        assert_eq!(TEMPLATE.matches(CSS_SLOT).count(), 1);
        assert_eq!(TEMPLATE.matches(JS_SLOT).count(), 1);
        assert_eq!(TEMPLATE.matches(DATA_SLOT).count(), 1);
        for source in [CSS, JS] {
            assert!(!source.contains(DATA_SLOT));
            assert!(!source.to_ascii_lowercase().contains("</script"));
            assert!(!source.to_ascii_lowercase().contains("</style"));
        }
        // No network: nothing is loaded from anywhere.
        for source in [TEMPLATE, CSS, JS] {
            // The SVG namespace is a name, not an address that is loaded.
            let source = source.replace("http://www.w3.org/2000/svg", "");
            for word in [
                "http:",
                "https:",
                "//cdn",
                "@import",
                "url(",
                "fetch(",
                "innerHTML",
                "eval(",
            ] {
                assert!(!source.contains(word), "the viewer must not use {word}");
            }
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
