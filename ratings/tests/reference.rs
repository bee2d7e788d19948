//! An independent, deliberately plain second implementation of the model, for checking
//! the crate: the log-posterior game by game, a gradient-ascent maximiser, a numerical
//! Hessian, a Gauss–Jordan inverse, Φ by Simpson's rule, and a game simulator.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ratings::{GameTable, Outcome, Wdl};

/// One cell: (first, second, first mover's wins, draws, losses).
pub type Cell = (usize, usize, u64, u64, u64);

pub fn table(bots: usize, cells: &[Cell]) -> GameTable {
    let mut table = GameTable::new(bots);
    for &(first, second, w, d, l) in cells {
        table.add_games(first, second, Wdl::new(w, d, l)).unwrap();
    }
    table
}

pub fn cells_of(table: &GameTable) -> Vec<Cell> {
    table
        .cells()
        .map(|(f, s, wdl)| (f, s, wdl.wins, wdl.draws, wdl.losses))
        .collect()
}

fn p_first(ratings: &[f64], advantage: f64, first: usize, second: usize) -> f64 {
    1.0 / (1.0 + 10f64.powf(-(ratings[first] - ratings[second] + advantage) / 400.0))
}

/// The log-posterior written from the definition: every game's s·ln p + (1−s)·ln(1−p),
/// plus, for each unordered pair, prior/(n−1) virtual draws split over the two seats.
pub fn log_posterior(n: usize, cells: &[Cell], prior: f64, ratings: &[f64], advantage: f64) -> f64 {
    let mut total = 0.0;
    for &(f, s, w, d, l) in cells {
        let p = p_first(ratings, advantage, f, s);
        total += w as f64 * p.ln()
            + l as f64 * (1.0 - p).ln()
            + d as f64 * 0.5 * (p.ln() + (1.0 - p).ln());
    }
    for i in 0..n {
        for j in i + 1..n {
            let per_seat = prior / (n - 1) as f64 / 2.0;
            for (f, s) in [(i, j), (j, i)] {
                let p = p_first(ratings, advantage, f, s);
                total += per_seat * 0.5 * (p.ln() + (1.0 - p).ln());
            }
        }
    }
    total
}

/// Free parameters: ratings of bots 1..n (bot 0 held at 0) and the advantage.
pub fn unpack(n: usize, theta: &[f64]) -> (Vec<f64>, f64) {
    let mut ratings = vec![0.0];
    ratings.extend_from_slice(&theta[..n - 1]);
    (ratings, theta[n - 1])
}

/// Maximises the log-posterior by plain gradient ascent with a fixed step, the gradient
/// taken term by term from the definition (d/dx of s·ln p + (1−s)·ln(1−p) is
/// (ln 10/400)(s − p) for x = r_first − r_second + a). Small tables only. Returns
/// (ratings with bot 0 at 0, advantage).
pub fn brute_force_fit(n: usize, cells: &[Cell], prior: f64) -> (Vec<f64>, f64) {
    let c = std::f64::consts::LN_10 / 400.0;
    // Every game as (first, second, games, score), virtual draws included.
    let mut games: Vec<(usize, usize, f64, f64)> = cells
        .iter()
        .map(|&(f, s, w, d, l)| (f, s, (w + d + l) as f64, w as f64 + 0.5 * d as f64))
        .collect();
    let per_seat = prior / (n - 1) as f64 / 2.0;
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            games.push((i, j, per_seat, 0.5 * per_seat));
        }
    }
    // The curvature is at most c²/4 per game and parameter, three parameters per game:
    // a step of 1/(that bound) never overshoots.
    let total: f64 = games.iter().map(|g| g.2).sum();
    let eta = 1.0 / (c * c / 4.0 * 3.0 * total);
    let mut ratings = vec![0.0; n];
    let mut advantage = 0.0;
    for _ in 0..2_000_000 {
        let mut grad = vec![0.0; n + 1];
        for &(f, s, count, score) in &games {
            let p = p_first(&ratings, advantage, f, s);
            let g = c * (score - count * p);
            grad[f] += g;
            grad[s] -= g;
            grad[n] += g;
        }
        grad[0] = 0.0; // bot 0 stays at 0
        if grad.iter().all(|g| g.abs() < 1e-13) {
            break;
        }
        for k in 1..n {
            ratings[k] += eta * grad[k];
        }
        advantage += eta * grad[n];
    }
    (ratings, advantage)
}

