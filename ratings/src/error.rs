//! The one error type of the crate: every way an input can be invalid, and the two ways
//! a fit can fail.

use std::fmt;

/// What is wrong with an input, or why ratings could not be fitted.
///
/// Every public function that takes something from outside (a bot index, a count, an
/// option, a test parameter) checks it and returns one of these instead of panicking.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A bot index is not below the number of bots.
    BotOutOfRange {
        /// The index given.
        bot: usize,
        /// The number of bots.
        bots: usize,
    },
    /// A game or a question names the same bot on both sides.
    SelfPlay {
        /// The bot named twice.
        bot: usize,
    },
    /// Ratings need at least two bots.
    TooFewBots {
        /// The number of bots.
        bots: usize,
    },
    /// Adding games would overflow a count (more than `u64::MAX` games in one cell).
    CountOverflow,
    /// The prior's number of virtual draws is negative, infinite or NaN.
    InvalidPriorDraws(f64),
    /// A confidence level is not strictly between 0 and 1.
    InvalidConfidence(f64),
    /// A rating, an Elo value or an advantage is infinite or NaN.
    NotFinite {
        /// What the value is (for example `"anchor rating"`).
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// The same bot is fixed twice in [`Anchor::Fixed`](crate::Anchor::Fixed).
    DuplicateFixedBot {
        /// The bot listed twice.
        bot: usize,
    },
    /// [`Anchor::Fixed`](crate::Anchor::Fixed) lists no bot.
    EmptyLadder,
    /// With no prior (`prior_draws` = 0) the games do not determine finite ratings: a
    /// bot won or lost all its games, or the bots fall into groups that never met.
    NoFiniteRatings,
    /// Newton's method did not converge (it should always converge with a positive
    /// prior; this reports a numerical failure instead of a wrong answer).
    NotConverged {
        /// Iterations made.
        iterations: usize,
    },
    /// The SPRT's alpha (the false-positive rate) is not strictly between 0 and 1.
    InvalidAlpha(f64),
    /// The SPRT's beta (the false-negative rate) is not strictly between 0 and 1.
    InvalidBeta(f64),
    /// alpha + beta is 1 or more: the two bounds would not enclose zero.
    AlphaBetaSum {
        /// alpha.
        alpha: f64,
        /// beta.
        beta: f64,
    },
    /// The SPRT's hypotheses are not ordered: elo0 must be below elo1.
    HypothesesNotOrdered {
        /// elo0, the Elo difference of H0.
        elo0: f64,
        /// elo1, the Elo difference of H1.
        elo1: f64,
    },
    /// An Elo value so large that its expected score rounds to 0 or 1.
    EloOutOfRange(f64),
    /// An Elo estimate was asked of a tally with no games.
    NoGames,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BotOutOfRange { bot, bots } => {
                write!(
                    f,
                    "bot index {bot} is out of range: there are {bots} bots (0 to {})",
                    bots.saturating_sub(1)
                )
            }
            Error::SelfPlay { bot } => write!(f, "bot {bot} cannot play itself"),
            Error::TooFewBots { bots } => write!(f, "ratings need at least 2 bots, got {bots}"),
            Error::CountOverflow => write!(f, "too many games: a count would exceed {}", u64::MAX),
            Error::InvalidPriorDraws(d) => {
                write!(
                    f,
                    "prior_draws must be a finite number of virtual draws, 0 or more, got {d}"
                )
            }
            Error::InvalidConfidence(c) => {
                write!(f, "confidence must be strictly between 0 and 1, got {c}")
            }
            Error::NotFinite { what, value } => {
                write!(f, "{what} must be a finite number, got {value}")
            }
            Error::DuplicateFixedBot { bot } => write!(f, "bot {bot} is fixed twice"),
            Error::EmptyLadder => write!(f, "a fixed anchor needs at least one bot"),
            Error::NoFiniteRatings => write!(
                f,
                "without a prior the games do not determine finite ratings (a bot won or lost \
                 every game, or some bots never met the others); use prior_draws > 0"
            ),
            Error::NotConverged { iterations } => {
                write!(
                    f,
                    "the rating fit did not converge in {iterations} iterations"
                )
            }
            Error::InvalidAlpha(a) => write!(f, "alpha must be strictly between 0 and 1, got {a}"),
            Error::InvalidBeta(b) => write!(f, "beta must be strictly between 0 and 1, got {b}"),
            Error::AlphaBetaSum { alpha, beta } => {
                write!(f, "alpha + beta must be below 1, got {alpha} + {beta}")
            }
            Error::HypothesesNotOrdered { elo0, elo1 } => {
                write!(
                    f,
                    "elo0 must be below elo1, got elo0 = {elo0}, elo1 = {elo1}"
                )
            }
            Error::EloOutOfRange(e) => write!(
                f,
                "Elo difference {e} is out of range: its expected score rounds to 0 or 1"
            ),
            Error::NoGames => write!(f, "no games to estimate from"),
        }
    }
}

impl std::error::Error for Error {}
