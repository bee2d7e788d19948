//! Finds lines of moves that end a game by the repetition rule and by the 200-ply rule,
//! for the examples of RULES.md section 5 (`hus line` plays them).
//!
//!     cargo run --release -p engine --example end_lines [PRESET] [WIDTH]
//!
//! Random play never reaches these ends: captures come first. The search keeps both
//! sides' pits equal (player 1 answers each move with the same pit in its own
//! numbering), so a side's pits are the whole state, and walks depth first over
//! capture-less pairs of moves. A pair that brings back the pits of a pair on the
//! current path repeats the position; a path of 100 pairs with no repeat and no capture
//! is a line to the 200-ply limit.

use std::collections::HashSet;

use engine::{EndReason, Game, Position, Preset, Rules};

fn main() {
    let mut args = std::env::args().skip(1);
    let preset: Preset = match args.next().map(|s| s.parse()) {
        Some(Ok(p)) => p,
        Some(Err(e)) => return eprintln!("{e}"),
        None => Preset::Hus,
    };
    let width = args.next().and_then(|w| w.parse().ok()).unwrap_or(8);
    let rules = match Rules::new(preset, width) {
        Ok(r) => r,
        Err(e) => return eprintln!("{e}"),
    };
    let start = Position::start(rules);
    for (name, want) in [
        ("repetition", EndReason::Repetition),
        ("no-capture-limit", EndReason::NoCaptureLimit),
    ] {
        let mut seen = HashSet::new();
        let mut line = Vec::new();
        match search(&Game::new(start), want, &mut seen, &mut line) {
            Some(pits) => {
                let game = replay(start, &pits);
                let end = game.end().copied();
                println!(
                    "{name}: {} plies, end {:?}\n  {}",
                    pits.len(),
                    end,
                    pits.iter()
                        .map(|p| p.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                );
            }
            None => println!("{name}: none found"),
        }
    }
}

fn replay(start: Position, pits: &[usize]) -> Game {
    let mut game = Game::new(start);
    for &p in pits {
        if game.play(p).is_err() {
            break;
        }
    }
    game
}

/// Depth first over pairs of equal moves; `seen` holds every position (player 0 to
/// move) already explored, so each is expanded once.
fn search(
    game: &Game,
    want: EndReason,
    seen: &mut HashSet<Position>,
    line: &mut Vec<usize>,
) -> Option<Vec<usize>> {
    let pos = *game.position();
    if !seen.insert(pos) {
        return None;
    }
    for pit in pos.legal_moves() {
        let mut next = game.clone();
        let mut ok = true;
        for _ in 0..2 {
            match next.play(pit) {
                Ok(report) if report.summary.captures == 0 => {}
                _ => {
                    ok = false;
                    break;
                }
            }
            if let Some(end) = next.end() {
                if end.reason == want {
                    line.extend([pit, pit]);
                    // The end may have come after the first of the pair.
                    let plies = next.plies() as usize;
                    let mut found = line.clone();
                    found.truncate(plies);
                    return Some(found);
                }
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        line.extend([pit, pit]);
        if let Some(found) = search(&next, want, seen, line) {
            return Some(found);
        }
        line.truncate(line.len() - 2);
    }
    None
}
