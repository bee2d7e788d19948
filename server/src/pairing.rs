//! Which set the server plays next.
//!
//! The rule (docs/server.md says it in words, with the floor's figure and why):
//!
//! 1. The candidates are the pairs of bots that may meet (every pair in a round-robin,
//!    challenger against non-challenger in a gauntlet) whose bots are both available
//!    (active, and connected for a remote bot), but for a pair held back for a while
//!    after a set of theirs could not be played.
//! 2. A pair with a set running now is a candidate only when every candidate has one:
//!    the sets running at once spread over the pairs.
//! 3. Until every candidate pair has finished a set, a pair that has none goes first:
//!    every pair gets played.
//! 4. The floor: a bot whose sets fall below [`FLOOR`] of its fair share is served
//!    first. Its fair share is what a plain round robin of the candidate pairs would
//!    give it (the fraction of those pairs it is in: 2/n of the sets among n bots), of
//!    the sets started since its first one; its sets and the sets count the running
//!    ones. Of the bots below the floor the one furthest below goes first, against the
//!    opponent nearest its own floor (the largest deficit, below or not), so that a
//!    set played for the floor lifts two bots towards theirs where it can; among
//!    opponents as near, by rule 5.
//! 5. Then the pair whose order in the table more sets are expected to make most
//!    certain: [`ratings::ln_order_gain`] of the fitted difference r(a) − r(b), its
//!    variance (from the fit's covariance) and the information of as many sets as the
//!    league has finished (at least one), each set games × c² p (1 − p) at the current
//!    ratings (half the games with each bot first). A close pair's games carry the most
//!    information, a pair whose order is in doubt gains the most from it; a lopsided
//!    pair, or one whose order is settled, gains almost nothing. A pair with an
//!    unrated bot counts as infinitely uncertain. In log space, and over the sets to
//!    come rather than one: one set's gain is e^(−h²/2b²)-small once a pair has played
//!    a few hundred sets (h its separation in standard errors, b² the share of what is
//!    known that one set adds), 0.0 in f64 for every pair, and the rule went flat.
//! 6. Ties go to the pair in more doubt (the fewer standard errors apart,
//!    [`PairingInput::separation`]), then to the names' order.
//!
//! Seats alternate like the league's schedule: the pair's `n`-th set is round `n`, and
//! in odd rounds the alphabetically first bot (in a gauntlet, the challenger) is bot A.
//!
//! The inputs are aggregates (counts per pair and per bot, the fit's differences), so
//! a choice costs O(bots²) whatever the league's length.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use league::{Format, SetKey};

/// The floor of rule 4: every available bot plays at least this fraction of the sets a
/// plain round robin would give it.
pub const FLOOR: f64 = 0.5;

/// Two bots, the alphabetically first first.
pub type Pair = (String, String);

/// The fitted rating difference of a pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    /// r(first of the pair) − r(second), in Elo.
    pub value: f64,
    /// Its variance, in Elo², from the fit's covariance.
    pub variance: f64,
}

/// What the rule looks at.
#[derive(Debug, Default)]
pub struct PairingInput<'a> {
    /// Bots that may play now.
    pub available: Vec<&'a str>,
    /// Finished sets per pair (every pair that ever played, available or not).
    pub finished: BTreeMap<Pair, u64>,
    /// Sets running per pair.
    pub running: BTreeMap<Pair, u64>,
    /// The fitted difference per pair of rated bots.
    pub ratings: BTreeMap<Pair, Difference>,
    /// The fitted first-move advantage, in Elo.
    pub advantage: f64,
    /// Games per set.
    pub games: u32,
    /// The highest round of every set the store holds for the pair, whatever its status.
    pub rounds: BTreeMap<Pair, u32>,
    /// Pairs held back for now (their last set could not be played).
    pub held: BTreeSet<Pair>,
    /// Per bot, the finished sets there were before its first set (absent: 0): its
    /// share counts the sets since.
    pub joined: BTreeMap<String, u64>,
}

