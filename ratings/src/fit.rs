//! Ratings by maximum a-posteriori over all games at once: Bradley–Terry on the Elo
//! scale with a first-mover advantage, a prior of virtual draws, Newton–Raphson, and the
//! covariance from the observed information. docs/ratings.md has the formulas.

use crate::linalg::{Cholesky, Matrix};
use crate::{normal, Error, GameTable};

/// ln(10)/400: the logistic curve of the Elo scale is σ(C·x) with x in Elo.
pub(crate) const C: f64 = std::f64::consts::LN_10 / 400.0;

/// The default prior: each bot gets 2 virtual draws (the strength of BayesElo's default
/// prior, spread differently: docs/ratings.md, "The prior").
pub const DEFAULT_PRIOR_DRAWS: f64 = 2.0;

/// The default pool average.
pub const DEFAULT_AVERAGE: f64 = 1500.0;

/// Newton stops when no parameter moves by more than this many Elo.
const STEP_TOLERANCE: f64 = 1e-7;
const MAX_ITERATIONS: usize = 500;
/// A parameter this far from where it started means the fit is running off to infinity
/// (only possible without a prior): no real pool of bots spans 100,000 Elo.
const DIVERGENCE: f64 = 1e5;

/// What fixes the scale's origin. Bradley–Terry ratings are only defined up to a common
/// shift; the anchor picks one, and intervals are relative to it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Anchor {
    /// The average rating of all bots is this value. Each bot's interval is that of its
    /// distance from the pool average.
    Average(f64),
    /// One bot has exactly this rating (and no uncertainty); each other bot's interval is
    /// that of its distance from this bot.
    Bot {
        /// The anchored bot's index.
        bot: usize,
        /// Its rating.
        rating: f64,
    },
    /// Several bots keep known ratings (a ladder, for rating a newcomer against it); the
    /// others are fitted with the listed bots held fixed. With one bot this is
    /// [`Anchor::Bot`].
    Fixed(Vec<(usize, f64)>),
}

impl Default for Anchor {
    fn default() -> Anchor {
        Anchor::Average(DEFAULT_AVERAGE)
    }
}

/// Whether the first-mover advantage is fitted or known.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Advantage {
    /// Fitted with the ratings (the default).
    Fit,
    /// Held at this many Elo (for example 0, or a league's value when rating a newcomer).
    Fixed(f64),
}

/// How to fit: anchor, prior, advantage and the confidence level of intervals.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FitOptions {
    /// The origin of the scale (default: pool average 1500).
    pub anchor: Anchor,
    /// Virtual draws per bot, spread evenly over every other bot and both seats
    /// (default 2). 0 gives the plain maximum-likelihood fit, which fails with
    /// [`Error::NoFiniteRatings`] when a bot won or lost every game.
    pub prior_draws: f64,
    /// Fit or fix the first-mover advantage (default: fit).
    pub advantage: Advantage,
    /// Confidence level of the intervals (default 0.95).
    pub confidence: f64,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions {
            anchor: Anchor::default(),
            prior_draws: DEFAULT_PRIOR_DRAWS,
            advantage: Advantage::Fit,
            confidence: 0.95,
        }
    }
}

/// A value with its standard error and confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Its standard error (0 for a value that is fixed, like an anchored bot).
    pub std_error: f64,
    /// Lower end of the confidence interval.
    pub low: f64,
    /// Upper end of the confidence interval.
    pub high: f64,
}

/// Two bots compared: the difference of their ratings, its uncertainty (from the full
/// covariance), and the likelihood of superiority.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Comparison {
    /// The first bot.
    pub a: usize,
    /// The second bot.
    pub b: usize,
    /// rating(a) − rating(b), with its standard error and interval.
    pub difference: Estimate,
    /// The likelihood of superiority: the probability that a is the stronger,
    /// Φ(difference / std_error).
    pub los: f64,
}

