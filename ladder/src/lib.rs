//! `ladder`: the hus ladder, opponents of known strength, and `hus rate`.
//!
//! The ladder is the built-in random mover (`hus random-bot`) and the ten levels of the
//! Rust alpha-beta bot (`alphabeta-bot --level 1..10`), rated by a league of
//! `hus league` (`leagues/ladder.toml`) whose standings are shipped as
//! `leagues/ladder.json`, anchored so that the random mover is 0. [`Ladder`] reads
//! such a list. [`run_rate`] (`hus rate BOT`) plays a bot against the ladder through
//! `referee::play_set`, in sets of game pairs from the ladder's book of openings, each
//! set against the rung whose games tell most about the bot's rating so far, and fits
//! its rating with the `ratings` crate, the ladder's ratings and first-move advantage
//! held fixed (`ratings::Anchor::Fixed`).
//!
//! ```
//! let ladder = ladder::Ladder::shipped().unwrap();
//! assert_eq!(ladder.rungs[0].bot, ladder::RungBot::Random);
//! assert_eq!(ladder.rungs[0].rating, 0.0);
//! ```

#![deny(missing_docs)]

mod args;
mod list;
mod rate;

pub use args::RateArgs;
pub use list::{Ladder, LadderError, Rung, RungBot, ANCHOR, BOOK, BOOK_NAME, RULES, SHIPPED};
pub use rate::{run as run_rate, LADDER_MOVE_TIME};
