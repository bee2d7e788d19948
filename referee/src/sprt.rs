//! The SPRT of a set (`hus match --sprt`): its settings from the command line, and the
//! running tally of game pairs that `play_set` stops on, the console prints and `hus
//! replay` checks: one computation for all three.

use ratings::{Decision, Outcome, Pentanomial, Sprt, SprtStatus};

use crate::records::{SprtDecision, SprtEnd, SprtRecord};
use crate::side::Side;

/// Parses `elo0=0,elo1=5,alpha=0.05,beta=0.05` (in any order; alpha and beta default
/// to 0.05) into a checked test. The error names the key or the value that is wrong.
pub fn parse_sprt(text: &str) -> Result<Sprt, String> {
    let mut values: [Option<f64>; 4] = [None; 4];
    const KEYS: [&str; 4] = ["elo0", "elo1", "alpha", "beta"];
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "{text:?}: an empty item; write KEY=VALUE items separated by commas, e.g. \
                 elo0=0,elo1=5,alpha=0.05,beta=0.05"
            ));
        }
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!(
                "{part:?} is not KEY=VALUE (the keys are elo0, elo1, alpha and beta)"
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        let Some(slot) = KEYS.iter().position(|k| *k == key) else {
            return Err(format!(
                "unknown key {key:?} (the keys are elo0, elo1, alpha and beta)"
            ));
        };
        let number: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("{key}={value}: {value:?} is not a number"))?;
        if values[slot].replace(number).is_some() {
            return Err(format!("{key} is given twice"));
        }
    }
    let [elo0, elo1, alpha, beta] = values;
    let elo0 = elo0.ok_or("elo0 is missing (e.g. elo0=0,elo1=5)")?;
    let elo1 = elo1.ok_or("elo1 is missing (e.g. elo0=0,elo1=5)")?;
    Sprt::new(elo0, elo1, alpha.unwrap_or(0.05), beta.unwrap_or(0.05)).map_err(|e| e.to_string())
}

/// The test as the log's header states it.
pub fn sprt_record(sprt: &Sprt) -> SprtRecord {
    SprtRecord {
        elo0: sprt.elo0(),
        elo1: sprt.elo1(),
        alpha: sprt.alpha(),
        beta: sprt.beta(),
    }
}

/// The test a header states, checked.
pub fn sprt_of_record(r: &SprtRecord) -> Result<Sprt, String> {
    Sprt::new(r.elo0, r.elo1, r.alpha, r.beta).map_err(|e| e.to_string())
}

/// The game pairs of a set so far, for bot A (bot 0): games 2k-1 and 2k are pair k,
/// with the first mover swapped. An odd last game counts for nothing.
#[derive(Clone, Debug)]
pub struct SprtTally {
    sprt: Sprt,
    pairs: Pentanomial,
    /// A's result in the first game of a pair still open.
    open: Option<Outcome>,
    status: SprtStatus,
}

impl SprtTally {
    /// No pair yet.
    pub fn new(sprt: Sprt) -> SprtTally {
        SprtTally {
            status: sprt.pentanomial(&Pentanomial::default()),
            sprt,
            pairs: Pentanomial::default(),
            open: None,
        }
    }

    /// The test.
    pub fn sprt(&self) -> &Sprt {
        &self.sprt
    }

    /// Adds game `game` (from 1, in order), won by `winner` (a bot, `None` for a draw
    /// or a game lost by both); returns the test's status when it completes a pair.
    pub fn add_game(&mut self, game: u32, winner: Option<Side>) -> Option<SprtStatus> {
        let outcome = match winner {
            Some(Side::A) => Outcome::Win,
            Some(Side::B) => Outcome::Loss,
            None => Outcome::Draw,
        };
        if game % 2 == 1 {
            self.open = Some(outcome);
            return None;
        }
        let first = self.open.take()?;
        // Overflow needs more than 2^64 pairs: never with at most 100,000 games.
        self.pairs.add_pair(first, outcome).ok()?;
        self.status = self.sprt.pentanomial(&self.pairs);
        Some(self.status)
    }

    /// Adds whole pairs counted elsewhere (a batch of a gate's test: the pairs by bot
    /// A's points, 0, 1/2, 1, 3/2, 2) and returns the test's status after them; `None`
    /// (nothing added) past 2^64 pairs. The LLR depends only on the counts, so pairs
    /// added in batches give the LLR of the same pairs added game by game.
    pub fn add_pairs(&mut self, counts: [u64; 5]) -> Option<SprtStatus> {
        let mut sum = self.pairs.counts;
        for (s, c) in sum.iter_mut().zip(counts) {
            *s = s.checked_add(c)?;
        }
        sum.iter().try_fold(0u64, |t, &c| t.checked_add(c))?;
        self.pairs = Pentanomial::new(sum);
        self.status = self.sprt.pentanomial(&self.pairs);
        Some(self.status)
    }

    /// The status after the last whole pair.
    pub fn status(&self) -> SprtStatus {
        self.status
    }

    /// The pairs so far.
    pub fn pairs(&self) -> &Pentanomial {
        &self.pairs
    }

    /// Whether a bound has been reached.
    pub fn decided(&self) -> bool {
        self.status.decision != Decision::Continue
    }

