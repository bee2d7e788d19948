//! Openings: the positions a set's games start from instead of the preset's starting
//! position (docs/openings.md). A file holds one opening per line, a position in the
//! notation of RULES.md or a line of pits played from the starting position
//! (`moves 7 4`); [`read_openings`] checks every line against the set's rules, and
//! [`openings_for_set`] picks, from a book and a set's seed, the openings the set plays.
//! The set plays its games in pairs from them ([`crate::SetConfig::start_of`]).

use std::path::{Path, PathBuf};

use engine::{AnyPosition, Board, Game, NotationError, Player, Rules};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Why an openings file cannot be used. Every variant names the file; a problem with a
/// line names the line (from 1) too.
#[derive(Debug, thiserror::Error)]
pub enum OpeningsError {
    /// The file cannot be read.
    #[error("cannot read the openings file {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (in the message, not a source of its own: it would be said twice).
        error: std::io::Error,
    },
    /// The file is not UTF-8.
    #[error("{}: the openings file is not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// A line is not a usable opening.
    #[error("{}: line {line}: {problem}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        problem: LineProblem,
    },
    /// Nothing but comments and blank lines.
    #[error(
        "{}: the file holds no opening (one per line: a position in the notation of \
         RULES.md, or `moves` and pits played from the starting position; `#` starts a comment)",
        path.display()
    )]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// What is wrong with one line of an openings file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// Not a position in the notation.
    #[error("not a position in the notation of RULES.md: {0}")]
    Notation(NotationError),
    /// A position of other rules than the set's.
    #[error("the position is {found}, but the set plays {expected}")]
    OtherRules {
        /// The position's rules.
        found: Rules,
        /// The set's.
        expected: Rules,
    },
    /// The side to move has no move: there is no game to play.
    #[error(
        "the game is already over there: player {to_move}, to move, has no pit with 2 or more seeds"
    )]
    Over {
        /// The side to move.
        to_move: Player,
    },
    /// `moves` without any pit.
    #[error("`moves` needs the pits to play from the starting position, e.g. `moves 7 4`")]
    NoPits,
    /// A word of a `moves` line that is not a pit number.
    #[error("moves: {0:?} is not a pit number")]
    NotAPit(String),
    /// A pit of a `moves` line that cannot be played.
    #[error("moves: pit {pit} cannot be played at ply {ply}: {reason}")]
    Illegal {
        /// The ply (from 0).
        ply: usize,
        /// The pit.
        pit: usize,
        /// The engine's words.
        reason: String,
    },
    /// The line's moves end the game.
    #[error(
        "moves: the game ends after ply {ply} ({reason}): an opening must leave a game to play"
    )]
    Ends {
        /// The ply (from 0) of the move that ended it.
        ply: usize,
        /// The end rule.
        reason: String,
    },
}

/// Reads an openings file and checks every opening against `rules` (docs/openings.md).
/// The positions come in the file's order, duplicates kept.
pub fn read_openings(path: &Path, rules: Rules) -> Result<Vec<AnyPosition>, OpeningsError> {
    let bytes = std::fs::read(path).map_err(|error| OpeningsError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    let text = String::from_utf8(bytes).map_err(|_| OpeningsError::NotText {
        path: path.to_path_buf(),
    })?;
    parse_openings(&text, rules).map_err(|e| match e {
        ParseError::Line { line, problem } => OpeningsError::Line {
            path: path.to_path_buf(),
            line,
            problem,
        },
        ParseError::Empty => OpeningsError::Empty {
            path: path.to_path_buf(),
        },
    })
}

/// [`read_openings`] of a text, without a file: errors name only the line.
enum ParseError {
    Line { line: usize, problem: LineProblem },
    Empty,
}

fn parse_openings(text: &str, rules: Rules) -> Result<Vec<AnyPosition>, ParseError> {
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let position = parse_line(content, rules).map_err(|problem| ParseError::Line {
            line: i + 1,
            problem,
        })?;
        openings.push(position);
    }
    if openings.is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(openings)
}

/// One opening: `moves PIT...` or a position in notation.
fn parse_line(content: &str, rules: Rules) -> Result<AnyPosition, LineProblem> {
    let mut words = content.split_whitespace();
    if words.next() == Some("moves") {
        let mut game = Game::new(AnyPosition::start(rules));
        let mut pits = 0;
        for (ply, word) in words.enumerate() {
            let pit: usize = word
                .parse()
                .map_err(|_| LineProblem::NotAPit(word.to_string()))?;
            if let Err(e) = game.play(pit) {
                return Err(LineProblem::Illegal {
                    ply,
                    pit,
                    reason: e.to_string(),
                });
            }
            if let Some(end) = game.end() {
                return Err(LineProblem::Ends {
                    ply,
                    reason: end.reason.name().to_string(),
                });
            }
            pits += 1;
        }
        if pits == 0 {
            return Err(LineProblem::NoPits);
        }
        return Ok(*game.position());
    }
    let position: AnyPosition = content.parse().map_err(LineProblem::Notation)?;
    if position.rules() != rules {
        return Err(LineProblem::OtherRules {
            found: position.rules(),
            expected: rules,
        });
    }
    if position.legal_moves().is_empty() {
        return Err(LineProblem::Over {
            to_move: position.to_move(),
        });
    }
    Ok(position)
}

