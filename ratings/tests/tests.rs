//! The tests of the `ratings` crate, one binary.
// The tests index matrices by (row, column), as the formulas do.
#![allow(clippy::needless_range_loop)]

/// Shared helpers: an independent log-posterior, a brute-force maximiser, a numerical
/// Hessian, a simulator of games.
mod reference;

/// Every invalid input gets its error.
mod errors;
/// Elo estimates with interval and LOS against fastchess's published values.
mod estimate;
/// Ratings in hand-computed and known cases: equal bots, perfect scores, cycles,
/// anchors, disconnected pools, the simulated first-mover advantage.
mod fit;
/// Ratings and covariance against the independent implementation in `reference`.
mod fit_reference;
/// What one more game would tell: Sherman–Morrison against a direct inverse.
mod information;
/// Properties on random tables: labels, symmetry, ranges.
mod props;
/// The SPRT's log-likelihood ratio against fastchess's published values, and its
/// consistency.
mod sprt;
