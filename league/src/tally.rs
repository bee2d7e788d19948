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
use crate::store::FinishedSet;

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
            tally.sets.add(o.winner.map(|w| w.index() == seat));
            tally.moves += o.moves[seat];
            tally.move_ms += o.move_ms[seat];
        }
        for g in &o.games {
            for (seat, tally) in pair.seats.iter_mut().enumerate() {
                tally.games.add(g.winner.map(|w| w.index() == seat));
            }
            let first = names[g.first.index()];
            let second = names[g.first.other().index()];
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
            let faults = &mut pair.seats[f.bot.index()].faults;
            faults.total += 1;
            *faults.by_kind.entry(f.kind.to_string()).or_insert(0) += 1;
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::Tally;
    use crate::log_place::{LogForm, LogPlace};
    use crate::standings::{LeagueInfo, Standings};
    use crate::store::{BotRow, FaultRow, FinishedSet, GameRow, Progress, SetOutcome};
    use crate::SetKey;
    use referee::{FaultKind, GameEndReason, Side};

    const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];
    const KINDS: [FaultKind; 3] = [FaultKind::TimeOut, FaultKind::Crash, FaultKind::IllegalMove];

    /// A set between two different bots: each game's first mover and result, its
    /// faults, moves and move times.
    fn set() -> impl Strategy<Value = FinishedSet> {
        (
            0..NAMES.len(),
            1..NAMES.len(),
            1u32..4,
            prop::collection::vec((0usize..2, 0usize..3, 0u32..3), 1..4),
            prop::collection::vec((0usize..2, 0..KINDS.len()), 0..3),
            (0u64..200, 0u64..200, 0.0f64..500.0, 0.0f64..500.0),
        )
            .prop_map(|(a, step, round, games, faults, (ma, mb, ta, tb))| {
                let b = (a + step) % NAMES.len();
                let games: Vec<GameRow> = games
                    .iter()
                    .enumerate()
                    .map(|(i, &(first, result, margin))| GameRow {
                        game: i as u32 + 1,
                        first: Side::BOTH[first],
                        winner: Side::from_index(result),
                        points: match result {
                            0 => [1 + margin, 0],
                            1 => [0, 1 + margin],
                            _ => [0, 0],
                        },
                        reason: GameEndReason::NoMoves,
                        plies: 20,
                        double: false,
                        faulted: Vec::new(),
                    })
                    .collect();
                let points = games
                    .iter()
                    .fold([0, 0], |p, g| [p[0] + g.points[0], p[1] + g.points[1]]);
                FinishedSet {
                    key: SetKey {
                        round,
                        a: NAMES[a].into(),
                        b: NAMES[b].into(),
                    },
                    seed: 7,
                    pruned: false,
                    finished: None,
                    outcome: SetOutcome {
                        winner: match points[0].cmp(&points[1]) {
                            std::cmp::Ordering::Greater => Some(Side::A),
                            std::cmp::Ordering::Less => Some(Side::B),
                            std::cmp::Ordering::Equal => None,
                        },
                        points,
                        games,
                        faults: faults
                            .iter()
                            .map(|&(bot, kind)| FaultRow {
                                game: 1,
                                ply: 3,
                                bot: Side::BOTH[bot],
                                kind: KINDS[kind],
                                detail: "x".into(),
                            })
                            .collect(),
                        moves: [ma, mb],
                        move_ms: [ta, tb],
                        log: LogPlace::file("x", LogForm::Plain),
                    },
                }
            })
    }

    fn info() -> LeagueInfo {
        LeagueInfo {
            anchor_rating: 1500.0,
            ..LeagueInfo::default()
        }
    }

    /// The store's bots: every name, `e` removed (its sets still count).
    fn bots() -> Vec<BotRow> {
        NAMES
            .iter()
            .map(|n| BotRow {
                name: n.to_string(),
                command: format!("./{n}"),
                active: *n != "e",
            })
            .collect()
    }

    /// Per bot, the table's counters summed set by set over every set, as a reader of
    /// the sets would count them by hand: (points, sets W-D-L, games W-D-L, faults by
    /// kind, moves, move time).
    type Counters = (u64, [u64; 3], [u64; 3], BTreeMap<String, u64>, u64, f64);

    fn by_hand(sets: &[FinishedSet]) -> (BTreeMap<String, Counters>, u64, [u64; 3]) {
        let mut bots: BTreeMap<String, Counters> = BTreeMap::new();
        let mut games_played = 0;
        let mut first = [0; 3];
        let wdl = |mine: Option<bool>| match mine {
            Some(true) => 0,
            None => 1,
            Some(false) => 2,
        };
        for s in sets {
            let o = &s.outcome;
            for (seat, name) in [&s.key.a, &s.key.b].into_iter().enumerate() {
                let c = bots.entry(name.clone()).or_default();
                c.0 += u64::from(o.points[seat]);
                c.1[wdl(o.winner.map(|w| w.index() == seat))] += 1;
                for g in &o.games {
                    c.2[wdl(g.winner.map(|w| w.index() == seat))] += 1;
                }
                for f in o.faults.iter().filter(|f| f.bot.index() == seat) {
                    *c.3.entry(f.kind.to_string()).or_insert(0) += 1;
                }
                c.4 += o.moves[seat];
                c.5 += o.move_ms[seat];
            }
            for g in &o.games {
                games_played += 1;
                first[match g.winner {
                    Some(w) if w == g.first => 0,
                    None => 1,
                    Some(_) => 2,
                }] += 1;
            }
        }
        (bots, games_played, first)
    }

    fn assert_counts(standings: &Standings, sets: &[FinishedSet]) {
        let (bots, games_played, first) = by_hand(sets);
        assert_eq!(standings.games_played, games_played);
        let fm = standings.first_mover;
        assert_eq!([fm.won, fm.drawn, fm.lost], first);
        for line in &standings.bots {
            let c = bots.get(&line.name).cloned().unwrap_or_default();
            assert_eq!(line.points, c.0, "{}", line.name);
            assert_eq!(
                [line.sets.won, line.sets.drawn, line.sets.lost],
                c.1,
                "{}",
                line.name
            );
            assert_eq!(line.sets.played, c.1.iter().sum::<u64>(), "{}", line.name);
            assert_eq!(
                [line.games.won, line.games.drawn, line.games.lost],
                c.2,
                "{}",
                line.name
            );
            assert_eq!(line.faults.by_kind, c.3, "{}", line.name);
            assert_eq!(
                line.faults.total,
                c.3.values().sum::<u64>(),
                "{}",
                line.name
            );
            assert_eq!(line.moves, c.4, "{}", line.name);
            match line.mean_move_ms {
                None => assert_eq!(c.4, 0),
                Some(ms) => {
                    let want = c.5 / c.4 as f64;
                    assert!((ms - want).abs() <= 1e-9 * want.max(1.0), "{ms} vs {want}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A tally updated set by set, with the standings computed after every set
        /// (each fit started from the one before), agrees with the sets counted by hand
        /// and with a tally of every set at once fitted from a cold start.
        #[test]
        fn incremental_standings_are_the_full_recomputation(sets in prop::collection::vec(set(), 1..40)) {
            let mut live = Tally::new();
            for (i, s) in sets.iter().enumerate() {
                live.add(s);
                let warm = live.standings(info(), Progress::default(), &bots());
                assert_counts(&warm, &sets[..=i]);
                let cold = Tally::of(&sets[..=i]).standings(info(), Progress::default(), &bots());
                prop_assert_eq!(&warm.pairs, &cold.pairs);
                prop_assert_eq!(warm.ratings.is_some(), cold.ratings.is_some());
                let names = |s: &Standings| s.bots.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
                for (w, c) in warm.bots.iter().zip(&cold.bots) {
                    match (w.rating, c.rating) {
                        (Some(w), Some(c)) => {
                            prop_assert!((w.value - c.value).abs() < 1e-6, "{} vs {}", w.value, c.value);
                            prop_assert!((w.std_error - c.std_error).abs() < 1e-6);
                        }
                        (None, None) => {}
                        other => prop_assert!(false, "{other:?}"),
                    }
                }
                // The same order, unless two ratings tie to within the fit's tolerance.
                let close = warm.bots.windows(2).any(|p| match (p[0].rating, p[1].rating) {
                    (Some(x), Some(y)) => (x.value - y.value).abs() < 1e-6,
                    _ => false,
                });
                if !close {
                    prop_assert_eq!(names(&warm), names(&cold));
                }
                prop_assert_eq!(live.sets(), i as u64 + 1);
            }
        }
    }
}
