//! The Hus rules engine: the three presets of `RULINGS.md` (`hus`, `rulebook`,
//! `mancala-world`) at any row width from 8 to 32. No I/O, no dependencies.
//!
//! - [`Rules`] is a [`Preset`] at a width; it knows the setup and the scoring.
//! - [`Board`] is what every board type offers; there are three. [`Position`] is the
//!   validated, 64-byte `Copy` board of widths 8 to 16 (at most 127 seeds), the fast
//!   one; [`WidePosition`] holds widths up to 32 (at most 255 seeds); [`AnyPosition`]
//!   is whichever of the two a setup needs, for code that takes any board (the
//!   referee, the replay tool). The rest of this list says `Position`; it holds for
//!   every `Board`. Build one
//!   with [`Position::start`], from the one-line notation (`str::parse`), or from an
//!   unvalidated [`Setup`]. [`Position::play`] plays a pit and returns a [`MoveReport`]
//!   (every relay and capture); [`Position::play_with`] takes any [`Recorder`], and
//!   `&mut ()` records nothing and allocates nothing. An illegal pit returns
//!   [`IllegalMove`] and leaves the position as it was.
//! - [`Game`] (generic over the board) adds the history and applies the end rules after
//!   every move ([`judge`]),
//!   ending as a [`GameEnd`]; [`Rules::points`] scores it and [`SetScore`] adds up a set.
//! - [`Playouts`] plays many games on from one [`Game`] to their end, with moves chosen
//!   by the caller (random playouts for Monte Carlo searches), each ending as
//!   [`Game::play`] would end it, without copying the game each time.
//! - [`perft`] counts move sequences, to check move generators against the tables in
//!   `RULES.md`.
//!
//! Pits are numbered in each owner's sowing order: `0..W` the front row, `W..2W` the
//! back row; across from my front pit `i` are the opponent's front pit `W-1-i` and back
//! pit `W+i`.
//!
//! ```
//! use engine::{EndReason, Game, Player, Position, Preset, Rules};
//!
//! let rules = Rules::new(Preset::Hus, 8).unwrap();
//! let start = Position::start(rules);
//! assert_eq!(
//!     start.to_string(),
//!     "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0"
//! );
//! assert_eq!(start.legal_moves().collect::<Vec<_>>(), (4..16).collect::<Vec<_>>());
//!
//! let mut game = Game::new(start);
//! // Pit 7 sows into 8 and 9; relays from 9, 12 and 15; the last seed falls in empty pit 2.
//! let report = game.play(7).unwrap();
//! assert_eq!(report.summary.sown, 2 + 3 + 3 + 3);
//! assert_eq!(report.relays().map(|r| r.pit).collect::<Vec<_>>(), [9, 12, 15]);
//! assert_eq!(game.position().pits(Player::Zero), [1, 1, 1, 0, 2, 2, 2, 0, 3, 0, 3, 3, 0, 3, 3, 0]);
//! assert_eq!(game.position().to_move(), Player::One);
//! assert!(game.end().is_none());
//!
//! let pos: Position = "hus 8 0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,0 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0"
//!     .parse()
//!     .unwrap();
//! let game = Game::new(pos);
//! assert_eq!(game.end().map(|e| e.reason), Some(EndReason::NoMoves));
//! assert_eq!(game.points(), Some([0, 1]));
//! ```
#![deny(missing_docs)]

mod any;
mod board;
mod game;
mod notation;
mod perft;
mod playout;
mod position;
mod rules;
mod sow;
mod wide;

pub use any::AnyPosition;
pub use board::Board;
pub use wide::{WidePosition, MAX_WIDE_TOTAL_SEEDS};

pub use game::{judge, EndReason, Game, GameEnd, PlayError, SetScore};
pub use notation::NotationError;
pub use perft::perft;
pub use playout::{PlayoutEnd, Playouts};
pub use position::{Moves, Player, Position, Setup, SetupError, MAX_TOTAL_SEEDS};
pub use rules::{
    CaptureRule, CapturedSownFrom, Preset, Rules, RulesError, Scoring, Sowing, DEFAULT_WIDTH,
    MAX_NARROW_WIDTH, MAX_SOWN_PER_MOVE, MAX_WIDTH, MIN_SEEDS_TO_MOVE, MIN_WIDTH, NO_CAPTURE_LIMIT,
};
pub use sow::{Capture, Event, IllegalMove, MoveReport, Recorder, Relay, Summary, Taken};
