//! Statistics for leagues and matches between bots: ratings fitted to all games at once,
//! the sequential probability ratio test (SPRT), and Elo estimates. No I/O, nothing but
//! std (serde derives behind the `serde` feature). The model and every formula are in
//! `docs/ratings.md`.
//!
//! - [`GameTable`] counts games per ordered pair (first mover, second mover) as the first
//!   mover's [`Wdl`]; add them one by one ([`GameTable::add_game`]) or aggregated
//!   ([`GameTable::add_games`]). 100,000 games among 100 bots are at most 9,900 cells.
//! - [`Ratings::fit`] fits Bradley–Terry ratings on the Elo scale with a first-mover
//!   advantage, by maximum likelihood with a weak prior of virtual draws
//!   ([`FitOptions::prior_draws`]) that keeps every rating finite, anchored by
//!   [`Anchor`] (pool average 1500 by default, or a bot, or a ladder of known ratings).
//!   [`Ratings`] gives each rating as an [`Estimate`] with its interval, the advantage,
//!   the full covariance, the likelihood of superiority of each pair
//!   ([`Ratings::compare`], [`Ratings::los_matrix`]), and for pairing games the
//!   information one more game would add ([`Ratings::game_information`],
//!   [`Ratings::most_informative_game`]); for a pair, how much more surely one more set
//!   would order it ([`order_gain`], with [`game_fisher_information`]).
//! - [`Sprt`] tests H0 "A is elo0 stronger than B" against H1 "elo1 stronger" with the
//!   generalized SPRT of fishtest and fastchess, on single games ([`Sprt::trinomial`]
//!   of a [`Wdl`]) or on game pairs with swapped seats ([`Sprt::pentanomial`] of a
//!   [`Pentanomial`]), giving an [`SprtStatus`] with its [`Decision`].
//! - [`Wdl::elo`] and [`Pentanomial::elo`] estimate an Elo difference with its interval
//!   and likelihood of superiority ([`EloEstimate`]).
//!
//! Every input that can be wrong (a bot index, alpha, elo0 ≥ elo1, ...) is checked and
//! reported as an [`Error`]; nothing here panics on bad input.
//!
//! ```
//! use ratings::{Decision, FitOptions, GameTable, Outcome, Pentanomial, Ratings, Sprt, Wdl};
//!
//! # fn main() -> Result<(), ratings::Error> {
//! // Bot 0 won all 20 of its games against bot 1, 10 with each seat.
//! let mut games = GameTable::new(3);
//! games.add_games(0, 1, Wdl::new(10, 0, 0))?;
//! games.add_games(1, 0, Wdl::new(0, 0, 10))?;
//! // Bot 2 drew once with each.
//! games.add_game(2, 0, Outcome::Draw)?;
//! games.add_game(1, 2, Outcome::Draw)?;
//!
//! let ratings = Ratings::fit(&games, &FitOptions::default())?;
//! let [best, worst, middle] = [0, 1, 2].map(|bot| ratings.rating(bot).unwrap());
//! // The prior's virtual draws keep a perfect score finite.
//! assert!(best.value > middle.value && middle.value > worst.value);
//! assert!(best.value.is_finite() && best.low < best.value && best.value < best.high);
//! assert!((ratings.ratings().iter().sum::<f64>() / 3.0 - 1500.0).abs() < 1e-9);
//! assert!(ratings.los(0, 1)? > 0.99);
//!
//! // Version A against version B: game pairs with swapped seats.
//! let sprt = Sprt::new(0.0, 10.0, 0.05, 0.05)?;
//! let mut pairs = Pentanomial::default();
//! pairs.add_pair(Outcome::Win, Outcome::Draw)?;
//! pairs.add_pair(Outcome::Loss, Outcome::Win)?;
//! let status = sprt.pentanomial(&pairs);
//! assert_eq!(status.decision, Decision::Continue);
//! assert!((status.upper_bound - 19f64.ln()).abs() < 1e-12);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod error;
mod fit;
mod linalg;
mod normal;
mod order;
mod sprt;
mod table;
mod tally;

pub use error::Error;
pub use fit::{
    expected_score, Advantage, Anchor, Comparison, Estimate, FitOptions, GameInformation, Ratings,
    DEFAULT_AVERAGE, DEFAULT_PRIOR_DRAWS,
};
pub use order::{game_fisher_information, ln_order_gain, order_gain};
pub use sprt::{Decision, Sprt, SprtStatus};
pub use table::{GameTable, Outcome, Wdl};
pub use tally::{elo_difference, EloEstimate, Pentanomial};
