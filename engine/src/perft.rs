//! Perft: counting move sequences, the standard check of a move generator.

use crate::board::Board;
use crate::game::judge;

/// For each depth `1..=depth`, the number of move sequences of exactly that many plies
/// from `start` (any [`Board`]: match an [`AnyPosition`](crate::AnyPosition) first to run
/// on the inner board), where a finished game (any end rule, with the history along the line:
/// `start` is the first occurrence of itself and no capture has been made yet) has no
/// moves. Element `d - 1` is the count for depth `d`.
pub fn perft<B: Board>(start: &B, depth: u32) -> Vec<u64> {
    let mut counts = vec![0u64; depth as usize];
    if depth == 0 || judge(start, false, 0).is_some() {
        return counts;
    }
    let mut line = Vec::with_capacity(depth as usize + 1);
    line.push((start.key(), *start));
    walk(start, 0, depth as usize, 0, &mut line, &mut counts);
    counts
}

/// Counts the moves of `pos` (not over, at `ply`) and below them. At the last ply the
/// children are counted without being played (bulk counting).
fn walk<B: Board>(
    pos: &B,
    ply: usize,
    depth: usize,
    quiet: u32,
    line: &mut Vec<(u64, B)>,
    counts: &mut [u64],
) {
    let moves = pos.legal_moves();
    counts[ply] += moves.len() as u64;
    if ply + 1 == depth {
        return;
    }
    for pit in moves {
        let mut child = *pos;
        let summary = child.play_unchecked(pit, &mut ());
        let quiet = if summary.captures > 0 { 0 } else { quiet + 1 };
        let key = child.key();
        let repeated = line.iter().any(|(k, p)| *k == key && *p == child);
        if judge(&child, repeated, quiet).is_none() {
            line.push((key, child));
            walk(&child, ply + 1, depth, quiet, line, counts);
            line.pop();
        }
    }
}
