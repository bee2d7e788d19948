//! Playouts: many games played on from one [`Game`] to their end, each move chosen by
//! the caller (at random, for Monte Carlo searches), as fast as the engine goes.

use crate::board::Board;
use crate::game::{Game, GameEnd, History};
use crate::position::Position;

/// How one playout ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayoutEnd<B: Board = Position> {
    /// The end rule that applied, and the winner.
    pub end: GameEnd,
    /// The last position (what [`Rules::points`](crate::Rules::points) scores).
    pub position: B,
    /// Plies the playout played (0 when the game was already over).
    pub plies: u32,
}

/// Plays games on from one [`Game`] to their end, one after the other: each ends exactly
/// as [`Game::play`] would end it after the same moves, with the game's history counted
/// for repetition and the 200-ply rule. The game is copied once, when the `Playouts` is
/// made; a playout then reuses the same history vectors, cut back to the game's own
/// history before each one, so that playouts allocate nothing once the vectors have
/// grown to the longest game, and record nothing the end rules do not need.
///
/// ```
/// use engine::{Game, Playouts, Position, Preset, Rules};
///
/// let game = Game::new(Position::start(Rules::new(Preset::Hus, 8).unwrap()));
/// let mut playouts = Playouts::new(&game);
/// // Always the first legal pit: the same game as playing it with `Game::play`.
/// let first = playouts.play(|_| 0);
/// let mut slow = game.clone();
/// while slow.end().is_none() {
///     let pit = slow.position().legal_moves().next().unwrap();
///     slow.play(pit).unwrap();
/// }
/// assert_eq!(Some(&first.end), slow.end());
/// assert_eq!(&first.position, slow.position());
/// assert_eq!(first.plies, slow.plies());
/// ```
#[derive(Clone, Debug)]
pub struct Playouts<B: Board = Position> {
    position: B,
    end: Option<GameEnd>,
    history: History<B>,
    /// Positions in the game's own history, and its plies without a capture: where
    /// every playout starts from.
    base: (usize, u32),
}

impl<B: Board> Playouts<B> {
    /// Playouts from where `game` stands.
    pub fn new(game: &Game<B>) -> Playouts<B> {
        let history = game.history_of().clone();
        Playouts {
            position: *game.position(),
            end: game.end().copied(),
            base: (history.len(), history.quiet_plies()),
            history,
        }
    }

    /// Plays one game on from the start of the playouts with the moves `choose` picks,
    /// as [`Game::play_out`] does: `choose` is given the number of legal moves and
    /// returns the index of the one to play among them in increasing pit order (an
    /// index past the last is taken modulo the number). A game that is already over
    /// ends at once, as it ended.
    #[inline]
    pub fn play(&mut self, choose: impl FnMut(usize) -> usize) -> PlayoutEnd<B> {
        let mut position = self.position;
        if let Some(end) = self.end {
            return PlayoutEnd {
                end,
                position,
                plies: 0,
            };
        }
        self.history.truncate(self.base.0, self.base.1);
        let end = self.history.play_out(&mut position, choose);
        PlayoutEnd {
            end,
            position,
            plies: (self.history.len() - self.base.0) as u32,
        }
    }
}
