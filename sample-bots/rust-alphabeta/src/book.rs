//! Books of balanced openings (`make-book`): positions a few plies from the start that
//! the fixed-depth search scores near even, chosen reproducibly from a seed.
//!
//! 1. Every line of `plies` moves from the preset's starting position is played as a
//!    game (the end rules apply: a line that ends the game is dropped), and the
//!    distinct positions it reaches are listed, sorted by notation.
//! 2. They are shuffled with a generator seeded by `seed` (splitmix64, Fisher–Yates:
//!    the same order on every machine and with every build).
//! 3. In that order, each is searched to exactly `depth` plies; those whose score, for
//!    the side to move, is within `max_score` seeds of even are kept, until `count`.
//! 4. The kept openings are sorted by notation.
//!
//! A fixed-depth alpha-beta search returns the minimax value of its depth whatever its
//! move ordering, so the book is the same on every run.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::time::{Duration, Instant};

use engine::{Game, Position, Rules};

use crate::search::{Limits, Searcher, MAX_DEPTH};

/// What a book is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookOptions {
    /// The preset and width.
    pub rules: Rules,
    /// Plies from the starting position (1 to 12).
    pub plies: u32,
    /// Depth of the search that scores each candidate (1 to [`MAX_DEPTH`]).
    pub depth: u32,
    /// The largest score, in seeds for the side to move, that counts as even.
    pub max_score: i32,
    /// How many openings to keep.
    pub count: usize,
    /// The seed of the order in which candidates are tried.
    pub seed: u64,
}

impl BookOptions {
    /// The command that makes this book, from the repository's root.
    pub fn command(&self) -> String {
        format!(
            "cargo run --release -p alphabeta-bot --bin make-book -- --rules {} --width {} \
             --plies {} --depth {} --max-score {} --count {} --seed {}",
            self.rules.preset(),
            self.rules.width(),
            self.plies,
            self.depth,
            self.max_score,
            self.count,
            self.seed
        )
    }
}

/// One opening of a book, with the score that admitted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookEntry {
    /// The position.
    pub position: Position,
    /// Its score at the book's depth, in seeds, for the side to move.
    pub score: i32,
}

/// A book: the openings and how they were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    /// What it was made with.
    pub options: BookOptions,
    /// The openings, sorted by notation.
    pub entries: Vec<BookEntry>,
    /// Distinct positions `plies` plies from the start, where the game goes on.
    pub candidates: usize,
    /// Candidates searched to find them.
    pub searched: usize,
}

/// Why a book could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BookError {
    /// An option is out of range.
    Option(String),
    /// Fewer balanced positions than asked for.
    TooFew {
        /// Balanced positions found.
        found: usize,
        /// Candidates, all searched.
        candidates: usize,
    },
}

impl fmt::Display for BookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BookError::Option(message) => f.write_str(message),
            BookError::TooFew { found, candidates } => write!(
                f,
                "only {found} of the {candidates} positions are balanced enough: ask for fewer \
                 (--count), allow a larger score (--max-score), or go deeper (--plies)"
            ),
        }
    }
}

impl std::error::Error for BookError {}

/// The most plies from the start: about 12^plies lines are played.
pub const MAX_PLIES: u32 = 12;

/// Makes a book (see the module documentation).
pub fn make_book(options: &BookOptions) -> Result<Book, BookError> {
    if !(1..=MAX_PLIES).contains(&options.plies) {
        return Err(BookError::Option(format!(
            "--plies must be 1 to {MAX_PLIES}, not {}",
            options.plies
        )));
    }
    if !(1..=MAX_DEPTH).contains(&options.depth) {
        return Err(BookError::Option(format!(
            "--depth must be 1 to {MAX_DEPTH}, not {}",
            options.depth
        )));
    }
    if options.max_score < 0 {
        return Err(BookError::Option(format!(
            "--max-score must be 0 or more, not {}",
            options.max_score
        )));
    }
    if options.count == 0 {
        return Err(BookError::Option("--count must be at least 1".to_string()));
    }
    let mut reached = BTreeMap::new();
    walk(
        &Game::new(Position::start(options.rules)),
        options.plies,
        &mut reached,
    );
    let mut candidates: Vec<(String, Position)> = reached.into_iter().collect();
    shuffle(&mut candidates, options.seed);

    let mut searcher = Searcher::new(16);
    // A fixed-depth search needs no deadline; this one only keeps it finite.
    let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
    let mut kept: Vec<(String, BookEntry)> = Vec::new();
    let mut searched = 0;
    for (notation, position) in &candidates {
        if kept.len() == options.count {
            break;
        }
        searched += 1;
        let Some(report) = searcher.search(position, &Limits::depth(options.depth, far)) else {
            continue;
        };
        if report.score.abs() <= options.max_score {
            kept.push((
                notation.clone(),
                BookEntry {
                    position: *position,
                    score: report.score,
                },
            ));
        }
    }
    if kept.len() < options.count {
        return Err(BookError::TooFew {
            found: kept.len(),
            candidates: candidates.len(),
        });
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Book {
        options: *options,
        entries: kept.into_iter().map(|(_, e)| e).collect(),
        candidates: candidates.len(),
        searched,
    })
}

