//! The `rules` and `time` objects of the `hello` message.

use serde::{Deserialize, Serialize};

/// The rules of the set, as announced in `hello`.
///
/// This is a description for the bot, not a configuration: the referee fills it from
/// its engine settings. Field order is the wire order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesInfo {
    /// Which rule set: `hus`, `rulebook` or `mancala-world`.
    pub preset: Preset,
    /// Pits per row, W (8..=32). Each side has 2W pits.
    pub width: u32,
    /// Direction of sowing, seen from the owner's seat. The numbering scheme is the same
    /// either way, but the pits that start with seeds have other numbers.
    pub sowing: Sowing,
    /// What a capture takes.
    pub capture: Capture,
    /// Where the sowing of captured seeds starts.
    pub captured_sown_from: CapturedSownFrom,
    /// How a game is scored.
    pub scoring: Scoring,
    /// Whether a game can score double: a win against a side with no seeds at all
    /// (`wins` scoring), or a side holding every seed (`seeds` scoring).
    pub double_win: bool,
    /// A pit must hold at least this many seeds to be played (2).
    pub min_seeds_to_move: u32,
    /// A move stops once it has sown this many seeds (3000).
    pub max_sown_per_move: u32,
    /// A game ends after this many plies in a row without a capture (200).
    pub no_capture_limit: u32,
    /// Whether a repeated position ends the game.
    pub repetition: bool,
    /// Seeds each side starts with (24 at W = 8).
    pub seeds_per_player: u32,
}

/// The rule set (`rules.preset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// `hus`: the default, front-row run captures, scored by wins.
    Hus,
    /// `rulebook`: landing pit and both pits across are captured, scored by seeds.
    Rulebook,
    /// `mancala-world`: anticlockwise, the front pit across and the back pit behind it.
    MancalaWorld,
    /// A value newer than this crate. A referee speaking this version never sends it;
    /// it exists so that a bot built on this crate does not fail on a new preset.
    #[serde(other)]
    Unknown,
}

/// The direction of sowing (`rules.sowing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sowing {
    /// `clockwise`.
    Clockwise,
    /// `anticlockwise`.
    Anticlockwise,
}

/// What a capture takes (`rules.capture`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Capture {
    /// `front-run` (preset `hus`): the opponent's front pit across and a run along
    /// their front row.
    FrontRun,
    /// `landing-and-across` (preset `rulebook`): the landing pit and both pits across.
    LandingAndAcross,
    /// `across-and-behind` (preset `mancala-world`): the front pit across and, when
    /// occupied, the back pit behind it.
    AcrossAndBehind,
    /// A value newer than this crate (see [`Preset::Unknown`]).
    #[serde(other)]
    Unknown,
}

/// Where the sowing of captured seeds starts (`rules.captured_sown_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CapturedSownFrom {
    /// `landing`: the first captured seed goes into the landing pit itself.
    Landing,
    /// `next`: the first captured seed goes into the pit after the landing pit.
    Next,
    /// A value newer than this crate (see [`Preset::Unknown`]).
    #[serde(other)]
    Unknown,
}

/// How a game is scored (`rules.scoring`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scoring {
    /// `wins`: a win scores 1 (2 for a double win), a draw 0.
    Wins,
    /// `seeds`: each side scores the seeds on its side.
    Seeds,
    /// A value newer than this crate (see [`Preset::Unknown`]).
    #[serde(other)]
    Unknown,
}

/// The time control (`hello.time`), tagged by its `mode` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum TimeControl {
    /// `per-move`: every move has the same allowance.
    PerMove {
        /// Milliseconds for each move.
        move_ms: u64,
        /// Milliseconds to answer `hello` with `ready` (the start-up allowance).
        ready_ms: u64,
    },
    /// `clock`: a chess clock per game.
    Clock {
        /// Milliseconds on each side's clock at the start of a game.
        base_ms: u64,
        /// Milliseconds added to a side's clock after each of its moves.
        increment_ms: u64,
        /// Milliseconds to answer `hello` with `ready` (the start-up allowance).
        ready_ms: u64,
    },
    /// A mode newer than this crate; `turn.time_ms` still tells the time for each move.
    #[serde(other)]
    Unknown,
}

impl TimeControl {
    /// The start-up allowance, when the mode is known.
    pub fn ready_ms(&self) -> Option<u64> {
        match *self {
            TimeControl::PerMove { ready_ms, .. } | TimeControl::Clock { ready_ms, .. } => {
                Some(ready_ms)
            }
            TimeControl::Unknown => None,
        }
    }
}