/// What one more game between two bots would tell, for pairing games where they shrink
/// uncertainty fastest. Variances are in Elo².
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GameInformation {
    /// The bot that would move first.
    pub first: usize,
    /// The bot that would move second.
    pub second: usize,
    /// The first mover's expected score under the fitted ratings and advantage.
    pub expected_score: f64,
    /// Fisher information of the game about r(first) − r(second) + advantage, in 1/Elo²:
    /// (ln 10/400)² · p · (1 − p).
    pub information: f64,
    /// Variance of r(first) − r(second) now.
    pub difference_variance: f64,
    /// Variance of r(first) − r(second) after the game.
    pub difference_variance_after: f64,
    /// How much the game reduces Σ_k Var(r_k − pool average): the total uncertainty of
    /// the standings, whatever the anchor (it is the sum over all pairs of
    /// Var(r_k − r_l), divided by the number of bots).
    pub pool_variance_reduction: f64,
    /// How much the game reduces the variance of the first-mover advantage.
    pub advantage_variance_reduction: f64,
}

/// Fitted ratings: one per bot, the first-mover advantage, and their joint covariance.
///
/// Built by [`Ratings::fit`]. Every rating is in Elo; so is the advantage, which is
/// added to the first mover's rating difference.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Ratings {
    ratings: Vec<f64>,
    advantage: f64,
    /// (bots + 1)² row-major: ratings, then the advantage (row and column `bots`).
    covariance: Vec<f64>,
    confidence: f64,
    z: f64,
    prior_draws: f64,
    iterations: usize,
}

/// Which bots and whether the advantage are free parameters, and where in the vector.
struct Layout {
    bot_param: Vec<Option<usize>>,
    advantage_param: Option<usize>,
    params: usize,
}

/// One ordered pair with its games (real and virtual), as the fit sees it.
struct Cell {
    first: usize,
    second: usize,
    games: f64,
    score: f64,
}

fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// ln σ(z), without overflow or cancellation at either end.
fn log_sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        -(-z).exp().ln_1p()
    } else {
        z - z.exp().ln_1p()
    }
}

/// The first mover's expected score when its rating exceeds the second mover's by
/// `difference` Elo, first-move advantage included: 1 / (1 + 10^(−difference/400)).
pub fn expected_score(difference: f64) -> f64 {
    sigmoid(C * difference)
}

fn log_posterior(cells: &[Cell], ratings: &[f64], advantage: f64) -> f64 {
    cells
        .iter()
        .map(|cell| {
            let z = C * (ratings[cell.first] - ratings[cell.second] + advantage);
            cell.score * log_sigmoid(z) + (cell.games - cell.score) * log_sigmoid(-z)
        })
        .sum()
}

/// The gradient of the log-posterior and the observed information (minus its Hessian)
/// in the free parameters.
fn gradient_information(
    cells: &[Cell],
    ratings: &[f64],
    advantage: f64,
    layout: &Layout,
) -> (Vec<f64>, Matrix) {
    let mut gradient = vec![0.0; layout.params];
    let mut information = Matrix::zeros(layout.params);
    for cell in cells {
        let p = sigmoid(C * (ratings[cell.first] - ratings[cell.second] + advantage));
        let g = C * (cell.score - cell.games * p);
        let w = C * C * cell.games * p * (1.0 - p);
        // The game's direction u = e_first − e_second + e_advantage, restricted to the
        // free parameters; it adds g·u to the gradient and w·u·uᵀ to the information.
        let entries = [
            (layout.bot_param[cell.first], 1.0),
            (layout.bot_param[cell.second], -1.0),
            (layout.advantage_param, 1.0),
        ];
        for &(pi, si) in &entries {
            let Some(pi) = pi else { continue };
            gradient[pi] += si * g;
            for &(pj, sj) in &entries {
                let Some(pj) = pj else { continue };
                information.add(pi, pj, si * sj * w);
            }
        }
    }
    (gradient, information)
}

fn check_finite(what: &'static str, value: f64) -> Result<f64, Error> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Error::NotFinite { what, value })
    }
}

fn check_bot(bot: usize, bots: usize) -> Result<(), Error> {
    if bot < bots {
        Ok(())
    } else {
        Err(Error::BotOutOfRange { bot, bots })
    }
}

impl Ratings {
    /// Fits ratings to every game of `table` at once.
    ///
    /// The model: the first mover i scores against j with probability
    /// p = 1 / (1 + 10^(−(r_i − r_j + a)/400)); a game's score s (1, ½ or 0) enters the
    /// likelihood as p^s (1−p)^(1−s). To the games are added `prior_draws` virtual draws
    /// per bot (spread evenly over every other bot, half with each seat), which keeps
    /// every rating finite. The maximum is found by Newton–Raphson; the covariance is
    /// the inverse of the observed information, taken relative to the anchor.
    pub fn fit(table: &GameTable, options: &FitOptions) -> Result<Ratings, Error> {
        Ratings::fit_from(table, options, None)
    }

