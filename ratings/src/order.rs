//! How much more surely one more set would order two bots: the figure a scheduler ranks
//! pairs by (docs/ratings.md, "How surely two bots are ordered").

use std::f64::consts::PI;
use std::sync::OnceLock;

use crate::fit::{expected_score, C};

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
/// `variance` Elo²: e raised to [`ln_order_gain`], which says how it is computed.
///
/// It is 0 without information or without doubt, and at most ½ (an unknown pair,
/// V = ∞). Once a pair has played a few hundred sets it is e^(−hundreds) or less and
/// is 0.0 in f64 for a pair still in doubt as for a settled one: compare pairs by
/// [`ln_order_gain`], which does not underflow.
pub fn order_gain(difference: f64, variance: f64, information: f64) -> f64 {
    ln_order_gain(difference, variance, information).exp()
}

/// The natural logarithm of [`order_gain`], computed in log space so that it never
/// underflows: −1,637 for a pair 1.88 standard errors apart whose next set adds a
/// thousandth of what is known (V·I = 0.033², where the gain itself, e^−1637, is 0.0 in
/// f64), and −∞ only without information or without doubt.
///
/// With the difference D ~ N(d, V) (the fit's Laplace approximation), the probability
/// that the table orders the two wrongly is min(LOS, 1 − LOS) = Φ(−|d|/√V). After the
/// information I the variance is V' = V/(1 + V·I), and the new estimate d' is spread
/// N(d, V − V') around the old one; the expected probability afterwards is
/// E[Φ(−|d'|/√V')] = 2·T(h, 1/√(V·I)) (Owen's T, h = |d|/√V), so the fall is
///
/// ```text
/// gain = (1/π) ∫₀^√(V·I) exp(−h²(1 + y²)/(2y²)) / (1 + y²) dy
///      = (h/π) · e^(−m/2) · ∫₀^∞ e^(−w) / (√(k + 2w) · (m + 2w)) dw,
///        k = h²/(V·I), m = h² + k
/// ```
///
/// (the second line by y = 1/u, then w = h²(u² − 1/(V·I))/2). Its factor e^(−m/2) is what
/// underflows; it is kept as −m/2, and the integral, a smooth function times e^(−w), is
/// summed in log space (log-sum-exp) by the double-exponential rule w = exp(t − e^(−t)),
/// t from −5 to 5 in steps of 1/32 (Ooura and Mori's rule for integrals that decay
/// like e^(−w)): relative accuracy about 1e−7 or better for every h > 0 and V·I > 0.
/// Between equal estimates (h below 1e−7·min(√(V·I), 1), where the rule loses its accuracy and
/// the gain is within that of its limit) it is ln(arctan(√(V·I))/π).
/// Negative or NaN inputs count as no information or no doubt (−∞); an infinite
/// `difference` as no doubt; an infinite `variance` as an unknown pair (ln ½).
pub fn ln_order_gain(difference: f64, variance: f64, information: f64) -> f64 {
    let variance = if variance > 0.0 { variance } else { 0.0 };
    let information = if information > 0.0 { information } else { 0.0 };
    let b = (variance * information).sqrt();
    if b.is_nan() || b == 0.0 || difference.is_nan() || difference.is_infinite() {
        return f64::NEG_INFINITY;
    }
    if variance.is_infinite() {
        // An unknown difference: the order is a coin toss now, settled afterwards.
        return 0.5f64.ln();
    }
    let h = difference.abs() / variance.sqrt();
    if h < 1e-7 * b.min(1.0) {
        // Equal estimates (with infinite information, ½: the coin toss settled).
        return (b.atan() / PI).ln();
    }
    // k = (h/b)², 0 for infinite information (the gain is then Φ(−h)).
    let k = if b.is_infinite() {
        0.0
    } else {
        (h / b) * (h / b)
    };
    let m = h * h + k;
    (h / PI).ln() - m / 2.0
        + ln_laguerre_integral(|w| -0.5 * (k + 2.0 * w).ln() - (m + 2.0 * w).ln())
}

/// Steps of the double-exponential rule per unit of t.
const STEPS_PER_UNIT: i32 = 32;
/// The rule's t runs from −REACH to REACH.
const REACH: i32 = 5;
/// Its number of nodes.
const NODES: usize = (2 * REACH * STEPS_PER_UNIT + 1) as usize;

/// The rule's nodes, computed once: w = exp(t − e^(−t)) and ln of the weight
/// e^(−w) · dw/dt · step, dw/dt = w (1 + e^(−t)).
fn nodes() -> &'static [(f64, f64); NODES] {
    static TABLE: OnceLock<[(f64, f64); NODES]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let step = 1.0 / f64::from(STEPS_PER_UNIT);
        let mut table = [(0.0, 0.0); NODES];
        for (node, i) in table.iter_mut().zip(-REACH * STEPS_PER_UNIT..) {
            let t = f64::from(i) * step;
            let e = (-t).exp();
            let ln_w = t - e;
            let w = ln_w.exp();
            *node = (w, -w + ln_w + e.ln_1p() + step.ln());
        }
        table
    })
}

