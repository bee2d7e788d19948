//! The alpha-beta search of the sample Rust bot (`alphabeta-bot`), and the generator of
//! the opening books shipped in `openings/` (`make-book`), which scores candidate
//! openings with that search.
//!
//! - [`Searcher`] searches a [`engine::Position`] for its side to move within
//!   [`Limits`] (a deadline, or a fixed depth) and returns a [`Report`]: the best pit,
//!   its score (seeds, or [`WIN`] per game point for a proven result) and the depth
//!   reached. A fixed-depth search is deterministic.
//! - [`make_book`] lists the positions a few plies from the start, draws them in an
//!   order fixed by a seed, and keeps those a fixed-depth search scores near even
//!   ([`BookOptions`]); [`Book::to_text`] writes the openings file (docs/openings.md).
//!
//! ```
//! use alphabeta_bot::{Limits, Searcher};
//! use engine::{Position, Rules};
//! use std::time::{Duration, Instant};
//!
//! let start = Position::start(Rules::default());
//! let far = Instant::now() + Duration::from_secs(60);
//! let report = Searcher::new(12).search(&start, &Limits::depth(3, far)).unwrap();
//! assert!(start.is_legal(report.best));
//! assert_eq!(report.depth, 3);
//! ```
#![deny(missing_docs)]

mod book;
mod search;

pub use book::{make_book, Book, BookEntry, BookError, BookOptions};
pub use search::{material, AnySearcher, Limits, Report, Searcher, MAX_DEPTH, WIN};