    /// [`Ratings::fit`], started from an earlier fit of the same bots (a league's last
    /// table, before its newest games): the same maximum, found in fewer Newton steps
    /// when little changed. An earlier fit of another number of bots is ignored.
    pub fn fit_from(
        table: &GameTable,
        options: &FitOptions,
        previous: Option<&Ratings>,
    ) -> Result<Ratings, Error> {
        let n = table.bots();
        if n < 2 {
            return Err(Error::TooFewBots { bots: n });
        }
        let d = options.prior_draws;
        if !(d.is_finite() && d >= 0.0) {
            return Err(Error::InvalidPriorDraws(d));
        }
        let confidence = options.confidence;
        if !(confidence > 0.0 && confidence < 1.0) {
            return Err(Error::InvalidConfidence(confidence));
        }

        // Pinned bots: the anchor's, or bot 0 at 0 to fix the gauge of a pool average
        // (the shift to the requested average is applied after the fit).
        let mut pinned: Vec<Option<f64>> = vec![None; n];
        match &options.anchor {
            Anchor::Average(average) => {
                check_finite("anchor rating", *average)?;
                pinned[0] = Some(0.0);
            }
            Anchor::Bot { bot, rating } => {
                check_bot(*bot, n)?;
                pinned[*bot] = Some(check_finite("anchor rating", *rating)?);
            }
            Anchor::Fixed(list) => {
                if list.is_empty() {
                    return Err(Error::EmptyLadder);
                }
                for &(bot, rating) in list {
                    check_bot(bot, n)?;
                    check_finite("fixed rating", rating)?;
                    if pinned[bot].is_some() {
                        return Err(Error::DuplicateFixedBot { bot });
                    }
                    pinned[bot] = Some(rating);
                }
            }
        }
        let fixed_advantage = match options.advantage {
            Advantage::Fit => None,
            Advantage::Fixed(a) => Some(check_finite("fixed advantage", a)?),
        };

        let mut params = 0;
        let bot_param = pinned
            .iter()
            .map(|p| {
                p.is_none().then(|| {
                    params += 1;
                    params - 1
                })
            })
            .collect();
        let advantage_param = fixed_advantage.is_none().then(|| {
            params += 1;
            params - 1
        });
        let layout = Layout {
            bot_param,
            advantage_param,
            params,
        };

        // Every ordered pair gets d / (2(n−1)) virtual games, all draws: each bot then
        // has d virtual games, half as first mover.
        let virtual_games = d / (2.0 * (n - 1) as f64);
        let mut cells = Vec::new();
        for first in 0..n {
            for second in (0..n).filter(|&s| s != first) {
                let wdl = table.get(first, second)?;
                let games = wdl.wins as f64 + wdl.draws as f64 + wdl.losses as f64 + virtual_games;
                if games > 0.0 {
                    let score = wdl.points() + 0.5 * virtual_games;
                    cells.push(Cell {
                        first,
                        second,
                        games,
                        score,
                    });
                }
            }
        }

        let fixed_values: Vec<f64> = pinned.iter().flatten().copied().collect();
        let start = fixed_values.iter().sum::<f64>() / fixed_values.len() as f64;
        let mut ratings: Vec<f64> = pinned.iter().map(|p| p.unwrap_or(start)).collect();
        let mut advantage = fixed_advantage.unwrap_or(0.0);
        if let Some(previous) = previous.filter(|p| p.ratings.len() == n) {
            warm_start(previous, &pinned, &mut ratings);
            if fixed_advantage.is_none() && previous.advantage.is_finite() {
                advantage = previous.advantage;
            }
        }

        let iterations = newton(&cells, &layout, &mut ratings, &mut advantage, d, start)?;

        // Covariance of the free parameters, then of every rating and the advantage.
        let (_, information) = gradient_information(&cells, &ratings, advantage, &layout);
        let inverse = if layout.params == 0 {
            Matrix::zeros(0)
        } else {
            Cholesky::new(&information)
                .map_err(|_| Error::NoFiniteRatings)?
                .inverse()
        };
        let size = n + 1;
        let full_index = |k: usize| {
            if k < n {
                layout.bot_param[k]
            } else {
                layout.advantage_param
            }
        };
        let mut covariance = vec![0.0; size * size];
        for i in 0..size {
            for j in 0..size {
                if let (Some(pi), Some(pj)) = (full_index(i), full_index(j)) {
                    covariance[i * size + j] = inverse.get(pi, pj);
                }
            }
        }

        if let Anchor::Average(average) = options.anchor {
            let mean = ratings.iter().sum::<f64>() / n as f64;
            for r in &mut ratings {
                *r += average - mean;
            }
            center_covariance(&mut covariance, n);
        }

        Ok(Ratings {
            ratings,
            advantage,
            covariance,
            confidence,
            z: normal::quantile(0.5 + confidence / 2.0),
            prior_draws: d,
            iterations,
        })
    }

