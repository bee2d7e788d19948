//! The three rule presets and what sets them apart.

use std::fmt;
use std::str::FromStr;

/// Smallest row width any preset accepts.
pub const MIN_WIDTH: usize = 8;
/// Largest row width any preset accepts. Boards wider than [`MAX_NARROW_WIDTH`] are
/// [`WidePosition`](crate::WidePosition)s.
pub const MAX_WIDTH: usize = 32;
/// Largest row width a [`Position`](crate::Position) holds (the 64-byte board of the
/// usual widths); [`AnyPosition`](crate::AnyPosition) picks it up to this width.
pub const MAX_NARROW_WIDTH: usize = 16;
/// Default row width.
pub const DEFAULT_WIDTH: usize = 8;
/// A move stops once this many seeds have been sown in it (RULINGS.md, "A move", 5).
pub const MAX_SOWN_PER_MOVE: u32 = 3000;
/// A game ends after this many plies in a row without a capture.
pub const NO_CAPTURE_LIMIT: u32 = 200;
/// A pit must hold at least this many seeds to be played.
pub const MIN_SEEDS_TO_MOVE: u8 = 2;

/// One of the three rule sets of RULINGS.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Preset {
    /// The default: clockwise, front-row run capture sown from the landing pit, win 1 / double 2.
    #[default]
    Hus,
    /// Clockwise, landing pit plus both pits across, seed-count scoring.
    Rulebook,
    /// Anticlockwise, front pit across plus the back pit behind it, win 1.
    MancalaWorld,
}

impl Preset {
    /// Every preset, in documentation order.
    pub const ALL: [Preset; 3] = [Preset::Hus, Preset::Rulebook, Preset::MancalaWorld];

    /// The name used on the command line, in the protocol, logs and notation.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Hus => "hus",
            Preset::Rulebook => "rulebook",
            Preset::MancalaWorld => "mancala-world",
        }
    }

    /// Direction seeds travel, as seen from the owner's seat.
    pub fn sowing(self) -> Sowing {
        match self {
            Preset::Hus | Preset::Rulebook => Sowing::Clockwise,
            Preset::MancalaWorld => Sowing::Anticlockwise,
        }
    }

    /// Which seeds a capture takes.
    pub fn capture(self) -> CaptureRule {
        match self {
            Preset::Hus => CaptureRule::FrontRun,
            Preset::Rulebook => CaptureRule::LandingAndAcross,
            Preset::MancalaWorld => CaptureRule::AcrossAndBehind,
        }
    }

    /// Where the sowing of captured seeds starts.
    pub fn captured_sown_from(self) -> CapturedSownFrom {
        match self {
            Preset::Hus => CapturedSownFrom::Landing,
            Preset::Rulebook | Preset::MancalaWorld => CapturedSownFrom::Next,
        }
    }

    /// How a game is scored.
    pub fn scoring(self) -> Scoring {
        match self {
            Preset::Hus => Scoring::Wins { double_win: true },
            Preset::Rulebook => Scoring::Seeds,
            Preset::MancalaWorld => Scoring::Wins { double_win: false },
        }
    }

    #[inline]
    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    #[inline]
    pub(crate) fn from_code(code: u8) -> Preset {
        match code {
            1 => Preset::Rulebook,
            2 => Preset::MancalaWorld,
            _ => Preset::Hus,
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = RulesError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| RulesError::UnknownPreset(s.to_string()))
    }
}

/// Direction of sowing around a player's two rows, seen from above with the owner seated below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Sowing {
    /// Front row left to right, back row right to left.
    Clockwise,
    /// Front row right to left, back row left to right.
    Anticlockwise,
}

/// The capture rule of a preset (RULINGS.md, "A move", 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum CaptureRule {
    /// `hus`: the opponent's front pit across and a run along their front row.
    FrontRun,
    /// `rulebook`: the landing pit and both opponent pits across.
    LandingAndAcross,
    /// `mancala-world`: the opponent's front pit across and the back pit behind it.
    AcrossAndBehind,
}

/// Where the sowing of captured seeds begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum CapturedSownFrom {
    /// In the landing pit itself.
    Landing,
    /// In the pit after the landing pit.
    Next,
}

/// How games are scored (RULINGS.md table, "scoring").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Scoring {
    /// A win scores 1; with `double_win`, a win over a player left with no seeds scores 2.
    /// Draws score 0.
    Wins {
        /// Whether a double win scores 2.
        double_win: bool,
    },
    /// Each player scores the seeds on their side; holding every seed scores double.
    Seeds,
}

/// A preset at a row width: everything the engine needs to know about the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Rules {
    preset: Preset,
    width: u8,
}

impl Rules {
    /// Rules of `preset` at row width `width` (8 to 32).
    #[inline]
    pub fn new(preset: Preset, width: usize) -> Result<Rules, RulesError> {
        if !(MIN_WIDTH..=MAX_WIDTH).contains(&width) {
            return Err(RulesError::Width(width));
        }
        Ok(Rules {
            preset,
            width: width as u8,
        })
    }

    /// The preset.
    #[inline]
    pub fn preset(self) -> Preset {
        self.preset
    }

    /// Pits in a row (W).
    #[inline]
    pub fn width(self) -> usize {
        self.width as usize
    }

    /// Pits a player owns (2W).
    #[inline]
    pub fn pits(self) -> usize {
        2 * self.width as usize
    }

    /// Seeds each player starts with: 2 in every back pit and in W/2 front pits.
    pub fn seeds_per_player(self) -> u32 {
        let w = self.width as u32;
        2 * w + 2 * (w / 2)
    }

    /// The front pits that start with two seeds, in the owner's numbering.
    pub fn starting_front_pits(self) -> std::ops::Range<usize> {
        let w = self.width();
        match self.preset.sowing() {
            Sowing::Clockwise => w - w / 2..w,
            Sowing::Anticlockwise => 0..w / 2,
        }
    }
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            preset: Preset::Hus,
            width: DEFAULT_WIDTH as u8,
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at width {}", self.preset, self.width)
    }
}

/// Why a preset or width was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RulesError {
    /// The preset name is not one of `hus`, `rulebook`, `mancala-world`.
    UnknownPreset(String),
    /// The width is outside 8..=32.
    Width(usize),
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RulesError::UnknownPreset(name) => write!(
                f,
                "unknown rules preset {name:?} (expected hus, rulebook or mancala-world)"
            ),
            RulesError::Width(w) => {
                write!(
                    f,
                    "row width {w} is out of range (expected {MIN_WIDTH} to {MAX_WIDTH})"
                )
            }
        }
    }
}

impl std::error::Error for RulesError {}
