//! The schedule: which sets a league plays, from its file and seed alone.
//!
//! A set is known by its [`SetKey`]: the round and the two bots' names in their seats.
//! Its seed is a hash of the league's seed and that key, so adding or removing a bot
//! changes no other set's seats, seed or result. Seats do not depend on the order of
//! the bots in the file either: in odd rounds the alphabetically first name of a pair
//! is bot A, in even rounds bot B (in a gauntlet, the challenger is A in odd rounds).

use std::hash::Hasher;

use siphasher::sip::SipHasher13;

use crate::file::Format;

/// Fixed SipHash keys: a set's seed must be the same with every build of `hus`, which
/// `std`'s `DefaultHasher` does not promise.
const SEED_KEYS: (u64, u64) = (0x6875_735f_6c65_6167, 0x7565_5f73_6565_6473);

/// The identity of a set: independent of every other bot in the league.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SetKey {
    /// Rounds count from 1.
    pub round: u32,
    /// Bot A's name (the first bot of the set's log).
    pub a: String,
    /// Bot B's name.
    pub b: String,
}

impl SetKey {
    /// `r2-alpha-vs-greedy`: the stem of the set's log file.
    pub fn stem(&self) -> String {
        format!("r{}-{}-vs-{}", self.round, self.a, self.b)
    }

    /// Every key whose stem is `stem` (more than one when a bot's name holds `-vs-`;
    /// none for what no key writes), in order of the split.
    pub fn from_stem(stem: &str) -> Vec<SetKey> {
        let Some((round, pair)) = stem.strip_prefix('r').and_then(|r| r.split_once('-')) else {
            return Vec::new();
        };
        let Ok(round) = round.parse::<u32>() else {
            return Vec::new();
        };
        if round.to_string() != round_text(stem) {
            return Vec::new();
        }
        pair.match_indices("-vs-")
            .map(|(i, _)| SetKey {
                round,
                a: pair[..i].to_string(),
                b: pair[i + 4..].to_string(),
            })
            .filter(|k| !k.a.is_empty() && !k.b.is_empty())
            .collect()
    }
}

/// The digits of a stem's round, as written (`r007-...` is no stem: `stem` writes no
/// leading zeros).
fn round_text(stem: &str) -> &str {
    let digits = &stem[1..];
    &digits[..digits.find('-').unwrap_or(digits.len())]
}

impl std::fmt::Display for SetKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "round {}, {} vs {}", self.round, self.a, self.b)
    }
}

/// A set of the schedule: its key and its seed (the lots of its games).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedSet {
    /// Who plays, in which seats, in which round.
    pub key: SetKey,
    /// The set's seed, derived from the league's seed and the key.
    pub seed: u64,
}

/// The seed of one set: SipHash-1-3 with fixed keys over the league's seed, the round
/// and both names (each name preceded by its length, so no two keys hash the same
/// bytes). Shifted to 63 bits so it is also a non-negative SQL integer.
pub fn set_seed(league_seed: u64, key: &SetKey) -> u64 {
    let mut h = SipHasher13::new_with_keys(SEED_KEYS.0, SEED_KEYS.1);
    h.write_u64(league_seed);
    h.write_u32(key.round);
    for name in [&key.a, &key.b] {
        h.write_u64(name.len() as u64);
        h.write(name.as_bytes());
    }
    h.finish() >> 1
}