    /// The number of bots.
    pub fn bots(&self) -> usize {
        self.ratings.len()
    }

    /// Every bot's rating, by index.
    pub fn ratings(&self) -> &[f64] {
        &self.ratings
    }

    /// The confidence level of the intervals.
    pub fn confidence(&self) -> f64 {
        self.confidence
    }

    /// The prior's virtual draws per bot used in the fit.
    pub fn prior_draws(&self) -> f64 {
        self.prior_draws
    }

    /// Newton iterations the fit took.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    fn cov(&self, i: usize, j: usize) -> f64 {
        self.covariance[i * (self.bots() + 1) + j]
    }

    fn estimate(&self, value: f64, variance: f64) -> Estimate {
        // Rounding can leave a zero variance a hair below zero.
        let std_error = variance.max(0.0).sqrt();
        Estimate {
            value,
            std_error,
            low: value - self.z * std_error,
            high: value + self.z * std_error,
        }
    }

    /// One bot's rating with its standard error and interval (relative to the anchor).
    pub fn rating(&self, bot: usize) -> Result<Estimate, Error> {
        check_bot(bot, self.bots())?;
        Ok(self.estimate(self.ratings[bot], self.cov(bot, bot)))
    }

    /// [`Ratings::rating`] for every bot, by index.
    pub fn estimates(&self) -> Vec<Estimate> {
        (0..self.bots())
            .map(|bot| self.estimate(self.ratings[bot], self.cov(bot, bot)))
            .collect()
    }

    /// The first-mover advantage in Elo, with its standard error and interval (0 and a
    /// point interval when it was fixed).
    pub fn advantage(&self) -> Estimate {
        let n = self.bots();
        self.estimate(self.advantage, self.cov(n, n))
    }

    /// Covariance of two ratings, in Elo²; index `bots()` stands for the advantage.
    pub fn covariance(&self, i: usize, j: usize) -> Result<f64, Error> {
        let size = self.bots() + 1;
        check_bot(i, size)?;
        check_bot(j, size)?;
        Ok(self.cov(i, j))
    }

    /// The whole covariance matrix, (bots + 1) × (bots + 1) row by row: the ratings,
    /// then the advantage.
    pub fn covariance_matrix(&self) -> &[f64] {
        &self.covariance
    }

    /// Compares bots `a` and `b` using their full covariance:
    /// Var(r_a − r_b) = Var(r_a) + Var(r_b) − 2 Cov(r_a, r_b).
    pub fn compare(&self, a: usize, b: usize) -> Result<Comparison, Error> {
        check_bot(a, self.bots())?;
        check_bot(b, self.bots())?;
        let variance = self.cov(a, a) + self.cov(b, b) - 2.0 * self.cov(a, b);
        let difference = self.estimate(self.ratings[a] - self.ratings[b], variance);
        Ok(Comparison {
            a,
            b,
            difference,
            los: los(difference.value, difference.std_error),
        })
    }

    /// The likelihood of superiority of `a` over `b`, Φ((r_a − r_b)/sd(r_a − r_b)).
    /// With no uncertainty at all (both bots fixed) it is 1, 0 or ½.
    pub fn los(&self, a: usize, b: usize) -> Result<f64, Error> {
        Ok(self.compare(a, b)?.los)
    }

    /// The likelihood of superiority of every bot (row) over every other (column); the
    /// diagonal is ½.
    pub fn los_matrix(&self) -> Vec<Vec<f64>> {
        let n = self.bots();
        (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| {
                        let variance = self.cov(a, a) + self.cov(b, b) - 2.0 * self.cov(a, b);
                        los(self.ratings[a] - self.ratings[b], variance.max(0.0).sqrt())
                    })
                    .collect()
            })
            .collect()
    }

    /// The first mover's expected score in a game `first` begins against `second`.
    pub fn expected_score(&self, first: usize, second: usize) -> Result<f64, Error> {
        check_bot(first, self.bots())?;
        check_bot(second, self.bots())?;
        Ok(expected_score(
            self.ratings[first] - self.ratings[second] + self.advantage,
        ))
    }

    /// What one more game, `first` moving first against `second`, would add: its
    /// Fisher information at the fitted values and the variances it would reduce.
    ///
    /// With the Laplace approximation the information matrix gains w·u·uᵀ, where
    /// u = e_first − e_second + e_advantage and w = (ln 10/400)² p (1 − p) whatever the
    /// result (a draw counts as half a win, so the curvature does not depend on the
    /// score); the new covariance follows from the Sherman–Morrison formula
    /// Σ' = Σ − w Σu uᵀΣ / (1 + w uᵀΣu).
    pub fn game_information(&self, first: usize, second: usize) -> Result<GameInformation, Error> {
        check_bot(first, self.bots())?;
        check_bot(second, self.bots())?;
        if first == second {
            return Err(Error::SelfPlay { bot: first });
        }
        Ok(self.information_unchecked(first, second))
    }

    fn information_unchecked(&self, first: usize, second: usize) -> GameInformation {
        let n = self.bots();
        let p = expected_score(self.ratings[first] - self.ratings[second] + self.advantage);
        let w = C * C * p * (1.0 - p);
        // Σu; the advantage's row is all zeros when it is fixed, so adding it is harmless.
        let su: Vec<f64> = (0..=n)
            .map(|k| self.cov(k, first) - self.cov(k, second) + self.cov(k, n))
            .collect();
        let usu = su[first] - su[second] + su[n];
        let shrink = w / (1.0 + w * usu);
        let difference_variance =
            self.cov(first, first) + self.cov(second, second) - 2.0 * self.cov(first, second);
        let dsu = su[first] - su[second];
        let mean = su[..n].iter().sum::<f64>() / n as f64;
        let centered: f64 = su[..n].iter().map(|x| (x - mean) * (x - mean)).sum();
        GameInformation {
            first,
            second,
            expected_score: p,
            information: w,
            difference_variance,
            difference_variance_after: difference_variance - shrink * dsu * dsu,
            pool_variance_reduction: shrink * centered,
            advantage_variance_reduction: shrink * su[n] * su[n],
        }
    }

    /// The game (ordered pair) whose result would most reduce the total uncertainty of
    /// the standings ([`GameInformation::pool_variance_reduction`]); ties go to the
    /// lowest indices.
    pub fn most_informative_game(&self) -> GameInformation {
        let n = self.bots();
        let mut best = self.information_unchecked(0, 1);
        for first in 0..n {
            for second in (0..n).filter(|&s| s != first) {
                let info = self.information_unchecked(first, second);
                if info.pool_variance_reduction > best.pool_variance_reduction {
                    best = info;
                }
            }
        }
        best
    }
}

