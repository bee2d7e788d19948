//! `cargo bench -p ratings`: fitting ratings to a league of 100 bots and 100,000 games
//! (the target of issue 10: under a second), from the aggregated table and from the
//! single games; a 300-bot pool for scaling; the pairing query; one SPRT update; one
//! pair's order gain in log space (the server's pairing computes it for every pair).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ratings::{
    game_fisher_information, ln_order_gain, FitOptions, GameTable, Outcome, Pentanomial, Ratings,
    Sprt,
};

/// `games` games between random ordered pairs of `bots` bots rated evenly from 1000 to
/// 2000, a 40 Elo first-move advantage and a third of the decisive share drawn.
fn league(bots: usize, games: usize, seed: u64) -> Vec<(usize, usize, Outcome)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rating = |b: usize| 1000.0 + 1000.0 * b as f64 / (bots - 1) as f64;
    (0..games)
        .map(|_| {
            let first = rng.gen_range(0..bots);
            let second = (first + rng.gen_range(1..bots)) % bots;
            let p = 1.0 / (1.0 + 10f64.powf(-(rating(first) - rating(second) + 40.0) / 400.0));
            let draw = 2.0 / 3.0 * p.min(1.0 - p);
            let x: f64 = rng.gen();
            let outcome = if x < p - draw / 2.0 {
                Outcome::Win
            } else if x < p + draw / 2.0 {
                Outcome::Draw
            } else {
                Outcome::Loss
            };
            (first, second, outcome)
        })
        .collect()
}

fn aggregate(bots: usize, games: &[(usize, usize, Outcome)]) -> GameTable {
    let mut table = GameTable::new(bots);
    for &(first, second, outcome) in games {
        table.add_game(first, second, outcome).expect("valid game");
    }
    table
}

fn bench_fit(c: &mut Criterion) {
    let mut group = c.benchmark_group("fit");
    group.sample_size(30);
    for bots in [100, 300] {
        let games = league(bots, 100_000, 7);
        let table = aggregate(bots, &games);
        let options = FitOptions::default();
        group.bench_function(format!("{bots}-bots-100k-games/table"), |b| {
            b.iter(|| Ratings::fit(black_box(&table), &options).expect("fits"))
        });
        if bots == 100 {
            group.bench_function(format!("{bots}-bots-100k-games/single-games"), |b| {
                b.iter(|| {
                    Ratings::fit(&aggregate(bots, black_box(&games)), &options).expect("fits")
                })
            });
            let ratings = Ratings::fit(&table, &options).expect("fits");
            group.bench_function(format!("{bots}-bots/most-informative-game"), |b| {
                b.iter(|| black_box(&ratings).most_informative_game())
            });
        }
    }
    group.finish();
}

fn bench_sprt(c: &mut Criterion) {
    let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05).expect("valid");
    let pairs = Pentanomial::new([871, 26175, 55983, 26678, 821]);
    c.bench_function("sprt/pentanomial-llr", |b| {
        b.iter(|| sprt.pentanomial(black_box(&pairs)))
    });
}

fn bench_order_gain(c: &mut Criterion) {
    // Issue 34's pair in doubt: 1.88 standard errors apart, a set adding 0.033² of V.
    let information = 2.0 * game_fisher_information(7.5);
    let variance = 0.033 * 0.033 / information;
    let difference = 1.88 * variance.sqrt();
    c.bench_function("order/ln-order-gain", |b| {
        b.iter(|| {
            ln_order_gain(
                black_box(difference),
                black_box(variance),
                black_box(information),
            )
        })
    });
}

criterion_group!(benches, bench_fit, bench_sprt, bench_order_gain);
criterion_main!(benches);
