//! How much more surely one more set would order two bots: the figure a scheduler ranks
//! pairs by (docs/ratings.md, "How surely two bots are ordered").

use std::f64::consts::PI;

use crate::fit::{expected_score, C};
use crate::normal;

/// The Fisher information one game carries about the rating difference, in 1/Elo²,
/// when the first mover's rating exceeds the second's by `difference` Elo (first-move
/// advantage included): c² · p · (1 − p), p = [`expected_score`]`(difference)`, c = ln 10/400.
/// It is largest (c²/4) between equals and falls off as e^(−c·|difference|) between
/// unequal bots: a lopsided game says almost nothing.
pub fn game_fisher_information(difference: f64) -> f64 {
    // The smaller of p and 1 − p, for its relative accuracy (and an exact symmetry).
    let p = expected_score(-difference.abs());
    C * C * p * (1.0 - p)
}

/// The expected fall of the probability that two bots are ordered wrongly, when
/// `information` (1/Elo², e.g. a set's games' [`game_fisher_information`] summed) is
/// added about their rating difference, now estimated at `difference` Elo with
/// `variance` Elo².
///
/// With the difference D ~ N(d, V) (the fit's Laplace approximation), the probability
/// that the table orders the two wrongly is min(LOS, 1 − LOS) = Φ(−|d|/√V). After the
/// information I the variance is V' = V/(1 + V·I), and the new estimate d' is spread
/// N(d, V − V') around the old one; the expected probability afterwards is
/// E[Φ(−|d'|/√V')] = 2·T(h, 1/√(V·I)) (Owen's T, h = |d|/√V), so the fall is
///
/// ```text
/// gain = (1/π) ∫₀^√(V·I) exp(−h²(1 + y²)/(2y²)) / (1 + y²) dy
/// ```
///
/// It is 0 without information or without doubt (V·I = 0, or |d| ≫ √V), and at most ½
/// (an unknown pair, V = ∞; infinite information removes all doubt, Φ(−h)); between two bots of equal estimates it is arctan(√(V·I))/π.
/// Negative or NaN inputs count as 0; an infinite `difference` as no doubt.
pub fn order_gain(difference: f64, variance: f64, information: f64) -> f64 {
    let variance = if variance > 0.0 { variance } else { 0.0 };
    let information = if information > 0.0 { information } else { 0.0 };
    let b = (variance * information).sqrt();
    if b.is_nan() || b == 0.0 || difference.is_nan() || difference.is_infinite() {
        return 0.0;
    }
    if variance.is_infinite() {
        // An unknown difference: the order is a coin toss now, settled afterwards.
        return 0.5;
    }
    let h = difference.abs() / variance.sqrt();
    if b.is_infinite() {
        // Infinite information: the misorder probability falls all the way to 0.
        return normal::cdf(-h);
    }
    let h2 = h * h;
    // y from 0 to min(b, 1); beyond 1, y = 1/x, x from 1/b to 1 (the same integrand in
    // Owen's T's own variable). Both integrands are smooth on their intervals.
    let near = simpson(0.0, b.min(1.0), |y| {
        if y == 0.0 {
            // The limit: 1 between equal estimates, 0 otherwise.
            if h2 == 0.0 {
                1.0
            } else {
                0.0
            }
        } else {
            (-h2 * (1.0 + y * y) / (2.0 * y * y)).exp() / (1.0 + y * y)
        }
    });
    let far = if b > 1.0 {
        simpson(1.0 / b, 1.0, |x| {
            (-h2 * (1.0 + x * x) / 2.0).exp() / (1.0 + x * x)
        })
    } else {
        0.0
    };
    ((near + far) / PI).clamp(0.0, 0.5)
}

