//! Results of one bot against another, for an SPRT and an Elo estimate: single games
//! (trinomial: [`Wdl`]) or game pairs with the seats swapped (pentanomial).

use crate::{normal, Error, Outcome, Wdl};

/// A count of 0 is replaced by this many samples before any estimate or likelihood
/// ratio is computed, as fishtest (`LLRcalc.regularize`) and fastchess do: it keeps the
/// estimates finite when a result never happened (all games won, say) and changes
/// nothing measurable otherwise.
pub(crate) const EMPTY_CATEGORY: f64 = 1e-3;

/// Scores are kept this far from 0 and 1 before they are turned into Elo (as fishtest's
/// `stat_util.elo` does): an estimate never exceeds ±1199.6 Elo.
const SCORE_CLAMP: f64 = 1e-3;

/// Game pairs played with the same opening and the seats swapped, counted by bot A's
/// points in the pair: `counts[k]` pairs in which A scored k/2 points (0, ½, 1, 1½, 2).
///
/// This is the pentanomial of fishtest and fastchess: a pair's two games are correlated
/// (same opening), so the pair, not the game, is the independent sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Pentanomial {
    /// `counts[k]`: pairs in which A scored k/2 points.
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// Counts from their parts: `counts[k]` pairs in which A scored k/2 points.
    pub fn new(counts: [u64; 5]) -> Pentanomial {
        Pentanomial { counts }
    }

    /// Adds a pair: A's results in its two games (one with each seat, in any order).
    pub fn add_pair(&mut self, game1: Outcome, game2: Outcome) -> Result<(), Error> {
        let k = (2.0 * (game1.score() + game2.score())) as usize;
        let mut counts = self.counts;
        counts[k] = counts[k].checked_add(1).ok_or(Error::CountOverflow)?;
        Pentanomial { counts }.pairs().ok_or(Error::CountOverflow)?;
        self.counts = counts;
        Ok(())
    }

    /// The number of pairs, or `None` if it overflows.
    pub fn pairs(&self) -> Option<u64> {
        self.counts
            .iter()
            .try_fold(0u64, |acc, &c| acc.checked_add(c))
    }

    /// A's points over all pairs.
    pub fn points(&self) -> f64 {
        self.counts
            .iter()
            .enumerate()
            .map(|(k, &c)| 0.5 * k as f64 * c as f64)
            .sum()
    }

    /// The Elo difference of A over B estimated from the pairs, with its interval and
    /// the likelihood of superiority (see [`EloEstimate`]). The pair is the sample.
    pub fn elo(&self, confidence: f64) -> Result<EloEstimate, Error> {
        estimate(&PAIR_SCORES, &self.counts, confidence)
    }
}

/// A pair's points divided by 2: the per-game score of the pair.
pub(crate) const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
/// Loss, draw, win.
pub(crate) const GAME_SCORES: [f64; 3] = [0.0, 0.5, 1.0];

impl Wdl {
    /// The counts in the order of [`GAME_SCORES`]: losses, draws, wins.
    pub(crate) fn trinomial(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }

    /// Adds one game's result; on overflow nothing changes.
    pub fn add(&mut self, outcome: Outcome) -> Result<(), Error> {
        let mut next = *self;
        let count = match outcome {
            Outcome::Win => &mut next.wins,
            Outcome::Draw => &mut next.draws,
            Outcome::Loss => &mut next.losses,
        };
        *count = count.checked_add(1).ok_or(Error::CountOverflow)?;
        next.games().ok_or(Error::CountOverflow)?;
        *self = next;
        Ok(())
    }

    /// The Elo difference of this side over its opponent estimated from single games,
    /// with its interval and the likelihood of superiority (see [`EloEstimate`]).
    pub fn elo(&self, confidence: f64) -> Result<EloEstimate, Error> {
        estimate(&GAME_SCORES, &self.trinomial(), confidence)
    }
}

/// An Elo difference estimated from a score, the way fishtest's `stat_util.get_elo` and
/// fastchess's `EloWDL`/`EloPentanomial` do it: the mean per-game score μ and its
/// standard error σ/√samples (σ² the variance of one sample's score: a game's, or a
/// pair's divided by 2), the interval μ ± z·se turned into Elo, and
/// LOS = Φ((μ − ½)/se).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EloEstimate {
    /// The mean score per game, in [0, 1].
    pub score: f64,
    /// The standard error of `score`.
    pub score_std_error: f64,
    /// The Elo difference: −400·log10(1/score − 1).
    pub elo: f64,
    /// The lower end of the interval, in Elo.
    pub low: f64,
    /// The upper end of the interval, in Elo (not symmetric around `elo`).
    pub high: f64,
    /// The likelihood of superiority: the probability that this side is the stronger.
    pub los: f64,
}

impl EloEstimate {
    /// Half the interval's width, in Elo: the "±" that fishtest and fastchess print.
    pub fn half_width(&self) -> f64 {
        0.5 * (self.high - self.low)
    }
}

/// The Elo difference whose expected score is `score`: −400·log10(1/score − 1)
/// (±infinity at 1 and 0).
pub fn elo_difference(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The empirical distribution after replacing empty categories: (samples, frequencies).
pub(crate) fn regularized(counts: &[u64]) -> (f64, Vec<f64>) {
    let counts: Vec<f64> = counts
        .iter()
        .map(|&c| if c == 0 { EMPTY_CATEGORY } else { c as f64 })
        .collect();
    let total: f64 = counts.iter().sum();
    (total, counts.iter().map(|c| c / total).collect())
}

fn estimate(scores: &[f64], counts: &[u64], confidence: f64) -> Result<EloEstimate, Error> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(Error::InvalidConfidence(confidence));
    }
    if counts.iter().all(|&c| c == 0) {
        return Err(Error::NoGames);
    }
    let (samples, probs) = regularized(counts);
    let score: f64 = scores.iter().zip(&probs).map(|(a, p)| a * p).sum();
    let variance: f64 = scores
        .iter()
        .zip(&probs)
        .map(|(a, p)| p * (a - score) * (a - score))
        .sum();
    let se = (variance / samples).sqrt();
    let z = normal::quantile(0.5 + confidence / 2.0);
    let to_elo = |s: f64| elo_difference(s.clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP));
    Ok(EloEstimate {
        score,
        score_std_error: se,
        elo: to_elo(score),
        low: to_elo(score - z * se),
        high: to_elo(score + z * se),
        los: normal::cdf((score - 0.5) / se),
    })
}