/// Φ(difference / sd), with the limits when nothing is uncertain.
fn los(difference: f64, std_error: f64) -> f64 {
    if std_error > 0.0 {
        normal::cdf(difference / std_error)
    } else if difference > 0.0 {
        1.0
    } else if difference < 0.0 {
        0.0
    } else {
        0.5
    }
}

/// Replaces the covariance of (r, a) by that of (r − mean(r), a): the ratings' block is
/// centred on both sides, the advantage's column on one.
fn center_covariance(covariance: &mut [f64], n: usize) {
    let size = n + 1;
    let row_means: Vec<f64> = (0..size)
        .map(|i| (0..n).map(|j| covariance[i * size + j]).sum::<f64>() / n as f64)
        .collect();
    let grand = row_means[..n].iter().sum::<f64>() / n as f64;
    for i in 0..n {
        for j in 0..n {
            covariance[i * size + j] += grand - row_means[i] - row_means[j];
        }
    }
    // Cov(r_i − mean, a) = Cov(r_i, a) − mean_k Cov(r_k, a); row_means[n] is that mean.
    for i in 0..n {
        covariance[i * size + n] -= row_means[n];
        covariance[n * size + i] -= row_means[n];
    }
}

/// Newton–Raphson with a backtracking line search on the (concave) log-posterior.
/// Updates `ratings` and `advantage` in place; returns the iterations made.
/// Starts the free ratings at an earlier fit's, moved by one offset so that they sit
/// on this fit's scale: the pinned bots' own earlier values are matched (the fit pins
/// bot 0 at 0 for a pool average and shifts afterwards). An earlier value that is not
/// finite leaves the cold start as it is.
fn warm_start(previous: &Ratings, pinned: &[Option<f64>], ratings: &mut [f64]) {
    let pins: Vec<(f64, f64)> = pinned
        .iter()
        .zip(&previous.ratings)
        .filter_map(|(pin, &was)| pin.map(|p| (p, was)))
        .collect();
    if pins.is_empty() || previous.ratings.iter().any(|r| !r.is_finite()) {
        return;
    }
    let offset = pins.iter().map(|(p, was)| p - was).sum::<f64>() / pins.len() as f64;
    for ((r, pin), &was) in ratings.iter_mut().zip(pinned).zip(&previous.ratings) {
        if pin.is_none() {
            *r = was + offset;
        }
    }
}