/// ∫ₐᵇ f by Simpson's rule on 64 intervals.
fn simpson(a: f64, b: f64, f: impl Fn(f64) -> f64) -> f64 {
    const N: usize = 64;
    if b <= a {
        return 0.0;
    }
    let step = (b - a) / N as f64;
    let mut sum = f(a) + f(b);
    for k in 1..N {
        let weight = if k % 2 == 1 { 4.0 } else { 2.0 };
        sum += weight * f(a + step * k as f64);
    }
    sum * step / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normal::cdf;

    /// The definition, by brute force: Φ(−|d|/√V) − E[Φ(−|d'|/√V')], d' ~ N(d, V − V'),
    /// by Simpson's rule on 40,000 intervals over ±10 standard deviations.
    fn by_definition(d: f64, v: f64, i: f64) -> f64 {
        let after = v / (1.0 + v * i);
        let spread = (v - after).sqrt();
        let n = 40_000;
        let (lo, hi) = (-10.0, 10.0);
        let step = (hi - lo) / n as f64;
        let mut sum = 0.0;
        for k in 0..=n {
            let z: f64 = lo + step * k as f64;
            let weight = if k == 0 || k == n {
                1.0
            } else if k % 2 == 1 {
                4.0
            } else {
                2.0
            };
            let density = (-z * z / 2.0).exp() / (2.0 * PI).sqrt();
            sum += weight * density * cdf(-(d + spread * z).abs() / after.sqrt());
        }
        cdf(-d.abs() / v.sqrt()) - sum * step / 3.0
    }

    #[test]
    fn the_gain_is_the_expected_fall_of_the_misorder_probability() {
        // Close and uncertain, settled, lopsided (little information), and a pair known
        // far worse than one set tells (V·I > 1, the far part of the integral).
        for (d, v, i) in [
            (20.0, 3600.0, 2.0 * game_fisher_information(20.0)),
            (-20.0, 3600.0, 2.0 * game_fisher_information(20.0)),
            (60.0, 400.0, 2.0 * game_fisher_information(60.0)),
            (5.0, 100.0, 2.0 * game_fisher_information(5.0)),
            (700.0, 40_000.0, 2.0 * game_fisher_information(700.0)),
            (150.0, 250_000.0, 2.0 * game_fisher_information(150.0)),
        ] {
            let (gain, reference) = (order_gain(d, v, i), by_definition(d, v, i));
            assert!(
                (gain - reference).abs() < 1e-7,
                "d {d} V {v} I {i}: {gain} against {reference}"
            );
        }
    }

    #[test]
    fn equal_estimates_closed_form_and_limits() {
        let i = 2.0 * game_fisher_information(0.0);
        for v in [100.0, 2500.0, 1e6] {
            let closed = (v * i).sqrt().atan() / PI;
            assert!((order_gain(0.0, v, i) - closed).abs() < 1e-9, "V {v}");
        }
        // An unknown pair: the order is a coin toss now, and settled in expectation by
        // any information at all.
        assert_eq!(order_gain(0.0, f64::INFINITY, i), 0.5);
        assert_eq!(order_gain(30.0, f64::INFINITY, i), 0.5);
        assert_eq!(order_gain(30.0, 900.0, f64::INFINITY), cdf(-1.0));
        // No information, no doubt, or nonsense: nothing gained.
        assert_eq!(order_gain(10.0, 400.0, 0.0), 0.0);
        assert_eq!(order_gain(10.0, 0.0, i), 0.0);
        assert_eq!(order_gain(f64::INFINITY, 400.0, i), 0.0);
        assert_eq!(order_gain(f64::NAN, 400.0, i), 0.0);
        assert_eq!(order_gain(10.0, -1.0, i), 0.0);
        assert_eq!(order_gain(10.0, f64::NAN, i), 0.0);
        // More doubt about the order, more gain; a more lopsided game, less.
        assert!(order_gain(10.0, 900.0, i) > order_gain(40.0, 900.0, i));
        assert!(
            order_gain(10.0, 900.0, game_fisher_information(0.0))
                > order_gain(10.0, 900.0, game_fisher_information(600.0))
        );
    }

    #[test]
    fn fisher_information_peaks_between_equals() {
        let c = std::f64::consts::LN_10 / 400.0;
        assert!((game_fisher_information(0.0) - c * c / 4.0).abs() < 1e-20);
        assert_eq!(
            game_fisher_information(100.0),
            game_fisher_information(-100.0)
        );
        assert!(game_fisher_information(800.0) < game_fisher_information(0.0) / 20.0);
    }
}
