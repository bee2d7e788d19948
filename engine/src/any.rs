//! [`AnyPosition`]: a board of any width the rules allow, as the referee, the replay
//! tool and bots receive them. It is a [`Position`] whenever the board fits one (width
//! up to [`MAX_NARROW_WIDTH`], at most [`MAX_TOTAL_SEEDS`] seeds) and a [`WidePosition`]
//! otherwise, so the usual widths keep the 64-byte board. Code that plays many moves
//! (perft, searches) matches once on the variant and runs generic code on the inner
//! board; code that plays a few uses `AnyPosition` through [`Board`] directly.

use std::fmt;
use std::str::FromStr;

use crate::board::Board;
use crate::notation::{parse_setup, NotationError};
use crate::position::{Moves, Player, Position, Setup, SetupError, MAX_TOTAL_SEEDS};
use crate::rules::{Rules, MAX_NARROW_WIDTH};
use crate::sow::{Recorder, Summary};
use crate::wide::WidePosition;

/// A [`Position`] (widths 8 to 16, at most 127 seeds) or a [`WidePosition`] (anything
/// else up to width 32 and 255 seeds). Two boards are equal only if they are the same
/// variant; a game never changes variant, since moves keep the width and the seeds.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnyPosition {
    /// The 64-byte board.
    Narrow(Position),
    /// The wide board.
    Wide(WidePosition),
}

/// Calls `$body` with `$p` bound to the inner board.
macro_rules! each {
    ($self:expr, $p:ident => $body:expr) => {
        match $self {
            AnyPosition::Narrow($p) => $body,
            AnyPosition::Wide($p) => $body,
        }
    };
}

impl AnyPosition {
    /// The starting position of `rules`, player 0 to move.
    #[inline]
    pub fn start(rules: Rules) -> AnyPosition {
        if rules.width() <= MAX_NARROW_WIDTH {
            AnyPosition::Narrow(Position::start(rules))
        } else {
            AnyPosition::Wide(WidePosition::start(rules))
        }
    }

    /// The 64-byte board, if this is one.
    #[inline]
    pub fn narrow(&self) -> Option<&Position> {
        match self {
            AnyPosition::Narrow(p) => Some(p),
            AnyPosition::Wide(_) => None,
        }
    }
}

impl Board for AnyPosition {
    #[inline]
    fn from_setup(setup: &Setup) -> Result<Self, SetupError> {
        let total = setup.checked_total()?;
        if setup.rules.width() <= MAX_NARROW_WIDTH && total <= MAX_TOTAL_SEEDS {
            Ok(AnyPosition::Narrow(setup.validate()?))
        } else {
            Ok(AnyPosition::Wide(WidePosition::from_setup(setup)?))
        }
    }
    #[inline]
    fn rules(&self) -> Rules {
        each!(self, p => Board::rules(p))
    }
    #[inline]
    fn width(&self) -> usize {
        each!(self, p => Board::width(p))
    }
    #[inline]
    fn to_move(&self) -> Player {
        each!(self, p => Board::to_move(p))
    }
    #[inline]
    fn seeds(&self, player: Player, pit: usize) -> u8 {
        each!(self, p => Board::seeds(p, player, pit))
    }
    #[inline]
    fn pits(&self, player: Player) -> Vec<u8> {
        each!(self, p => Board::pits(p, player))
    }
    #[inline]
    fn seeds_of(&self, player: Player) -> u32 {
        each!(self, p => Board::seeds_of(p, player))
    }
    #[inline]
    fn legal_moves(&self) -> Moves {
        each!(self, p => Board::legal_moves(p))
    }
    #[inline]
    fn play_unchecked<R: Recorder>(&mut self, pit: usize, recorder: &mut R) -> Summary {
        each!(self, p => Board::play_unchecked(p, pit, recorder))
    }
    #[inline]
    fn key(&self) -> u64 {
        each!(self, p => Board::key(p))
    }
}

impl From<Position> for AnyPosition {
    fn from(p: Position) -> Self {
        AnyPosition::Narrow(p)
    }
}

impl From<WidePosition> for AnyPosition {
    fn from(p: WidePosition) -> Self {
        AnyPosition::Wide(p)
    }
}

impl TryFrom<&Setup> for AnyPosition {
    type Error = SetupError;
    fn try_from(setup: &Setup) -> Result<AnyPosition, SetupError> {
        AnyPosition::from_setup(setup)
    }
}

impl FromStr for AnyPosition {
    type Err = NotationError;
    fn from_str(s: &str) -> Result<AnyPosition, NotationError> {
        AnyPosition::from_setup(&parse_setup(s)?).map_err(NotationError::Setup)
    }
}

impl fmt::Display for AnyPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        each!(self, p => fmt::Display::fmt(p, f))
    }
}

impl fmt::Debug for AnyPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AnyPosition({self})")
    }
}
