//! What the rating fit says of a pair, as the pages show it: the difference with its
//! 95% interval, the likelihood of superiority in per cent, and whether the question
//! is settled (the colour of a cross-table cell).

use std::collections::HashMap;

use league::{HeadToHead, RatingView, RatingsView, Standings};

/// Each pair's results and likelihood of superiority, found by the pair's names: the
/// cross-table's n² cells each looked up in constant time.
pub struct PairIndex<'s> {
    results: HashMap<(&'s str, &'s str), &'s HeadToHead>,
    /// The rating fit's comparison of each pair, by (better-rated, other).
    fit: HashMap<(&'s str, &'s str), (RatingView, f64)>,
}

/// What the rating fit says of one bot against another: the difference of their
/// ratings (the first's less the other's) with its 95% interval, and the likelihood
/// that the first is the stronger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// rating(first) − rating(other), with its interval.
    pub difference: RatingView,
    /// The probability that the first is stronger.
    pub los: f64,
}

impl Comparison {
    /// Settled: the 95% interval of the difference does not hold zero.
    pub fn settled(&self) -> bool {
        self.difference.low > 0.0 || self.difference.high < 0.0
    }
}

impl<'s> PairIndex<'s> {
    /// The index of `st`'s head-to-head results and rating fit.
    pub fn new(st: &'s Standings) -> PairIndex<'s> {
        PairIndex {
            results: st
                .head_to_head
                .iter()
                .map(|h| ((h.a.as_str(), h.b.as_str()), h))
                .collect(),
            fit: st
                .ratings
                .iter()
                .flat_map(|r| &r.pairs)
                .map(|p| ((p.a.as_str(), p.b.as_str()), (p.difference, p.los)))
                .collect(),
        }
    }

    /// `row`'s results against `col`: its points, the opponent's, and its games W-D-L.
    pub fn result(&self, row: &'s str, col: &'s str) -> Option<([u64; 2], league::Record3)> {
        if let Some(h) = self.results.get(&(row, col)) {
            return Some((h.points, h.games));
        }
        let h = self.results.get(&(col, row))?;
        let g = h.games;
        let mine = league::Record3 {
            played: g.played,
            won: g.lost,
            drawn: g.drawn,
            lost: g.won,
        };
        Some(([h.points[1], h.points[0]], mine))
    }

    /// The probability that `row` is stronger than `col`, from the rating fit.
    pub fn los(&self, row: &'s str, col: &'s str) -> Option<f64> {
        self.compare(row, col).map(|c| c.los)
    }

    /// `row` against `col` as the rating fit has it (seen from `row`'s side).
    pub fn compare(&self, row: &'s str, col: &'s str) -> Option<Comparison> {
        if let Some((difference, los)) = self.fit.get(&(row, col)) {
            return Some(Comparison {
                difference: *difference,
                los: *los,
            });
        }
        let (d, los) = self.fit.get(&(col, row))?;
        Some(Comparison {
            difference: RatingView {
                value: -d.value,
                std_error: d.std_error,
                low: -d.high,
                high: -d.low,
            },
            los: 1.0 - los,
        })
    }
}

/// `a` against `b` as the rating fit `ratings` has it, from `a`'s side (a scan of its
/// pairs: for one bot's opponents; the cross-table's n² cells use [`PairIndex`]).
pub fn compare_in(ratings: Option<&RatingsView>, a: &str, b: &str) -> Option<Comparison> {
    ratings?.pairs.iter().find_map(|p| {
        if p.a == a && p.b == b {
            Some(Comparison {
                difference: p.difference,
                los: p.los,
            })
        } else if p.a == b && p.b == a {
            Some(Comparison {
                difference: RatingView {
                    value: -p.difference.value,
                    std_error: p.difference.std_error,
                    low: -p.difference.high,
                    high: -p.difference.low,
                },
                los: 1.0 - p.los,
            })
        } else {
            None
        }
    })
}

/// The colour class of a pair's cell, from the row's side: `pair-stronger` or
/// `pair-weaker` when the 95% interval of the difference leaves out zero (settled),
/// `pair-open` when it holds zero (the question is open, whatever the likelihood),
/// `los-none` without a fit.
pub fn pair_class(c: Option<Comparison>) -> &'static str {
    match c {
        Some(c) if c.los.is_finite() && c.difference.value.is_finite() => {
            if c.difference.low > 0.0 {
                "pair-stronger"
            } else if c.difference.high < 0.0 {
                "pair-weaker"
            } else {
                "pair-open"
            }
        }
        _ => "los-none",
    }
}

/// A likelihood of superiority in whole per cent; never 0 or 100 unless it is exactly
/// that (`< 1%`, `> 99%`).
pub fn percent(p: f64) -> String {
    let r = (p * 100.0).round();
    if r >= 100.0 && p < 1.0 {
        "> 99%".to_string()
    } else if r <= 0.0 && p > 0.0 {
        "< 1%".to_string()
    } else {
        format!("{r:.0}%")
    }
}

/// A rating difference with its sign (`+23`, `−5`, `0`).
pub(super) fn signed(x: f64) -> String {
    let r = x.round();
    if r > 0.0 {
        format!("+{r:.0}")
    } else if r < 0.0 {
        format!("−{:.0}", -r)
    } else {
        "0".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::*;

    /// A pair is settled when its difference's interval leaves out zero, whatever the
    /// likelihood: 0.97 with an interval across zero is open, 0.9 above it settled.
    #[test]
    fn a_pairs_colour_says_whether_it_is_settled() {
        let c = |value: f64, low: f64, high: f64, los: f64| {
            Some(Comparison {
                difference: RatingView {
                    value,
                    std_error: 1.0,
                    low,
                    high,
                },
                los,
            })
        };
        assert_eq!(pair_class(c(60.0, -2.0, 122.0, 0.97)), "pair-open");
        assert_eq!(pair_class(c(20.0, 1.0, 39.0, 0.9)), "pair-stronger");
        assert_eq!(pair_class(c(-20.0, -39.0, -1.0, 0.1)), "pair-weaker");
        assert_eq!(pair_class(c(f64::NAN, 0.0, 0.0, 0.5)), "los-none");
        assert_eq!(pair_class(None), "los-none");
        assert_eq!(percent(0.974), "97%");
        assert_eq!(percent(0.9996), "> 99%");
        assert_eq!(percent(0.0004), "< 1%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.0), "0%");
        // Seen from the other side: the difference and its interval turn round.
        let st = standings();
        let pairs = PairIndex::new(&st);
        let x = pairs.compare("x", "y").expect("a fit");
        assert_eq!(
            (x.difference.value, x.difference.low, x.difference.high),
            (-30.0, -69.0, 9.0)
        );
        assert!((x.los - 0.26).abs() < 1e-12, "{x:?}");
    }
}