/// Collects the positions `plies` moves from `game`'s position where the game goes on.
fn walk(game: &Game, plies: u32, out: &mut BTreeMap<String, Position>) {
    if plies == 0 {
        out.insert(game.position().to_string(), *game.position());
        return;
    }
    for pit in game.position().legal_moves() {
        let mut next = game.clone();
        if next.play(pit).is_ok() && next.end().is_none() {
            walk(&next, plies - 1, out);
        }
    }
}

/// Fisher–Yates with splitmix64: the same order everywhere for a seed.
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        // The bias of a modulo over 2^64 is far below anything that matters here.
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

impl Book {
    /// The openings file: a commented header (what the book is and the command that
    /// made it), then one opening per line with its score as a comment.
    pub fn to_text(&self) -> String {
        let o = &self.options;
        let mut text = String::new();
        let _ = writeln!(
            text,
            "# Balanced openings for {} at width {}: {} positions {} plies from the",
            o.rules.preset(),
            o.rules.width(),
            self.entries.len(),
            o.plies
        );
        let _ = writeln!(
            text,
            "# starting position that the alpha-beta search of sample-bots/rust-alphabeta,"
        );
        let _ = writeln!(
            text,
            "# {} plies deep, scores within {} seeds of even for the side to move. They were",
            o.depth, o.max_score
        );
        let _ = writeln!(
            text,
            "# drawn in an order fixed by seed {} from the {} distinct positions {} plies",
            o.seed, self.candidates, o.plies
        );
        let _ = writeln!(
            text,
            "# from the start ({} searched), and are sorted by notation. Made by:",
            self.searched
        );
        let _ = writeln!(text, "#");
        let _ = writeln!(
            text,
            "#   {} > openings/{}-{}.txt",
            o.command(),
            o.rules.preset(),
            o.rules.width()
        );
        let _ = writeln!(text, "#");
        let _ = writeln!(
            text,
            "# The format is in docs/openings.md: one position per line, in the notation of"
        );
        let _ = writeln!(
            text,
            "# RULES.md; after `#`, a comment (here the score at depth {}).",
            o.depth
        );
        for e in &self.entries {
            let _ = writeln!(text, "{}  # {:+}", e.position, e.score);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Preset;

    fn options(plies: u32, count: usize, seed: u64) -> BookOptions {
        BookOptions {
            rules: Rules::new(Preset::Hus, 8).expect("rules"),
            plies,
            depth: 3,
            max_score: 2,
            count,
            seed,
        }
    }

    #[test]
    fn a_book_is_reproducible_balanced_sorted_and_distinct() {
        let book = make_book(&options(2, 10, 5)).expect("a book");
        assert_eq!(book, make_book(&options(2, 10, 5)).expect("again"));
        assert_eq!(book.entries.len(), 10);
        let notations: Vec<String> = book
            .entries
            .iter()
            .map(|e| e.position.to_string())
            .collect();
        let mut sorted = notations.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(notations, sorted, "sorted and distinct");
        let far = Instant::now() + Duration::from_secs(600);
        for e in &book.entries {
            assert!(e.score.abs() <= 2, "{e:?}");
            // The score is the search's, at the book's depth, from a fresh searcher.
            let r = Searcher::new(10)
                .search(&e.position, &Limits::depth(3, far))
                .expect("moves");
            assert_eq!(r.score, e.score, "{}", e.position);
            assert!(!e.position.legal_moves().is_empty());
            // Two plies from the start: player 0 to move again.
            assert_eq!(e.position.to_move(), engine::Player::Zero);
        }
        // Another seed draws other openings.
        assert_ne!(
            book.entries,
            make_book(&options(2, 10, 6)).expect("a book").entries
        );
    }

    #[test]
    fn the_text_names_the_command_and_every_score() {
        let book = make_book(&options(1, 3, 1)).expect("a book");
        let text = book.to_text();
        assert!(text.contains(
            "#   cargo run --release -p alphabeta-bot --bin make-book -- --rules hus --width 8 \
             --plies 1 --depth 3 --max-score 2 --count 3 --seed 1 > openings/hus-8.txt\n"
        ));
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines.len(), 3);
        for (line, e) in lines.iter().zip(&book.entries) {
            assert_eq!(*line, format!("{}  # {:+}", e.position, e.score));
        }
    }

    #[test]
    fn impossible_books_are_refused() {
        assert_eq!(
            make_book(&options(1, 100, 1)).err().map(|e| e.to_string()),
            Some(format!(
                "only {} of the 12 positions are balanced enough: ask for fewer (--count), allow \
                 a larger score (--max-score), or go deeper (--plies)",
                balanced_at_one_ply()
            ))
        );
        let mut bad = options(0, 1, 1);
        assert!(make_book(&bad).is_err());
        bad.plies = 2;
        bad.depth = 0;
        assert_eq!(
            make_book(&bad).err().map(|e| e.to_string()),
            Some("--depth must be 1 to 64, not 0".to_string())
        );
    }

    /// Balanced positions one ply from the start, counted here directly.
    fn balanced_at_one_ply() -> usize {
        let start = Position::start(Rules::new(Preset::Hus, 8).expect("rules"));
        let far = Instant::now() + Duration::from_secs(600);
        start
            .legal_moves()
            .filter(|&pit| {
                let mut p = start;
                p.play_unchecked(pit, &mut ());
                Searcher::new(10)
                    .search(&p, &Limits::depth(3, far))
                    .is_some_and(|r| r.score.abs() <= 2)
            })
            .count()
    }
}
