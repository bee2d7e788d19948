//! [`Board`]: what every board type offers, so that games, the end rules, perft and
//! searches are written once for [`Position`](crate::Position) (widths 8 to 16, at most
//! 127 seeds), [`WidePosition`](crate::WidePosition) (widths 8 to 32, at most 255 seeds)
//! and [`AnyPosition`](crate::AnyPosition) (whichever of the two a setup needs).

use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

use crate::notation::NotationError;
use crate::position::{Moves, Player, Setup, SetupError};
use crate::rules::{Rules, MIN_SEEDS_TO_MOVE};
use crate::sow::{IllegalMove, MoveReport, Recorder, Summary};

/// A validated board with the side to move. Equality and hashing cover the rules, every
/// pit and the side to move: exactly what repetition needs. `Display` and `FromStr` are
/// the one-line notation.
pub trait Board:
    Copy + Eq + Hash + fmt::Debug + fmt::Display + FromStr<Err = NotationError> + Send + Sync
{
    /// Checks `setup` and builds the board, or says why this board type cannot hold it.
    fn from_setup(setup: &Setup) -> Result<Self, SetupError>;

    /// The rules this board is played under.
    fn rules(&self) -> Rules;

    /// Row width W.
    fn width(&self) -> usize {
        self.rules().width()
    }

    /// Who moves next.
    fn to_move(&self) -> Player;

    /// Seeds in `player`'s pit `pit` (own numbering). Panics if `pit >= 2W`.
    fn seeds(&self, player: Player, pit: usize) -> u8;

    /// `player`'s 2W pits in their own numbering.
    fn pits(&self, player: Player) -> Vec<u8>;

    /// Seeds on `player`'s side.
    fn seeds_of(&self, player: Player) -> u32;

    /// Seeds on the board.
    fn total_seeds(&self) -> u32 {
        self.seeds_of(Player::Zero) + self.seeds_of(Player::One)
    }

    /// The pits the side to move may play: those holding 2 or more seeds.
    fn legal_moves(&self) -> Moves;

    /// Whether the side to move may play `pit`.
    fn is_legal(&self, pit: usize) -> bool {
        pit < 2 * self.width() && self.legal_moves().contains(pit)
    }

    /// Plays `pit` for the side to move and reports every relay and capture.
    /// On an illegal move the board is unchanged.
    #[inline]
    fn play(&mut self, pit: usize) -> Result<MoveReport, IllegalMove> {
        let mut report = MoveReport::default();
        report.summary = self.play_with(pit, &mut report)?;
        Ok(report)
    }

    /// Plays `pit`, telling `recorder` what happens, and returns the move's counters.
    /// On an illegal move the board is unchanged and `recorder` hears nothing.
    #[inline]
    fn play_with<R: Recorder>(
        &mut self,
        pit: usize,
        recorder: &mut R,
    ) -> Result<Summary, IllegalMove> {
        let pits = 2 * self.width();
        if pit >= pits {
            return Err(IllegalMove::OutOfRange { pit, pits });
        }
        let seeds = self.seeds(self.to_move(), pit);
        if seeds < MIN_SEEDS_TO_MOVE {
            return Err(IllegalMove::TooFewSeeds { pit, seeds });
        }
        Ok(self.play_unchecked(pit, recorder))
    }

    /// Plays `pit` without checking it, for trusted hot paths that took `pit` from
    /// [`Board::legal_moves`]: an out-of-range pit panics, and a pit with fewer than two
    /// seeds makes a move the rules do not allow (the board stays consistent).
    fn play_unchecked<R: Recorder>(&mut self, pit: usize, recorder: &mut R) -> Summary;

    /// A 64-bit hash of the whole board, used to pick repetition candidates (equality
    /// then decides).
    fn key(&self) -> u64;

    /// The unvalidated form, with the pits as vectors.
    fn to_setup(&self) -> Setup {
        Setup {
            rules: self.rules(),
            pits: [self.pits(Player::Zero), self.pits(Player::One)],
            to_move: self.to_move(),
        }
    }
}