    /// The record of where the test stands, for `set-end`.
    pub fn end_record(&self) -> SprtEnd {
        SprtEnd {
            decision: decision_record(self.status.decision),
            llr: self.status.llr,
            lower: self.status.lower_bound,
            upper: self.status.upper_bound,
            pentanomial: self.pairs.counts,
        }
    }
}

/// `set-end.sprt.decision`: the log's value of the test's decision.
pub fn decision_record(decision: Decision) -> SprtDecision {
    match decision {
        Decision::AcceptH0 => SprtDecision::AcceptH0,
        Decision::AcceptH1 => SprtDecision::AcceptH1,
        Decision::Continue => SprtDecision::Undecided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_sprt(text)
            .err()
            .unwrap_or_else(|| panic!("{text:?} accepted"))
    }

    #[test]
    fn settings_and_their_errors() {
        let s = parse_sprt("elo0=0,elo1=5,alpha=0.05,beta=0.1").expect("valid");
        assert_eq!(
            (s.elo0(), s.elo1(), s.alpha(), s.beta()),
            (0.0, 5.0, 0.05, 0.1)
        );
        let s = parse_sprt(" elo1 = 10 , elo0=-5").expect("valid");
        assert_eq!(
            (s.elo0(), s.elo1(), s.alpha(), s.beta()),
            (-5.0, 10.0, 0.05, 0.05)
        );
        assert_eq!(err("elo0=0,elo1=abc"), "elo1=abc: \"abc\" is not a number");
        assert_eq!(
            err("elo0=0,elo2=5"),
            "unknown key \"elo2\" (the keys are elo0, elo1, alpha and beta)"
        );
        assert_eq!(
            err("elo0=0,elo1"),
            "\"elo1\" is not KEY=VALUE (the keys are elo0, elo1, alpha and beta)"
        );
        assert_eq!(err("elo0=0,elo0=1,elo1=5"), "elo0 is given twice");
        assert_eq!(err("elo1=5"), "elo0 is missing (e.g. elo0=0,elo1=5)");
        assert_eq!(err("elo0=nan,elo1=5"), "elo0=nan: \"nan\" is not a number");
        assert!(
            err("elo0=5,elo1=0").contains("elo0"),
            "{}",
            err("elo0=5,elo1=0")
        );
        assert!(err("elo0=0,elo1=5,alpha=1.5").contains("alpha"));
    }

    #[test]
    fn pairs_are_counted_by_a_score() {
        let mut t = SprtTally::new(parse_sprt("elo0=0,elo1=5").expect("valid"));
        assert_eq!(t.add_game(1, Some(Side::A)), None);
        let status = t.add_game(2, None).expect("a pair");
        assert_eq!(t.pairs().counts, [0, 0, 0, 1, 0]);
        assert_eq!(status, t.status());
        t.add_game(3, Some(Side::B));
        t.add_game(4, Some(Side::B));
        assert_eq!(t.pairs().counts, [1, 0, 0, 1, 0]);
        let end = t.end_record();
        assert_eq!(end.decision, SprtDecision::Undecided);
        assert_eq!(end.pentanomial, [1, 0, 0, 1, 0]);
        assert!((end.upper - 19f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn pairs_added_in_batches_give_the_llr_of_the_same_pairs_game_by_game() {
        let sprt = parse_sprt("elo0=0,elo1=10").expect("valid");
        // Four batches of pairs, in an order other than the games'.
        let games: [[Option<Side>; 2]; 10] = [
            [Some(Side::A), Some(Side::A)],
            [Some(Side::A), None],
            [Some(Side::B), Some(Side::A)],
            [None, None],
            [Some(Side::A), Some(Side::A)],
            [Some(Side::B), Some(Side::B)],
            [Some(Side::A), Some(Side::B)],
            [Some(Side::A), Some(Side::A)],
            [None, Some(Side::A)],
            [Some(Side::A), Some(Side::A)],
        ];
        let mut by_game = SprtTally::new(sprt);
        for (k, [first, second]) in games.iter().enumerate() {
            by_game.add_game(2 * k as u32 + 1, *first);
            by_game.add_game(2 * k as u32 + 2, *second);
        }
        assert_eq!(by_game.pairs().counts, [1, 0, 3, 2, 4]);
        let mut by_batch = SprtTally::new(sprt);
        for batch in [&games[8..10], &games[0..3], &games[6..8], &games[3..6]] {
            let mut one = SprtTally::new(sprt);
            for (k, [first, second]) in batch.iter().enumerate() {
                one.add_game(2 * k as u32 + 1, *first);
                one.add_game(2 * k as u32 + 2, *second);
            }
            by_batch.add_pairs(one.pairs().counts).expect("counts");
        }
        assert_eq!(by_batch.pairs().counts, [1, 0, 3, 2, 4]);
        assert_eq!(by_batch.status(), by_game.status());
        assert_eq!(by_batch.status().llr, by_game.status().llr);
        // Past 2^64 pairs nothing is added.
        assert_eq!(by_batch.add_pairs([u64::MAX, 0, 0, 0, 0]), None);
        assert_eq!(by_batch.pairs().counts, [1, 0, 3, 2, 4]);
    }
}
