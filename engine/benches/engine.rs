//! `cargo bench -p engine`: perft and random playouts, per preset at width 8, and perft
//! on the long boards (widths 24 and 32, `WidePosition`); random games with every end
//! rule, played move by move on a `Game` and by `Playouts`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use engine::{judge, perft, Game, Playouts, Position, Preset, Rules, WidePosition};

const PERFT_DEPTH: u32 = 6;

fn bench_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(20);
    for preset in Preset::ALL {
        let start = Position::start(Rules::new(preset, 8).expect("valid"));
        let nodes: u64 = perft(&start, PERFT_DEPTH).iter().sum();
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("{preset}/depth-{PERFT_DEPTH}"), |b| {
            b.iter(|| perft(black_box(&start), PERFT_DEPTH))
        });
    }
    group.finish();
}

/// Plays `games` random games to their end (no-moves or the capture limit; repetition is
/// not tracked here, which keeps the loop to the moves themselves) and returns the plies.
fn playouts(start: &Position, games: u32, mut seed: u64) -> u64 {
    let mut plies = 0;
    for _ in 0..games {
        let mut pos = *start;
        let mut quiet = 0;
        loop {
            let moves = pos.legal_moves();
            if judge(&pos, false, quiet).is_some() {
                break;
            }
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let pick = (seed % moves.len() as u64) as usize;
            let pit = moves.clone().nth(pick).unwrap_or(0);
            let summary = pos.play_unchecked(pit, &mut ());
            quiet = if summary.captures > 0 { 0 } else { quiet + 1 };
            plies += 1;
        }
    }
    plies
}

fn bench_playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("playouts");
    group.sample_size(20);
    for preset in Preset::ALL {
        let start = Position::start(Rules::new(preset, 8).expect("valid"));
        let plies = playouts(&start, 100, 0x2545_f491_4f6c_dd1d);
        group.throughput(Throughput::Elements(plies));
        group.bench_function(format!("{preset}/100-games"), |b| {
            b.iter(|| playouts(black_box(&start), 100, 0x2545_f491_4f6c_dd1d))
        });
    }
    group.finish();
}

fn bench_wide_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("wide-perft");
    group.sample_size(10);
    for width in [24, 32] {
        let start = WidePosition::start(Rules::new(Preset::Hus, width).expect("valid"));
        let nodes: u64 = perft(&start, 4).iter().sum();
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("hus/width-{width}/depth-4"), |b| {
            b.iter(|| perft(black_box(&start), 4))
        });
    }
    group.finish();
}

/// The index of the next move, drawn by xorshift from `seed`.
fn draw(seed: &mut u64, moves: usize) -> usize {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    (*seed % moves as u64) as usize
}

/// Plays `games` random games from `start` to their end with every end rule
/// (repetition included), move by move on a copy of the game (`Game::play_with`,
/// nothing recorded), and returns the plies.
fn game_plays(start: &Game, games: u32, mut seed: u64) -> u64 {
    let mut plies = 0;
    for _ in 0..games {
        let mut game = start.clone();
        while game.end().is_none() {
            let moves = game.position().legal_moves();
            let pit = moves.clone().nth(draw(&mut seed, moves.len())).unwrap_or(0);
            if game.play_with(pit, &mut ()).is_err() {
                break;
            }
        }
        plies += u64::from(game.plies() - start.plies());
    }
    plies
}

/// The same games as [`game_plays`], played by `Playouts`.
fn playouts_play(start: &Game, games: u32, mut seed: u64) -> u64 {
    let mut playouts = Playouts::new(start);
    let mut plies = 0;
    for _ in 0..games {
        plies += u64::from(playouts.play(|moves| draw(&mut seed, moves)).plies);
    }
    plies
}

fn bench_whole_games(c: &mut Criterion) {
    let mut group = c.benchmark_group("whole-games");
    group.sample_size(20);
    for preset in Preset::ALL {
        let start = Game::new(Position::start(Rules::new(preset, 8).expect("valid")));
        let plies = game_plays(&start, 100, 0x2545_f491_4f6c_dd1d);
        assert_eq!(playouts_play(&start, 100, 0x2545_f491_4f6c_dd1d), plies);
        group.throughput(Throughput::Elements(plies));
        group.bench_function(format!("{preset}/game-play/100-games"), |b| {
            b.iter(|| game_plays(black_box(&start), 100, 0x2545_f491_4f6c_dd1d))
        });
        group.bench_function(format!("{preset}/playouts/100-games"), |b| {
            b.iter(|| playouts_play(black_box(&start), 100, 0x2545_f491_4f6c_dd1d))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_perft,
    bench_playouts,
    bench_wide_perft,
    bench_whole_games
);
criterion_main!(benches);
