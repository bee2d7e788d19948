//! A fixed amount of random playouts, for CPU time and instruction counts (docs/python.md,
//! "Speed"): `playout_work playouts` plays 200,000 random games from the start of `hus`
//! at width 8 with `Playouts`, `playout_work game` the same games move by move on a copy
//! of the `Game` (`Game::play_with`), every end rule applied in both. An optional second
//! argument sets the number of games. Prints the plies and the wins of player 0, so the
//! work cannot be optimized away, e.g.
//! `/usr/bin/time -f "%U s" target/release/examples/playout_work playouts`.

use engine::{Game, Player, Playouts, Position, Preset, Rules};

/// The index of the next move, drawn by xorshift from `seed`.
fn draw(seed: &mut u64, moves: usize) -> usize {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    (*seed % moves as u64) as usize
}

fn main() {
    let mut args = std::env::args().skip(1);
    let way = args.next().unwrap_or_else(|| "playouts".to_string());
    let games: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let Ok(rules) = Rules::new(Preset::Hus, 8) else {
        return;
    };
    let start = Game::new(Position::start(rules));
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let (mut plies, mut wins) = (0u64, 0u64);
    match way.as_str() {
        "playouts" => {
            let mut playouts = Playouts::new(&start);
            for _ in 0..games {
                let end = playouts.play(|moves| draw(&mut seed, moves));
                plies += u64::from(end.plies);
                wins += u64::from(end.end.winner == Some(Player::Zero));
            }
        }
        "game" => {
            for _ in 0..games {
                let mut game = start.clone();
                while game.end().is_none() {
                    let moves = game.position().legal_moves();
                    let pit = moves.clone().nth(draw(&mut seed, moves.len())).unwrap_or(0);
                    if game.play_with(pit, &mut ()).is_err() {
                        break;
                    }
                }
                plies += u64::from(game.plies());
                wins += u64::from(game.end().and_then(|e| e.winner) == Some(Player::Zero));
            }
        }
        _ => {
            eprintln!("usage: playout_work [playouts|game] [GAMES]");
            return;
        }
    }
    println!("{way}: {games} games, {plies} plies, player 0 won {wins}");
}