/// ln ∫₀^∞ e^(−w) e^(ln_f(w)) dw for a smooth `ln_f`, by the double-exponential rule
/// w = exp(t − e^(−t)), dw = w (1 + e^(−t)) dt, with the trapezoid rule in t on [−5, 5]
/// (w from e^−153 to 148) in steps of 1/32, summed in log space.
fn ln_laguerre_integral(ln_f: impl Fn(f64) -> f64) -> f64 {
    let mut terms = [0.0; NODES];
    let mut top = f64::NEG_INFINITY;
    for (term, &(w, ln_weight)) in terms.iter_mut().zip(nodes()) {
        *term = ln_weight + ln_f(w);
        top = top.max(*term);
    }
    if !top.is_finite() {
        return top;
    }
    top + terms.iter().map(|x| (x - top).exp()).sum::<f64>().ln()
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
        assert!((order_gain(30.0, 900.0, f64::INFINITY) / cdf(-1.0) - 1.0).abs() < 1e-9);
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

    /// ln gain at h = |d|/√V and b = √(V·I) (here V = 1, d = h, I = b²), against the
    /// integral (1/π) ∫ exp(−h²(1 + u²)/2)/(1 + u²) du from 1/b to ∞ by mpmath's quad at
    /// 50 digits (the script is in the commit that added this test: mpmath.quad on
    /// [1/b, ∞) split at 1/b + s·{¼, ½, 1, …, 4096}, s = 1/(h²/b + h + 1)).
    #[test]
    fn the_log_gain_matches_the_integral_far_past_underflow() {
        for (h, b, reference) in [
            // The issue's pair: 1.88 standard errors apart, a set adding 0.033² of V.
            (1.88, 0.033, -1_637.183_414_088_990_8),
            (1.0, 0.1, -58.591_263_384_976_21),
            (0.1, 0.1, -5.024_819_943_858_03),
            (1e-4, 0.5, -1.913_630_695_572_236_5),
            (8.0, 2.0, -44.911_459_281_450_154),
            (40.0, 10.0, -814.285_897_786_351_9),
            (40.0, 100.0, -804.980_995_747_434_5),
            (0.5, 1e12, -1.175_911_761_594_529_1),
            (5.0, 0.01, -125_030.679_228_262_73),
            (1e-3, 1e-3, -9.618_668_792_096_331),
        ] {
            let got = ln_order_gain(h, 1.0, b * b);
            assert!(
                (got - reference).abs() < 1e-9 * reference.abs().max(1.0),
                "h {h} b {b}: {got} against {reference}"
            );
        }
        // Where the gain itself is 0.0, its logarithm still orders the pairs: the pair in
        // doubt far above a settled one (10 standard errors apart) and a lopsided one
        // (the same doubt, a hundredth of the information).
        assert_eq!(order_gain(1.88, 1.0, 0.033 * 0.033), 0.0);
        let doubt = ln_order_gain(1.88, 1.0, 0.033 * 0.033);
        assert!(doubt > ln_order_gain(10.0, 1.0, 0.033 * 0.033) + 1e4);
        assert!(doubt > ln_order_gain(1.88, 1.0, 0.0033 * 0.0033) + 1e5);
        assert_eq!(ln_order_gain(1.88, 1.0, 0.0), f64::NEG_INFINITY);
        assert_eq!(ln_order_gain(f64::INFINITY, 1.0, 1.0), f64::NEG_INFINITY);
        assert_eq!(ln_order_gain(0.0, f64::INFINITY, 1.0), 0.5f64.ln());
    }

    #[test]
    fn the_log_gain_is_continuous_where_equal_estimates_take_over() {
        // At h = 1e−7·b the closed form of equal estimates takes over from the rule.
        for b in [1e-3, 0.1, 1.0, 30.0] {
            let edge = 1e-7 * b;
            let (below, above) = (
                ln_order_gain(edge * 0.999, 1.0, b * b),
                ln_order_gain(edge * 1.001, 1.0, b * b),
            );
            assert!((below - above).abs() < 1e-6, "b {b}: {below} {above}");
        }
        // Infinite information removes all doubt: Φ(−h), even where it underflows.
        assert!((ln_order_gain(3.0, 1.0, f64::INFINITY) - cdf(-3.0).ln()).abs() < 1e-9);
        assert!(ln_order_gain(40.0, 1.0, f64::INFINITY) < -800.0);
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
