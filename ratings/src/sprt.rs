//! The sequential probability ratio test of one bot against another: the generalized
//! SPRT of Michel Van den Bergh, as fishtest (`LLRcalc.LLR_logistic`) and fastchess
//! (`SPRT::getLLR_logistic`) compute it, with hypotheses in logistic Elo.

use crate::tally::{regularized, GAME_SCORES, PAIR_SCORES};
use crate::{expected_score, Error, Pentanomial, Wdl};

/// What the test says after the games so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Decision {
    /// The LLR is between the bounds: play more games.
    Continue,
    /// The LLR reached the lower bound: accept H0 (the difference is elo0 or less).
    AcceptH0,
    /// The LLR reached the upper bound: accept H1 (the difference is elo1 or more).
    AcceptH1,
}

/// The state of a test: the log-likelihood ratio, the bounds, and the decision.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SprtStatus {
    /// The generalized log-likelihood ratio of H1 against H0.
    pub llr: f64,
    /// ln(beta / (1 − alpha)): at or below it, H0 is accepted.
    pub lower_bound: f64,
    /// ln((1 − beta) / alpha): at or above it, H1 is accepted.
    pub upper_bound: f64,
    /// What to do.
    pub decision: Decision,
}

/// A validated SPRT: H0 "A is elo0 stronger than B" against H1 "A is elo1 stronger"
/// (logistic Elo, elo0 < elo1), with false-positive rate alpha and false-negative rate
/// beta.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Sprt {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    lower_bound: f64,
    upper_bound: f64,
}

impl Sprt {
    /// Checks the parameters: alpha and beta strictly between 0 and 1 with a sum below 1,
    /// elo0 < elo1, both finite and with expected scores strictly between 0 and 1.
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> Result<Sprt, Error> {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(Error::InvalidAlpha(alpha));
        }
        if !(beta > 0.0 && beta < 1.0) {
            return Err(Error::InvalidBeta(beta));
        }
        if alpha + beta >= 1.0 {
            return Err(Error::AlphaBetaSum { alpha, beta });
        }
        for (what, value) in [("elo0", elo0), ("elo1", elo1)] {
            if !value.is_finite() {
                return Err(Error::NotFinite { what, value });
            }
            let s = expected_score(value);
            if !(s > 0.0 && s < 1.0) {
                return Err(Error::EloOutOfRange(value));
            }
        }
        if elo0 >= elo1 {
            return Err(Error::HypothesesNotOrdered { elo0, elo1 });
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
            lower_bound: (beta / (1.0 - alpha)).ln(),
            upper_bound: ((1.0 - beta) / alpha).ln(),
        })
    }

    /// elo0, the Elo difference of H0.
    pub fn elo0(&self) -> f64 {
        self.elo0
    }

    /// elo1, the Elo difference of H1.
    pub fn elo1(&self) -> f64 {
        self.elo1
    }

    /// alpha, the false-positive rate (accepting H1 when H0 holds).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// beta, the false-negative rate (accepting H0 when H1 holds).
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// ln(beta / (1 − alpha)).
    pub fn lower_bound(&self) -> f64 {
        self.lower_bound
    }

    /// ln((1 − beta) / alpha).
    pub fn upper_bound(&self) -> f64 {
        self.upper_bound
    }

    /// The decision for a log-likelihood ratio: a bound reached (or passed) decides.
    pub fn decision(&self, llr: f64) -> Decision {
        if llr >= self.upper_bound {
            Decision::AcceptH1
        } else if llr <= self.lower_bound {
            Decision::AcceptH0
        } else {
            Decision::Continue
        }
    }

    fn status(&self, llr: f64) -> SprtStatus {
        SprtStatus {
            llr,
            lower_bound: self.lower_bound,
            upper_bound: self.upper_bound,
            decision: self.decision(llr),
        }
    }

    /// The test on single games (trinomial), A's wins, draws and losses.
    pub fn trinomial(&self, results: &Wdl) -> SprtStatus {
        self.status(self.llr(&GAME_SCORES, &results.trinomial()))
    }

    /// The test on game pairs with swapped seats (pentanomial).
    pub fn pentanomial(&self, results: &Pentanomial) -> SprtStatus {
        self.status(self.llr(&PAIR_SCORES, &results.counts))
    }

    /// The generalized LLR: N · Σ_k p̂_k · ln(p1_k / p0_k), where p̂ is the empirical
    /// distribution of a sample's per-game score a_k and p_s is the distribution closest
    /// to p̂ (maximum likelihood) among those with mean score s = 1/(1 + 10^(−elo/400)).
    /// With no samples at all it is 0.
    fn llr(&self, scores: &[f64], counts: &[u64]) -> f64 {
        if counts.iter().all(|&c| c == 0) {
            return 0.0;
        }
        let (samples, probs) = regularized(counts);
        let s0 = expected_score(self.elo0);
        let s1 = expected_score(self.elo1);
        let theta0 = mle_multiplier(scores, &probs, s0);
        let theta1 = mle_multiplier(scores, &probs, s1);
        // p_s,k = p̂_k / (1 + θ_s (a_k − s)), so ln(p1_k / p0_k) is a difference of logs.
        let per_sample: f64 = scores
            .iter()
            .zip(&probs)
            .map(|(a, p)| p * ((theta0 * (a - s0)).ln_1p() - (theta1 * (a - s1)).ln_1p()))
            .sum();
        samples * per_sample
    }
}

/// The Lagrange multiplier θ of the maximum-likelihood distribution with mean `s`: the
/// root of Σ_k p̂_k (a_k − s) / (1 + θ (a_k − s)) = 0 (Van den Bergh, "Comments on
/// Normalized Elo", proposition 1.1). The sum falls strictly from +∞ to −∞ on
/// (−1/(a_max − s), −1/(a_min − s)), so bisection finds the root to the last bit. Every
/// p̂_k is positive (empty categories are regularized) and a_min = 0 < s < 1 = a_max.
fn mle_multiplier(scores: &[f64], probs: &[f64], s: f64) -> f64 {
    let f = |theta: f64| -> f64 {
        scores
            .iter()
            .zip(probs)
            .map(|(a, p)| p * (a - s) / (1.0 + theta * (a - s)))
            .sum()
    };
    let a_max = scores.iter().fold(f64::NEG_INFINITY, |m, &a| m.max(a));
    let a_min = scores.iter().fold(f64::INFINITY, |m, &a| m.min(a));
    let (mut lo, mut hi) = (-1.0 / (a_max - s), -1.0 / (a_min - s));
    for _ in 0..2000 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}