/// Every set of the league, round by round. `bots` are the names in the file's order
/// (the order only orders the list; it changes no set).
pub fn schedule(bots: &[String], format: &Format, rounds: u32, seed: u64) -> Vec<PlannedSet> {
    let mut sets = Vec::new();
    for round in 1..=rounds {
        let mut add = |first: &str, second: &str| {
            let (a, b) = if round % 2 == 1 {
                (first, second)
            } else {
                (second, first)
            };
            let key = SetKey {
                round,
                a: a.to_string(),
                b: b.to_string(),
            };
            let seed = set_seed(seed, &key);
            sets.push(PlannedSet { key, seed });
        };
        match format {
            Format::RoundRobin => {
                for (i, x) in bots.iter().enumerate() {
                    for y in &bots[i + 1..] {
                        let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
                        add(lo, hi);
                    }
                }
            }
            Format::Gauntlet { challengers } => {
                for c in challengers {
                    for o in bots.iter().filter(|o| !challengers.contains(o)) {
                        add(c, o);
                    }
                }
            }
        }
    }
    sets
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_stem_gives_back_its_keys() {
        let key = |round, a: &str, b: &str| SetKey {
            round,
            a: a.into(),
            b: b.into(),
        };
        assert_eq!(
            SetKey::from_stem("r12-alpha-vs-greedy"),
            [key(12, "alpha", "greedy")]
        );
        // A name with "-vs-" in it: each split is a candidate.
        assert_eq!(
            SetKey::from_stem("r1-a-vs-b-vs-c"),
            [key(1, "a", "b-vs-c"), key(1, "a-vs-b", "c")]
        );
        for k in [key(3, "x", "y"), key(1, "a-vs-b", "c")] {
            assert!(SetKey::from_stem(&k.stem()).contains(&k));
        }
        for bad in [
            "",
            "r",
            "r1",
            "r1-",
            "r1-a-vs-",
            "rx-a-vs-b",
            "r01-a-vs-b",
            "1-a-vs-b",
            "r1-a-b",
            "r-1-a-vs-b",
            "r99999999999-a-vs-b",
        ] {
            assert!(SetKey::from_stem(bad).is_empty(), "{bad}");
        }
    }

    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn keys(sets: &[PlannedSet]) -> Vec<String> {
        sets.iter().map(|s| s.key.stem()).collect()
    }

    #[test]
    fn round_robin_meets_every_pair_once_per_round_with_seats_alternating() {
        let sets = schedule(&names(&["c", "a", "b"]), &Format::RoundRobin, 2, 1);
        assert_eq!(
            keys(&sets),
            [
                "r1-a-vs-c",
                "r1-b-vs-c",
                "r1-a-vs-b",
                "r2-c-vs-a",
                "r2-c-vs-b",
                "r2-b-vs-a"
            ]
        );
    }

    #[test]
    fn gauntlet_plays_challengers_against_the_rest_only() {
        let format = Format::Gauntlet {
            challengers: names(&["new", "newer"]),
        };
        let sets = schedule(&names(&["old", "new", "base", "newer"]), &format, 2, 1);
        assert_eq!(
            keys(&sets),
            [
                "r1-new-vs-old",
                "r1-new-vs-base",
                "r1-newer-vs-old",
                "r1-newer-vs-base",
                "r2-old-vs-new",
                "r2-base-vs-new",
                "r2-old-vs-newer",
                "r2-base-vs-newer"
            ]
        );
    }

    #[test]
    fn a_sets_seed_depends_on_its_key_and_the_league_seed_only() {
        let three = schedule(&names(&["a", "b", "c"]), &Format::RoundRobin, 1, 42);
        let four = schedule(&names(&["d", "c", "b", "a"]), &Format::RoundRobin, 1, 42);
        for set in &three {
            let same = four.iter().find(|s| s.key == set.key).map(|s| s.seed);
            assert_eq!(same, Some(set.seed), "{}", set.key);
        }
        let other = schedule(&names(&["a", "b", "c"]), &Format::RoundRobin, 1, 43);
        assert!(three.iter().zip(&other).all(|(x, y)| x.seed != y.seed));
        let mut seeds: Vec<u64> = four.iter().map(|s| s.seed).collect();
        seeds.sort();
        seeds.dedup();
        assert_eq!(seeds.len(), 6);
    }

    #[test]
    fn set_seeds_are_pinned() {
        // These values must never change: they would change every league's results.
        let key = SetKey {
            round: 1,
            a: "alpha".into(),
            b: "greedy".into(),
        };
        assert_eq!(set_seed(42, &key), set_seed(42, &key.clone()));
        assert!(set_seed(42, &key) < 1 << 63);
        let pinned = set_seed(42, &key);
        assert_eq!(pinned, PINNED, "set seed of (42, round 1, alpha vs greedy)");
        // Names are length-prefixed: "ab"+"c" and "a"+"bc" differ.
        let x = SetKey {
            round: 1,
            a: "ab".into(),
            b: "c".into(),
        };
        let y = SetKey {
            round: 1,
            a: "a".into(),
            b: "bc".into(),
        };
        assert_ne!(set_seed(0, &x), set_seed(0, &y));
    }

    const PINNED: u64 = 4_577_802_241_088_662_104;
}
