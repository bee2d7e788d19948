//! Integration tests of the rules engine (one binary, one module per concern).

/// The end rules, scoring of games and of sets.
pub mod ends;
/// Every rule of RULINGS.md on a hand-built position: board before, move, board after.
mod moves;
/// The one-line position notation.
mod notation;
/// The perft tables of RULES.md (data/perft.tsv).
mod perft_table;
/// `Playouts` and `Game::play_out` against the same games played move by move and the
/// reference's game loop.
mod playouts;
/// Property tests, including a comparison with a plain reference implementation.
mod properties;
/// A deliberately plain implementation of RULINGS.md, written apart from the engine.
mod reference;
/// Boards wider than 16 (`WidePosition`, `AnyPosition`), and the same games on both
/// board types.
mod wide;
