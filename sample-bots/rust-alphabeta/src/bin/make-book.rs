//! `make-book`: writes a book of balanced openings on stdout (docs/openings.md). The
//! books in `openings/` were made with it; each file's header holds its command.
//!
//! ```text
//! cargo run --release -p alphabeta-bot --bin make-book -- --rules hus --width 8 \
//!     --plies 4 --depth 8 --max-score 2 --count 64 --seed 1 > openings/hus-8.txt
//! ```

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use alphabeta_bot::{make_book, BookOptions};
use engine::{Preset, Rules};

const USAGE: &str = "usage: make-book [--rules PRESET] [--width W] [--plies N] [--depth N] \
                     [--max-score SEEDS] [--count N] [--seed N]\n\
                     defaults: --rules hus --width 8 --plies 4 --depth 8 --max-score 2 --count 64 --seed 1";

fn options(mut args: impl Iterator<Item = String>) -> Result<Option<BookOptions>, String> {
    let (mut preset, mut width) = (Preset::Hus, 8usize);
    let mut o = BookOptions {
        rules: Rules::default(),
        plies: 4,
        depth: 8,
        max_score: 2,
        count: 64,
        seed: 1,
    };
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Ok(None);
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
            value
                .parse()
                .map_err(|_| format!("{flag} {value:?} is not a number"))
        }
        match flag.as_str() {
            "--rules" => preset = value.parse().map_err(|e| format!("--rules: {e}"))?,
            "--width" => width = number(&flag, &value)?,
            "--plies" => o.plies = number(&flag, &value)?,
            "--depth" => o.depth = number(&flag, &value)?,
            "--max-score" => o.max_score = number(&flag, &value)?,
            "--count" => o.count = number(&flag, &value)?,
            "--seed" => o.seed = number(&flag, &value)?,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    o.rules = Rules::new(preset, width).map_err(|e| format!("--width: {e}"))?;
    if width > engine::MAX_NARROW_WIDTH {
        // The book's search runs on the 64-byte board (widths 8 to 16).
        return Err(format!(
            "--width: books are made for widths 8 to {}, not {width}",
            engine::MAX_NARROW_WIDTH
        ));
    }
    Ok(Some(o))
}

fn main() -> ExitCode {
    let o = match options(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            eprintln!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("make-book: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let book = match make_book(&o) {
        Ok(book) => book,
        Err(e) => {
            eprintln!("make-book: {e}");
            return ExitCode::FAILURE;
        }
    };
    if std::io::stdout()
        .write_all(book.to_text().as_bytes())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    eprintln!(
        "make-book: {} openings from {} positions ({} searched) in {:.1} s",
        book.entries.len(),
        book.candidates,
        book.searched,
        started.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