impl PairingInput<'_> {
    /// Fills `ratings` and `advantage` from the standings' rating fit.
    pub fn set_ratings(&mut self, view: &league::RatingsView) {
        self.advantage = view.first_move_advantage.value;
        for p in &view.pairs {
            let key = pair(&p.a, &p.b);
            // `a` is the better-rated bot: the pair's first bot's difference is + when
            // it is `a`.
            let sign = if key.0 == p.a { 1.0 } else { -1.0 };
            self.ratings.insert(
                key,
                Difference {
                    value: sign * p.difference.value,
                    variance: p.difference.std_error * p.difference.std_error,
                },
            );
        }
    }

    /// Rule 5's figure for a pair: the logarithm of how much more surely as many more
    /// sets as the league has finished would order it, [`ratings::ln_order_gain`] (+∞
    /// for a pair with an unrated bot). In log space because the gain itself is 0.0 in
    /// f64 for every pair once they have played a few hundred sets.
    pub fn gain(&self, p: &Pair) -> f64 {
        let Some(d) = self.ratings.get(p) else {
            return f64::INFINITY;
        };
        // Each bot moves first in half the games, on average.
        let per_game = (ratings::game_fisher_information(d.value + self.advantage)
            + ratings::game_fisher_information(d.value - self.advantage))
            / 2.0;
        let sets = self.finished.values().sum::<u64>().max(1) as f64;
        ratings::ln_order_gain(d.value, d.variance, sets * f64::from(self.games) * per_game)
    }

    /// Rule 6's figure for a pair: how many standard errors apart the fit puts the two,
    /// |r(a) − r(b)|/σ (0 for a pair with an unrated bot): the fewer, the more the order
    /// is in doubt (the probability that it is wrong is Φ(−this)).
    pub fn separation(&self, p: &Pair) -> f64 {
        match self.ratings.get(p) {
            Some(d) if d.variance > 0.0 => d.value.abs() / d.variance.sqrt(),
            Some(d) if d.value != 0.0 => f64::INFINITY,
            _ => 0.0,
        }
    }
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

/// A bot's standing against the floor of rule 4.
#[derive(Clone, Debug, PartialEq)]
pub struct Share {
    /// The bot.
    pub bot: String,
    /// Its sets, finished and running.
    pub sets: u64,
    /// The sets, finished and running, since its first one.
    pub window: u64,
    /// Its fair share: the fraction of the candidate pairs it is in.
    pub fair: f64,
}

impl Share {
    /// The floor in sets: [`FLOOR`] × fair share × window.
    pub fn floor(&self) -> f64 {
        FLOOR * self.fair * self.window as f64
    }

    /// How many sets it is below the floor (negative: above).
    pub fn deficit(&self) -> f64 {
        self.floor() - self.sets as f64
    }
}

/// Every available bot's share (rule 4), in the names' order. The fair shares count
/// the candidate pairs among the available bots, held ones included.
pub fn shares(format: &Format, input: &PairingInput<'_>) -> Vec<Share> {
    let pairs = candidates(format, &input.available);
    let mut total = 0;
    let mut sets: BTreeMap<&str, u64> = BTreeMap::new();
    for (p, n) in input.finished.iter().chain(&input.running) {
        total += n;
        *sets.entry(&p.0).or_insert(0) += n;
        *sets.entry(&p.1).or_insert(0) += n;
    }
    let names: BTreeSet<&str> = input.available.iter().copied().collect();
    names
        .into_iter()
        .map(|bot| {
            let degree = pairs.iter().filter(|p| p.0 == bot || p.1 == bot).count();
            let joined = input.joined.get(bot).copied().unwrap_or(0);
            Share {
                bot: bot.to_string(),
                sets: sets.get(bot).copied().unwrap_or(0),
                window: total.saturating_sub(joined),
                fair: if pairs.is_empty() {
                    0.0
                } else {
                    degree as f64 / pairs.len() as f64
                },
            }
        })
        .collect()
}

