//! Which set the server plays next.
//!
//! The rule (docs/server.md says it in words):
//!
//! 1. The candidates are the pairs of bots that may meet (every pair in a round-robin,
//!    challenger against non-challenger in a gauntlet) whose bots are both available
//!    (active, and connected for a remote bot), but for a pair held back for a while
//!    after a set of theirs could not be played.
//! 2. A pair with a set running now is a candidate only when every candidate has one:
//!    the sets running at once spread over the pairs.
//! 3. Until every candidate pair has finished a set, a pair that has none goes first:
//!    every pair gets played.
//! 4. Then the pair whose rating difference is least certain: the largest variance of
//!    r(a) − r(b) from the rating fit's covariance (a pair with an unrated bot counts as
//!    infinitely uncertain). One more set between them shrinks the uncertainty of the
//!    standings where it is largest.
//! 5. Ties go to the pair with fewer finished sets, then to the names' order.
//!
//! Seats alternate like the league's schedule: the pair's `n`-th set is round `n`, and
//! in odd rounds the alphabetically first bot (in a gauntlet, the challenger) is bot A.

use std::collections::{BTreeMap, BTreeSet};

use league::{Format, SetKey};

/// Two bots, the alphabetically first first.
pub type Pair = (String, String);

/// What the rule looks at.
#[derive(Debug, Default)]
pub struct PairingInput<'a> {
    /// Bots that may play now.
    pub available: Vec<&'a str>,
    /// Finished sets per pair.
    pub finished: BTreeMap<Pair, u64>,
    /// Sets running per pair.
    pub running: BTreeMap<Pair, u64>,
    /// The variance of the rating difference per pair of rated bots, in Elo².
    pub variance: BTreeMap<Pair, f64>,
    /// The highest round of every set the store holds for the pair, whatever its status.
    pub rounds: BTreeMap<Pair, u32>,
    /// Pairs held back for now (their last set could not be played).
    pub held: BTreeSet<Pair>,
}

/// The unordered pair of two names.
pub fn pair(x: &str, y: &str) -> Pair {
    if x <= y {
        (x.to_string(), y.to_string())
    } else {
        (y.to_string(), x.to_string())
    }
}

/// The candidate pairs of a format among the available bots.
fn candidates(format: &Format, available: &[&str]) -> Vec<Pair> {
    let names: BTreeSet<&str> = available.iter().copied().collect();
    let names: Vec<&str> = names.into_iter().collect();
    let mut out = Vec::new();
    for (i, x) in names.iter().enumerate() {
        for y in &names[i + 1..] {
            let allowed = match format {
                Format::RoundRobin => true,
                Format::Gauntlet { challengers } => {
                    challengers.iter().any(|c| c == x) != challengers.iter().any(|c| c == y)
                }
            };
            if allowed {
                out.push(pair(x, y));
            }
        }
    }
    out
}

/// The next set to play by the rule above, or `None` when no pair can play.
pub fn choose(format: &Format, input: &PairingInput<'_>) -> Option<SetKey> {
    let mut all = candidates(format, &input.available);
    all.retain(|p| !input.held.contains(p));
    let idle: Vec<&Pair> = all
        .iter()
        .filter(|p| input.running.get(*p).copied().unwrap_or(0) == 0)
        .collect();
    let pool: Vec<&Pair> = if idle.is_empty() {
        all.iter().collect()
    } else {
        idle
    };
    let finished = |p: &Pair| input.finished.get(p).copied().unwrap_or(0);
    let variance = |p: &Pair| input.variance.get(p).copied().unwrap_or(f64::INFINITY);
    let unplayed = pool.iter().any(|p| finished(p) == 0);
    let best = pool
        .into_iter()
        .filter(|p| !unplayed || finished(p) == 0)
        .min_by(|p, q| {
            variance(q)
                .partial_cmp(&variance(p))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(finished(p).cmp(&finished(q)))
                .then(p.cmp(q))
        })?;
    let round = input.rounds.get(best).copied().unwrap_or(0) + 1;
    let first_is_lo = match format {
        Format::RoundRobin => true,
        Format::Gauntlet { challengers } => challengers.contains(&best.0),
    };
    let (first, second) = if first_is_lo {
        (&best.0, &best.1)
    } else {
        (&best.1, &best.0)
    };
    let (a, b) = if round % 2 == 1 {
        (first, second)
    } else {
        (second, first)
    };
    Some(SetKey {
        round,
        a: a.clone(),
        b: b.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(round: u32, a: &str, b: &str) -> SetKey {
        SetKey {
            round,
            a: a.into(),
            b: b.into(),
        }
    }

    #[test]
    fn unplayed_pairs_first_in_names_order() {
        let mut input = PairingInput {
            available: vec!["c", "a", "b"],
            ..Default::default()
        };
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(1, "a", "b")));
        input.finished.insert(pair("a", "b"), 1);
        input.rounds.insert(pair("a", "b"), 1);
        // Even with a variance known for every played pair, an unplayed pair goes first.
        input.variance.insert(pair("a", "b"), 1e9);
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(1, "a", "c")));
    }

    #[test]
    fn then_the_least_certain_difference_with_seats_alternating() {
        let mut input = PairingInput {
            available: vec!["a", "b", "c"],
            ..Default::default()
        };
        for (p, v) in [
            (("a", "b"), 900.0),
            (("a", "c"), 2500.0),
            (("b", "c"), 1600.0),
        ] {
            input.finished.insert(pair(p.0, p.1), 3);
            input.rounds.insert(pair(p.0, p.1), 3);
            input.variance.insert(pair(p.0, p.1), v);
        }
        // Round 4 of a-c: even, so c sits as A.
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(4, "c", "a")));
        // A running a-c set sends the next one to the next least certain pair.
        input.running.insert(pair("a", "c"), 1);
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(4, "c", "b")));
        // Every pair running: the least certain again.
        input.running.insert(pair("b", "c"), 1);
        input.running.insert(pair("a", "b"), 1);
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(4, "c", "a")));
    }

    #[test]
    fn equal_variances_go_to_fewer_sets() {
        let mut input = PairingInput {
            available: vec!["a", "b", "c"],
            ..Default::default()
        };
        for (p, n) in [(("a", "b"), 5), (("a", "c"), 2), (("b", "c"), 4)] {
            input.finished.insert(pair(p.0, p.1), n);
            input.rounds.insert(pair(p.0, p.1), n as u32);
            input.variance.insert(pair(p.0, p.1), 100.0);
        }
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(3, "a", "c")));
    }

    #[test]
    fn gauntlet_pairs_only_challengers_with_others_challenger_first() {
        let format = Format::Gauntlet {
            challengers: vec!["z".into()],
        };
        let input = PairingInput {
            available: vec!["a", "b", "z"],
            ..Default::default()
        };
        assert_eq!(choose(&format, &input), Some(key(1, "z", "a")));
        let input = PairingInput {
            available: vec!["a", "b"],
            ..Default::default()
        };
        assert_eq!(choose(&format, &input), None);
    }

    #[test]
    fn held_pairs_wait() {
        let mut input = PairingInput {
            available: vec!["a", "b", "c"],
            ..Default::default()
        };
        input.held.insert(pair("a", "b"));
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(1, "a", "c")));
        input.held.insert(pair("a", "c"));
        input.held.insert(pair("b", "c"));
        assert_eq!(choose(&Format::RoundRobin, &input), None);
    }

    #[test]
    fn one_bot_alone_plays_nothing() {
        let input = PairingInput {
            available: vec!["a"],
            ..Default::default()
        };
        assert_eq!(choose(&Format::RoundRobin, &input), None);
    }
}
