//! The league's results in aggregate: per seated pair of bots, each seat's counters
//! (points, sets and games won, drawn and lost, faults by kind, moves and their time),
//! and per ordered pair of first and second mover the games' results (what the rating
//! fit takes). A [`Tally`] is updated set by set as results arrive ([`Tally::add`]), so
//! a server's standings cost the same after a million sets as after ten: its size
//! grows with the number of bots and pairs, never with the number of sets. The
//! standings are computed from it alone ([`Tally::standings`]), and the rating fit
//! starts from the last one ([`ratings::Ratings::fit_from`]).
//!
//! [`crate::compute_standings`] is a tally of every set, then its standings: one code
//! path for `hus standings`, `hus league` and the server.

use std::collections::BTreeMap;

use crate::standings::{Faults, PairCounts, Record3};
use crate::store::{seat_side, FinishedSet};

/// What the bot in one seat of a seated pair did, over the pair's sets.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SeatTally {
    pub points: u64,
    pub sets: Record3,
    pub games: Record3,
    pub faults: Faults,
    pub moves: u64,
    pub move_ms: f64,
}

/// The sets of one seated pair (A, B).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct PairTally {
    /// A's figures, then B's.
    pub seats: [SeatTally; 2],
    /// Sets finished.
    pub sets: u64,
    /// The highest round among them.
    pub max_round: u32,
}

/// The finished sets of a league, in aggregate.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// By seated pair (A, B).
    pub(crate) seated: BTreeMap<(String, String), PairTally>,
    /// By ordered pair (first mover, second mover).
    pub(crate) movers: BTreeMap<(String, String), PairCounts>,
    /// Per bot, how many sets had finished before its first one: the order in which
    /// bots joined.
    joined: BTreeMap<String, u64>,
    /// Sets added.
    sets: u64,
    /// The last rating fit, with the bots it rated in order: the start of the next.
    pub(crate) last_fit: Option<(Vec<String>, ratings::Ratings)>,
}

impl Tally {
    /// An empty tally.
    pub fn new() -> Tally {
        Tally::default()
    }

    /// A tally of these sets, in order.
    pub fn of<'a>(sets: impl IntoIterator<Item = &'a FinishedSet>) -> Tally {
        let mut tally = Tally::new();
        for set in sets {
            tally.add(set);
        }
        tally
    }

    /// Counts one more finished set.
    pub fn add(&mut self, set: &FinishedSet) {
        let names = [set.key.a.as_str(), set.key.b.as_str()];
        for name in names {
            if !self.joined.contains_key(name) {
                self.joined.insert(name.to_string(), self.sets);
            }
        }
        self.sets += 1;
        let o = &set.outcome;
        let pair = self
            .seated
            .entry((set.key.a.clone(), set.key.b.clone()))
            .or_default();
        pair.sets += 1;
        pair.max_round = pair.max_round.max(set.key.round);
        for (seat, tally) in pair.seats.iter_mut().enumerate() {
            tally.points += u64::from(o.points[seat]);
            tally.sets.add(o.winner.map(|w| usize::from(w) == seat));
            tally.moves += o.moves[seat];
            tally.move_ms += o.move_ms[seat];
        }
        for g in &o.games {
            for (seat, tally) in pair.seats.iter_mut().enumerate() {
                tally.games.add(g.winner.map(|w| usize::from(w) == seat));
            }
            let first = names[seat_side(g.first).index()];
            let second = names[seat_side(g.first).other().index()];
            let movers = self
                .movers
                .entry((first.to_string(), second.to_string()))
                .or_insert_with(|| PairCounts {
                    first: first.to_string(),
                    second: second.to_string(),
                    ..PairCounts::default()
                });
            match g.winner {
                None => movers.drawn += 1,
                Some(w) if w == g.first => movers.first_won += 1,
                Some(_) => movers.second_won += 1,
            }
        }
        for f in &o.faults {
            let faults = &mut pair.seats[seat_side(f.bot).index()].faults;
            faults.total += 1;
            *faults.by_kind.entry(f.kind.clone()).or_insert(0) += 1;
        }
    }

    /// Sets added.
    pub fn sets(&self) -> u64 {
        self.sets
    }

    /// Per seated pair (A, B): its sets finished and their highest round.
    pub fn seated_pairs(&self) -> impl Iterator<Item = (&str, &str, u64, u32)> {
        self.seated
            .iter()
            .map(|((a, b), p)| (a.as_str(), b.as_str(), p.sets, p.max_round))
    }

    /// Per bot, how many sets had finished before its first one.
    pub fn joined(&self) -> &BTreeMap<String, u64> {
        &self.joined
    }

    /// Per ordered pair (first mover, second mover), the games' results, sorted by
    /// names: what the rating fit takes.
    pub fn pair_counts(&self) -> Vec<PairCounts> {
        self.movers.values().cloned().collect()
    }
}