/// The observed information (minus the Hessian of the log-posterior) in the free
/// parameters of [`unpack`], by central differences of step `h` Elo.
pub fn numerical_information(
    n: usize,
    cells: &[Cell],
    prior: f64,
    ratings: &[f64],
    advantage: f64,
) -> Vec<Vec<f64>> {
    let mut theta: Vec<f64> = ratings[1..].iter().map(|r| r - ratings[0]).collect();
    theta.push(advantage);
    let f = |theta: &[f64]| {
        let (r, a) = unpack(n, theta);
        log_posterior(n, cells, prior, &r, a)
    };
    let h = 0.5;
    let m = n;
    let mut info = vec![vec![0.0; m]; m];
    for i in 0..m {
        for j in 0..m {
            let at = |di: f64, dj: f64| {
                let mut t = theta.clone();
                t[i] += di;
                t[j] += dj;
                f(&t)
            };
            info[i][j] = -(at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4.0 * h * h);
        }
    }
    info
}

/// Inverse by Gauss–Jordan elimination with partial pivoting.
pub fn invert(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let m = a.len();
    let mut aug: Vec<Vec<f64>> = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..m).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    for col in 0..m {
        let pivot = (col..m)
            .max_by(|&x, &y| aug[x][col].abs().total_cmp(&aug[y][col].abs()))
            .unwrap();
        aug.swap(col, pivot);
        let p = aug[col][col];
        for x in aug[col].iter_mut() {
            *x /= p;
        }
        for row in 0..m {
            if row != col {
                let factor = aug[row][col];
                let pivot_row = aug[col].clone();
                for (x, y) in aug[row].iter_mut().zip(pivot_row) {
                    *x -= factor * y;
                }
            }
        }
    }
    aug.into_iter().map(|r| r[m..].to_vec()).collect()
}

/// Covariance of (ratings relative to the pool average, advantage), (n+1)×(n+1), from the
/// covariance of the free parameters of [`unpack`]: J Σ Jᵀ with J the derivative of
/// (r_i − mean(r), a) with respect to (r_1..r_{n−1}, a).
pub fn centered_covariance(n: usize, sigma: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let jac: Vec<Vec<f64>> = (0..=n)
        .map(|i| {
            (0..n)
                .map(|k| {
                    if i == n {
                        if k == n - 1 {
                            1.0
                        } else {
                            0.0
                        }
                    } else if k == n - 1 {
                        0.0
                    } else {
                        let bot = k + 1;
                        (if i == bot { 1.0 } else { 0.0 }) - 1.0 / n as f64
                    }
                })
                .collect()
        })
        .collect();
    let mut out = vec![vec![0.0; n + 1]; n + 1];
    for i in 0..=n {
        for j in 0..=n {
            for k in 0..n {
                for l in 0..n {
                    out[i][j] += jac[i][k] * sigma[k][l] * jac[j][l];
                }
            }
        }
    }
    out
}

/// Φ(x) by Simpson's rule on the normal density (independent of the crate's erfc).
pub fn phi(x: f64) -> f64 {
    let steps = 20_000;
    let h = x / steps as f64;
    let density = |t: f64| (-t * t / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let mut sum = density(0.0) + density(x);
    for k in 1..steps {
        sum += density(k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
    }
    0.5 + sum * h / 3.0
}

/// Plays `games_per_cell` games for every ordered pair with the model's probabilities:
/// the first mover's expected score p = 1/(1 + 10^(−(r_i − r_j + a)/400)), of which a
/// share `draw_share` of min(p, 1 − p) is turned into draws (keeping the mean at p).
pub fn simulate(
    ratings: &[f64],
    advantage: f64,
    draw_share: f64,
    games_per_cell: u64,
    seed: u64,
) -> GameTable {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = ratings.len();
    let mut table = GameTable::new(n);
    for first in 0..n {
        for second in (0..n).filter(|&s| s != first) {
            let p = p_first(ratings, advantage, first, second);
            let draw = 2.0 * draw_share * p.min(1.0 - p);
            let win = p - draw / 2.0;
            for _ in 0..games_per_cell {
                let x: f64 = rng.gen();
                let outcome = if x < win {
                    Outcome::Win
                } else if x < win + draw {
                    Outcome::Draw
                } else {
                    Outcome::Loss
                };
                table.add_game(first, second, outcome).unwrap();
            }
        }
    }
    table
}