fn newton(
    cells: &[Cell],
    layout: &Layout,
    ratings: &mut [f64],
    advantage: &mut f64,
    prior_draws: f64,
    start: f64,
) -> Result<usize, Error> {
    if layout.params == 0 {
        return Ok(0);
    }
    let apply = |ratings: &mut [f64], advantage: &mut f64, step: &[f64], t: f64| {
        for (bot, param) in layout.bot_param.iter().enumerate() {
            if let Some(p) = param {
                ratings[bot] += t * step[*p];
            }
        }
        if let Some(p) = layout.advantage_param {
            *advantage += t * step[p];
        }
    };
    let mut value = log_posterior(cells, ratings, *advantage);
    for iteration in 1..=MAX_ITERATIONS {
        let (gradient, information) = gradient_information(cells, ratings, *advantage, layout);
        let step = Cholesky::new(&information)
            .map_err(|_| Error::NoFiniteRatings)?
            .solve(&gradient);
        let largest = step.iter().fold(0.0_f64, |m, s| m.max(s.abs()));
        if !largest.is_finite() {
            return Err(Error::NoFiniteRatings);
        }
        if largest < STEP_TOLERANCE {
            apply(ratings, advantage, &step, 1.0);
            return Ok(iteration);
        }
        // The predicted gain gᵀH⁻¹g. Without a prior, a likelihood that keeps rising
        // towards a limit at infinity shows as Newton steps that stay large while the
        // gain they promise vanishes: a finite maximum has curvature, so a step of an Elo
        // or more there comes with a real gain.
        let gain: f64 = gradient.iter().zip(&step).map(|(g, s)| g * s).sum();
        if prior_draws == 0.0 && largest >= 1.0 && gain < 1e-10 {
            return Err(Error::NoFiniteRatings);
        }
        let mut t = 1.0;
        loop {
            let mut trial_ratings = ratings.to_vec();
            let mut trial_advantage = *advantage;
            apply(&mut trial_ratings, &mut trial_advantage, &step, t);
            let trial = log_posterior(cells, &trial_ratings, trial_advantage);
            // Armijo's condition, with room for rounding in a sum over many cells.
            if trial >= value + 1e-4 * t * gain - 1e-12 * (1.0 + value.abs()) {
                ratings.copy_from_slice(&trial_ratings);
                *advantage = trial_advantage;
                value = trial;
                break;
            }
            t *= 0.5;
            if t < 1e-12 {
                return Err(Error::NotConverged {
                    iterations: iteration,
                });
            }
        }
        let out = ratings.iter().any(|r| (r - start).abs() > DIVERGENCE);
        if out || advantage.abs() > DIVERGENCE {
            return Err(Error::NoFiniteRatings);
        }
        if t * largest < STEP_TOLERANCE {
            return Ok(iteration);
        }
    }
    if prior_draws == 0.0 {
        Err(Error::NoFiniteRatings)
    } else {
        Err(Error::NotConverged {
            iterations: MAX_ITERATIONS,
        })
    }
}
