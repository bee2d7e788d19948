//! Levels of play: `alphabeta-bot --level 1..10`, opponents of known strength.
//!
//! A level is the same search as the full bot, held back in three ways: a fixed depth,
//! a share of turns on which it plays a random legal move instead of searching (a
//! blunder), and a margin of seeds within which it takes any move of the search as
//! good enough. Every random choice comes from a seed (`--seed`), so a level with a
//! seed plays the same moves in the same positions after the same history, and a set
//! between seeded levels can be played again exactly. A level also thinks for at most
//! its own time cap (and never past the bot's usual share of `time_ms`): depth, not the
//! machine's speed, sets its strength, and the cap only keeps it quick in huge
//! positions.
//!
//! The ratings of the levels are measured by a league (`leagues/ladder.toml`, shipped
//! with its standings in `leagues/ladder.json`); `hus rate` rates a bot against them.

use std::time::{Duration, Instant};

use engine::Board;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::search::{Limits, Report, Searcher};

/// One level of play.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// Its number, 1 (weakest) to 10.
    pub level: u32,
    /// The search's depth in plies.
    pub depth: u32,
    /// The share of turns, 0 to 1, on which it plays a random legal move.
    pub blunder: f64,
    /// Moves scored within this many seeds of the best are all good enough: it plays
    /// one of them at random (0: one of the best, ties broken at random).
    pub margin: u32,
    /// The longest it thinks about a move.
    pub think: Duration,
}

/// The levels, weakest first: `LEVELS[n - 1]` is level `n`.
pub const LEVELS: [Level; 10] = [
    level(1, 1, 0.5, 2, 100),
    level(2, 1, 0.0, 0, 100),
    level(3, 2, 0.2, 0, 100),
    level(4, 2, 0.0, 0, 100),
    level(5, 3, 0.0, 0, 100),
    level(6, 4, 0.0, 0, 100),
    level(7, 5, 0.0, 0, 250),
    level(8, 6, 0.0, 0, 250),
    level(9, 7, 0.0, 0, 500),
    level(10, 9, 0.0, 0, 1000),
];

const fn level(level: u32, depth: u32, blunder: f64, margin: u32, think_ms: u64) -> Level {
    Level {
        level,
        depth,
        blunder,
        margin,
        think: Duration::from_millis(think_ms),
    }
}

impl Level {
    /// Level `n`, 1 to 10.
    pub fn get(n: u32) -> Option<Level> {
        let index = usize::try_from(n).ok()?.checked_sub(1)?;
        LEVELS.get(index).copied()
    }

    /// Chooses a move in `pos` (whose side to move must have a legal move), thinking
    /// until `received + self.think` at the latest, and never past `deadline`. Returns
    /// the pit, and the search's report when it searched (`None`: a blunder).
    pub fn choose<B: Board>(
        &self,
        searcher: &mut Searcher<B>,
        rng: &mut ChaCha8Rng,
        pos: &B,
        received: Instant,
        deadline: Instant,
    ) -> Option<(usize, Option<Report>)> {
        let moves: Vec<usize> = pos.legal_moves().collect();
        if moves.is_empty() {
            return None;
        }
        if self.blunder > 0.0 && rng.gen_bool(self.blunder.min(1.0)) {
            let pit = moves[rng.gen_range(0..moves.len())];
            return Some((pit, None));
        }
        let deadline = deadline.min(received + self.think);
        let limits = Limits::depth(self.depth, deadline);
        let (report, choices) = searcher.search_choices(pos, &limits, self.margin)?;
        let pit = match choices.len() {
            0 => report.best,
            n => choices[rng.gen_range(0..n)],
        };
        Some((pit, Some(report)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{Game, Player, Position, Rules};
    use rand::SeedableRng;

    #[test]
    fn levels_are_numbered_and_grow_stronger() {
        for (i, level) in LEVELS.iter().enumerate() {
            assert_eq!(level.level as usize, i + 1);
            assert_eq!(Level::get(level.level), Some(*level));
        }
        assert_eq!(Level::get(0), None);
        assert_eq!(Level::get(11), None);
        for pair in LEVELS.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            // Deeper, or as deep and erring less.
            assert!(b.depth >= a.depth);
            if b.depth == a.depth {
                assert!(b.blunder <= a.blunder && b.margin <= a.margin);
            }
            assert!(b.think >= a.think);
            assert!(a != b);
        }
    }

    /// Plays a game between two levels with seeds, returning the moves.
    fn game(a: u32, b: u32, seed: u64) -> (Vec<usize>, [u32; 2]) {
        let levels = [Level::get(a), Level::get(b)].map(|l| l.expect("a level"));
        let mut searchers = [Searcher::new(12), Searcher::new(12)];
        let mut rngs = [
            ChaCha8Rng::seed_from_u64(seed),
            ChaCha8Rng::seed_from_u64(seed + 1),
        ];
        let mut game = Game::new(Position::start(Rules::default()));
        let mut moves = Vec::new();
        while game.end().is_none() {
            let pos = *game.position();
            let me = pos.to_move().index();
            let now = Instant::now();
            let far = now + Duration::from_secs(60);
            let (pit, _) = levels[me]
                .choose(&mut searchers[me], &mut rngs[me], &pos, now, far)
                .expect("a move");
            assert!(pos.is_legal(pit));
            game.play(pit).expect("legal");
            moves.push(pit);
        }
        let points = game.points().expect("over");
        (
            moves,
            [points[Player::Zero.index()], points[Player::One.index()]],
        )
    }

    #[test]
    fn a_seed_gives_the_same_game_and_another_seed_another() {
        let (one, _) = game(1, 2, 7);
        assert_eq!(game(1, 2, 7).0, one);
        assert!((8..12).any(|seed| game(1, 2, seed).0 != one));
    }

    #[test]
    fn the_margin_offers_every_move_near_the_best() {
        let pos = Position::start(Rules::default());
        let far = Instant::now() + Duration::from_secs(60);
        let mut searcher = Searcher::new(12);
        let (report, best) = searcher
            .search_choices(&pos, &Limits::depth(2, far), 0)
            .expect("moves");
        assert!(best.contains(&report.best));
        let plain = Searcher::new(12)
            .search(&pos, &Limits::depth(2, far))
            .expect("moves");
        assert_eq!((plain.best, plain.score), (report.best, report.score));
        let (_, wide) = searcher
            .search_choices(&pos, &Limits::depth(2, far), 1_000)
            .expect("moves");
        let all: Vec<usize> = pos.legal_moves().collect();
        assert_eq!(
            wide, all,
            "a margin wider than any difference takes every move"
        );
        assert!(best.len() <= wide.len());
    }
}