/// The openings a set of `games` games with seed `seed` plays from `book`: the book's
/// openings in order, starting at an opening drawn from the seed and going round the
/// book, as many as the set has pairs of games (at most the whole book; a set with
/// more pairs than that plays them again in the same order). The same book and seed
/// always give the same openings. An empty book gives none.
pub fn openings_for_set(book: &[AnyPosition], seed: u64, games: u32) -> Vec<AnyPosition> {
    if book.is_empty() {
        return Vec::new();
    }
    // A stream of its own: the draw is independent of the lots of the same seed.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    let offset = rng.gen_range(0..book.len());
    let pairs = games.div_ceil(2) as usize;
    book.iter()
        .cycle()
        .skip(offset)
        .take(pairs.min(book.len()))
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Preset;

    fn hus8() -> Rules {
        Rules::new(Preset::Hus, 8).expect("rules")
    }

    fn problem(text: &str) -> (usize, String) {
        match parse_openings(text, hus8()) {
            Err(ParseError::Line { line, problem }) => (line, problem.to_string()),
            Err(ParseError::Empty) => (0, "empty".into()),
            Ok(p) => panic!("accepted: {p:?}"),
        }
    }

    #[test]
    fn positions_moves_comments_and_blank_lines() {
        let text = "# a book\n\n\
            hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0  # the start\n\
            moves 7 4\n   \n\
            moves 7\n";
        let book = parse_openings(text, hus8()).ok().expect("a valid book");
        let shown: Vec<String> = book.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            shown,
            [
                "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0",
                "hus 8 0,0,1,0,2,2,2,0/3,0,3,3,0,3,3,0 1,0,0,0,0,3,4,0/3,3,0,3,3,0,3,3 0",
                "hus 8 1,1,1,0,2,2,2,0/3,0,3,3,0,3,3,0 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 1",
            ]
        );
    }

    #[test]
    fn each_bad_line_is_named_with_what_is_wrong() {
        assert_eq!(
            problem("# fine\nhus 8 0,0\n"),
            (
                2,
                "not a position in the notation of RULES.md: expected 5 fields separated by \
                 spaces (PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK TOMOVE), found 3"
                    .into()
            )
        );
        assert_eq!(
            problem("rulebook 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0"),
            (
                1,
                "the position is rulebook at width 8, but the set plays hus at width 8".into()
            )
        );
        assert_eq!(
            problem("hus 8 0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,0 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0"),
            (
                1,
                "the game is already over there: player 0, to move, has no pit with 2 or more seeds"
                    .into()
            )
        );
        assert_eq!(
            problem("moves\n"),
            (
                1,
                "`moves` needs the pits to play from the starting position, e.g. `moves 7 4`"
                    .into()
            )
        );
        assert_eq!(
            problem("moves 7 x"),
            (1, "moves: \"x\" is not a pit number".into())
        );
        assert_eq!(
            problem("\nmoves 7 0"),
            (
                2,
                "moves: pit 0 cannot be played at ply 1: pit 0 holds 0 seeds, a move needs at least 2"
                    .into()
            )
        );
        assert_eq!(problem("# nothing\n\n"), (0, "empty".into()));
    }

    #[test]
    fn a_set_takes_consecutive_openings_from_a_seeded_start() {
        let book: Vec<AnyPosition> = ["moves 7", "moves 6", "moves 5", "moves 4", "moves 8"]
            .iter()
            .map(|l| parse_line(l, hus8()).expect("valid"))
            .collect();
        let index = |p: &AnyPosition| book.iter().position(|b| b == p).expect("from the book");
        for seed in 0..50 {
            let picked = openings_for_set(&book, seed, 7);
            assert_eq!(picked, openings_for_set(&book, seed, 7), "deterministic");
            assert_eq!(picked.len(), 4, "one per pair, the odd game too");
            let first = index(&picked[0]);
            for (k, p) in picked.iter().enumerate() {
                assert_eq!(index(p), (first + k) % book.len(), "consecutive, cycling");
            }
            // More pairs than openings: the whole book, once.
            assert_eq!(openings_for_set(&book, seed, 20).len(), 5);
        }
        let starts: std::collections::BTreeSet<usize> = (0..50)
            .map(|seed| index(&openings_for_set(&book, seed, 2)[0]))
            .collect();
        assert_eq!(starts.len(), 5, "the seed draws every start");
        assert!(openings_for_set(&[], 3, 7).is_empty());
    }
}