/// The next set to play by the rule above, or `None` when no pair can play.
pub fn choose(format: &Format, input: &PairingInput<'_>) -> Option<SetKey> {
    let mut all = candidates(format, &input.available);
    all.retain(|p| !input.held.contains(p));
    let idle: Vec<&Pair> = all
        .iter()
        .filter(|p| input.running.get(*p).copied().unwrap_or(0) == 0)
        .collect();
    let mut pool: Vec<&Pair> = if idle.is_empty() {
        all.iter().collect()
    } else {
        idle
    };
    let finished = |p: &Pair| input.finished.get(p).copied().unwrap_or(0);
    if pool.iter().any(|p| finished(p) == 0) {
        pool.retain(|p| finished(p) == 0);
    } else {
        // The floor: the bot furthest below it (of those the pool can serve) first,
        // against the opponent nearest its own floor.
        let all_shares = shares(format, input);
        let deficit: BTreeMap<&str, f64> = all_shares
            .iter()
            .map(|s| (s.bot.as_str(), s.deficit()))
            .collect();
        let mut below: Vec<&Share> = all_shares.iter().filter(|s| s.deficit() > 0.0).collect();
        below.sort_by(|x, y| y.deficit().total_cmp(&x.deficit()).then(x.bot.cmp(&y.bot)));
        if let Some(s) = below
            .iter()
            .find(|s| pool.iter().any(|p| p.0 == s.bot || p.1 == s.bot))
        {
            pool.retain(|p| p.0 == s.bot || p.1 == s.bot);
            let opponent = |p: &Pair| {
                let other = if p.0 == s.bot { &p.1 } else { &p.0 };
                deficit
                    .get(other.as_str())
                    .copied()
                    .unwrap_or(f64::NEG_INFINITY)
            };
            let nearest = pool
                .iter()
                .map(|p| opponent(p))
                .fold(f64::NEG_INFINITY, f64::max);
            pool.retain(|p| opponent(p) == nearest);
        }
    }
    let best = pool
        .into_iter()
        .map(|p| (p, input.gain(p), input.separation(p)))
        .min_by(|(p, gp, sp), (q, gq, sq)| {
            gq.partial_cmp(gp)
                .unwrap_or(Ordering::Equal)
                .then(sp.partial_cmp(sq).unwrap_or(Ordering::Equal))
                .then(p.cmp(q))
        })?
        .0;
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
mod simulation;

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

    fn known(value: f64, variance: f64) -> Difference {
        Difference { value, variance }
    }

    #[test]
    fn unplayed_pairs_first_in_names_order() {
        let mut input = PairingInput {
            available: vec!["c", "a", "b"],
            games: 2,
            ..Default::default()
        };
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(1, "a", "b")));
        input.finished.insert(pair("a", "b"), 1);
        input.rounds.insert(pair("a", "b"), 1);
        // Even with a pair in doubt, an unplayed pair goes first.
        input.ratings.insert(pair("a", "b"), known(0.0, 1e9));
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(1, "a", "c")));
    }

    #[test]
    fn then_the_pair_whose_order_is_most_in_doubt_with_seats_alternating() {
        let mut input = PairingInput {
            available: vec!["a", "b", "c"],
            games: 2,
            advantage: 30.0,
            ..Default::default()
        };
        // a-b settled (10 standard errors apart), a-c a coin toss, b-c in some doubt.
        for (p, d) in [
            (("a", "b"), known(300.0, 900.0)),
            (("a", "c"), known(-10.0, 2500.0)),
            (("b", "c"), known(50.0, 1600.0)),
        ] {
            input.finished.insert(pair(p.0, p.1), 3);
            input.rounds.insert(pair(p.0, p.1), 3);
            input.ratings.insert(pair(p.0, p.1), d);
        }
        let gain = |x: &str, y: &str| input.gain(&pair(x, y));
        assert!(gain("a", "c") > gain("b", "c") && gain("b", "c") > gain("a", "b"));
        // Round 4 of a-c: even, so c sits as A.
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(4, "c", "a")));
        // A running a-c set sends the next one to the next most doubtful pair.
        input.running.insert(pair("a", "c"), 1);
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(4, "c", "b")));
        // Every pair running: the most doubtful again.
        input.running.insert(pair("b", "c"), 1);
        input.running.insert(pair("a", "b"), 1);
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(4, "c", "a")));
    }

    #[test]
    fn a_lopsided_pair_gains_little_however_uncertain() {
        let mut input = PairingInput {
            available: vec!["a", "b", "c"],
            games: 2,
            ..Default::default()
        };
        // a beat everyone: its difference is large and uncertain (what the fit makes of
        // a perfect score); b-c is close and much better known.
        input
            .ratings
            .insert(pair("a", "b"), known(900.0, 250_000.0));
        input
            .ratings
            .insert(pair("a", "c"), known(950.0, 250_000.0));
        input.ratings.insert(pair("b", "c"), known(20.0, 900.0));
        for p in [("a", "b"), ("a", "c"), ("b", "c")] {
            input.finished.insert(pair(p.0, p.1), 4);
            input.rounds.insert(pair(p.0, p.1), 4);
        }
        assert!(input.gain(&pair("b", "c")) > 10.0 * input.gain(&pair("a", "b")));
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(5, "b", "c")));
    }

    #[test]
    fn a_bot_below_the_floor_is_served_first_against_the_opponent_nearest_its_floor() {
        let mut input = PairingInput {
            available: vec!["a", "b", "c", "d"],
            games: 2,
            ..Default::default()
        };
        // 24 sets; the fair share of each of 4 bots is 1/2, the floor 1/4: 6 sets. d has
        // played 5 (below), c 6 (at the floor, not below).
        for (p, n, d) in [
            (("a", "b"), 14, known(10.0, 400.0)),
            (("a", "c"), 3, known(300.0, 900.0)),
            (("a", "d"), 2, known(400.0, 1600.0)),
            (("b", "c"), 2, known(280.0, 900.0)),
            (("b", "d"), 2, known(380.0, 1600.0)),
            (("c", "d"), 1, known(100.0, 1600.0)),
        ] {
            input.finished.insert(pair(p.0, p.1), n);
            input.rounds.insert(pair(p.0, p.1), n as u32);
            input.ratings.insert(pair(p.0, p.1), d);
        }
        let floor: BTreeMap<String, (u64, f64)> = shares(&Format::RoundRobin, &input)
            .into_iter()
            .map(|s| (s.bot.clone(), (s.sets, s.deficit())))
            .collect();
        assert_eq!(floor["d"], (5, 1.0));
        assert_eq!(floor["c"], (6, 0.0));
        // Without the floor, a-b (most in doubt); with it, d against c (its opponent
        // nearest its own floor).
        assert!(input.gain(&pair("a", "b")) > input.gain(&pair("c", "d")));
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(2, "d", "c")));
        // Even when d's order against a is far more in doubt: c is the opponent nearest
        // its floor, and the set lifts two bots towards their floors, not one.
        input.ratings.insert(pair("a", "d"), known(5.0, 1600.0));
        assert!(input.gain(&pair("a", "d")) > input.gain(&pair("c", "d")));
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(2, "d", "c")));
        input.ratings.insert(pair("a", "d"), known(400.0, 1600.0));
        // d counts from its first set: joined after 8 sets, its window is 16 sets, its
        // floor 4, and it is above it.
        input.joined.insert("d".into(), 8);
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(15, "a", "b")));
    }

    /// Issue 34's dashboard: after thousands of sets the one-set gain of every pair is
    /// 0.0 in f64, and the chooser went round the pairs in turn. In log space, and over
    /// as many sets as were played, the pair in doubt goes first.
    #[test]
    fn a_pair_in_doubt_goes_first_where_one_sets_gain_underflows() {
        let mut input = PairingInput {
            available: vec!["a", "b", "c"],
            games: 2,
            ..Default::default()
        };
        // a-b 1.88 standard errors apart after 3,000 sets; a-c and b-c settled, and c
        // above its floor (1,600 sets of 4,600; the floor is a third).
        for (p, n, d) in [
            (("a", "b"), 3000, known(7.5, 16.0)),
            (("a", "c"), 800, known(300.0, 100.0)),
            (("b", "c"), 800, known(292.5, 100.0)),
        ] {
            input.finished.insert(pair(p.0, p.1), n);
            input.rounds.insert(pair(p.0, p.1), n as u32);
            input.ratings.insert(pair(p.0, p.1), d);
        }
        let one_set = 2.0 * ratings::game_fisher_information(7.5);
        assert_eq!(ratings::order_gain(7.5, 16.0, one_set), 0.0);
        // The horizon: as many sets as the league has played (4,600).
        let gain = input.gain(&pair("a", "b"));
        assert!((gain - ratings::ln_order_gain(7.5, 16.0, 4600.0 * one_set)).abs() < 1e-12);
        assert!(gain > input.gain(&pair("a", "c")) + 100.0);
        assert_eq!(
            choose(&Format::RoundRobin, &input),
            Some(key(3001, "a", "b"))
        );
    }

    #[test]
    fn equal_gains_go_to_the_pair_in_more_doubt_then_to_the_names_order() {
        // Sets of no games add no information: every pair gains nothing (−∞), and the
        // pair the fewest standard errors apart goes first, whatever its sets.
        let mut input = PairingInput {
            available: vec!["a", "b", "c"],
            games: 0,
            ..Default::default()
        };
        for (p, n, d) in [
            (("a", "b"), 5, known(10.0, 100.0)),
            (("a", "c"), 2, known(-30.0, 100.0)),
            (("b", "c"), 9, known(5.0, 100.0)),
        ] {
            input.finished.insert(pair(p.0, p.1), n);
            input.rounds.insert(pair(p.0, p.1), n as u32);
            input.ratings.insert(pair(p.0, p.1), d);
        }
        assert_eq!(input.gain(&pair("a", "c")), f64::NEG_INFINITY);
        assert_eq!(input.separation(&pair("a", "c")), 3.0);
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(10, "c", "b")));
        // Equal in doubt too: the names' order, not the fewer sets (a-c).
        for p in [("a", "b"), ("a", "c"), ("b", "c")] {
            input.ratings.insert(pair(p.0, p.1), known(0.0, 100.0));
        }
        assert_eq!(choose(&Format::RoundRobin, &input), Some(key(6, "b", "a")));
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
