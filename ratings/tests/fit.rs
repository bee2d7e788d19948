use crate::reference::{simulate, table};
use ratings::{Advantage, Anchor, Error, FitOptions, GameTable, Outcome, Ratings, Wdl};

const C: f64 = std::f64::consts::LN_10 / 400.0;

fn fit(table: &GameTable) -> Ratings {
    Ratings::fit(table, &FitOptions::default()).unwrap()
}

fn with_prior(prior_draws: f64) -> FitOptions {
    FitOptions {
        prior_draws,
        ..FitOptions::default()
    }
}

#[test]
fn two_equal_bots_are_rated_equal_exactly() {
    let games = table(2, &[(0, 1, 5, 10, 5), (1, 0, 5, 10, 5)]);
    let r = fit(&games);
    assert!((r.ratings()[0] - 1500.0).abs() < 1e-9, "{:?}", r.ratings());
    assert!((r.ratings()[1] - 1500.0).abs() < 1e-9, "{:?}", r.ratings());
    assert!(r.advantage().value.abs() < 1e-9);
    assert!((r.los(0, 1).unwrap() - 0.5).abs() < 1e-12);
}

/// Equal bots, but the first mover scores 10 of 15 in every cell: the ratings stay
/// equal and the advantage is the Elo of the first movers' score with the prior's
/// virtual draws (1 per cell here, half a point each): (20 + 1)/(30 + 2) = 21/32, so
/// a = 400·log10(21/11).
#[test]
fn the_advantage_of_equal_bots_by_hand() {
    let games = table(2, &[(0, 1, 8, 4, 3), (1, 0, 8, 4, 3)]);
    let r = fit(&games);
    assert!((r.ratings()[0] - r.ratings()[1]).abs() < 1e-9);
    let expected = 400.0 * (21.0f64 / 11.0).log10();
    assert!(
        (r.advantage().value - expected).abs() < 1e-7,
        "{} vs {expected}",
        r.advantage().value
    );
}

/// A bot that won all its G games against one opponent, seats balanced: with d virtual
/// draws per bot the fit is 400·log10((G + d/2)/(d/2)) = 400·log10(1 + 2G/d) Elo above it
/// (docs/ratings.md), and finite. Its variance by hand: both cells have N = G/2 + d/2
/// games at p = (G + d/2)/(G + d), so the information of the gap is 2w with
/// w = c²·N·p(1−p), and Var(r − 1500) = Var(gap/2) = 1/(8w).
#[test]
fn a_perfect_score_has_the_documented_finite_rating() {
    for (g, d) in [(20u64, 2.0), (20, 1.0), (100, 2.0), (4, 0.5)] {
        let games = table(2, &[(0, 1, g / 2, 0, 0), (1, 0, 0, 0, g / 2)]);
        let r = Ratings::fit(&games, &with_prior(d)).unwrap();
        let gap = 400.0 * (1.0 + 2.0 * g as f64 / d).log10();
        let best = r.rating(0).unwrap();
        assert!(
            (best.value - (1500.0 + gap / 2.0)).abs() < 1e-7,
            "G {g} d {d}: {best:?} gap {gap}"
        );
        assert!((r.ratings()[1] - (1500.0 - gap / 2.0)).abs() < 1e-7);
        assert!(r.advantage().value.abs() < 1e-7);
        let g = g as f64;
        let p = (g + d / 2.0) / (g + d);
        let w = C * C * (g / 2.0 + d / 2.0) * p * (1.0 - p);
        let sd = (1.0 / (8.0 * w)).sqrt();
        assert!(
            (best.std_error - sd).abs() < 1e-6 * sd,
            "{} vs {sd}",
            best.std_error
        );
        assert!((best.high - best.value - 1.959_963_984_540_054 * sd).abs() < 1e-6 * sd);
    }
}

/// Bot 0 wins every game against 1 and 2, which draw with each other: 0 is finite and
/// on top, 1 and 2 are equal by symmetry.
#[test]
fn a_bot_that_wins_everything_among_three() {
    let games = table(
        3,
        &[
            (0, 1, 6, 0, 0),
            (1, 0, 0, 0, 6),
            (0, 2, 6, 0, 0),
            (2, 0, 0, 0, 6),
            (1, 2, 0, 6, 0),
            (2, 1, 0, 6, 0),
        ],
    );
    let r = fit(&games);
    let [a, b, c] = [0, 1, 2].map(|bot| r.rating(bot).unwrap());
    assert!(a.value.is_finite() && a.std_error.is_finite());
    assert!((b.value - c.value).abs() < 1e-9);
    assert!(a.value > b.value + 300.0, "{a:?} {b:?}");
    assert!((a.value + b.value + c.value - 4500.0).abs() < 1e-9);
    assert!(r.los(0, 1).unwrap() > 0.99);
}

/// A beats B, B beats C, C beats A, each 7 to 3 with the same results in both seats:
/// nobody is better, and the first mover scores exactly half.
#[test]
fn a_cycle_with_equal_counts_gives_equal_ratings() {
    let games = table(
        3,
        &[
            (0, 1, 4, 0, 1),
            (1, 0, 1, 0, 4),
            (1, 2, 4, 0, 1),
            (2, 1, 1, 0, 4),
            (2, 0, 4, 0, 1),
            (0, 2, 1, 0, 4),
        ],
    );
    let r = fit(&games);
    for bot in 0..3 {
        assert!(
            (r.ratings()[bot] - 1500.0).abs() < 1e-9,
            "{:?}",
            r.ratings()
        );
    }
    assert!(r.advantage().value.abs() < 1e-9);
    // Bots 0 and 1 played 10 games; the fit still sees all 30.
    let sd = r.rating(0).unwrap().std_error;
    assert!((r.rating(1).unwrap().std_error - sd).abs() < 1e-9);
}

/// 8 bots with known strengths, a 60 Elo first-move advantage, 30% of the decisive
/// share drawn, 40 games per ordered pair (2,240 games, seeded): the fitted advantage's
/// 95% interval holds the true value, and every rating is within 3 standard errors of
/// the truth (relative to the pool average).
#[test]
fn first_mover_advantage_recovered_from_simulated_games() {
    let truth = [
        1300.0, 1350.0, 1420.0, 1480.0, 1500.0, 1560.0, 1650.0, 1740.0,
    ];
    let mean = truth.iter().sum::<f64>() / truth.len() as f64;
    let games = simulate(&truth, 60.0, 0.3, 40, 20_240_611);
    assert_eq!(games.total_games(), Some(8 * 7 * 40));
    for prior_draws in [2.0, 0.0] {
        let r = Ratings::fit(&games, &with_prior(prior_draws)).unwrap();
        let a = r.advantage();
        assert!(a.low < 60.0 && 60.0 < a.high, "prior {prior_draws}: {a:?}");
        assert!(a.std_error > 5.0 && a.std_error < 15.0, "{a:?}");
        for (bot, t) in truth.iter().enumerate() {
            let e = r.rating(bot).unwrap();
            let z = (e.value - (t - mean + 1500.0)) / e.std_error;
            assert!(z.abs() < 3.0, "bot {bot}: {e:?} truth {t}, z {z}");
        }
    }
}

/// Ratings depend only on differences: anchoring on a bot or a ladder moves them all by
/// the same amount and leaves every difference and its variance as they were.
#[test]
fn anchors_shift_ratings_and_keep_differences() {
    let games = simulate(&[1400.0, 1500.0, 1550.0, 1700.0], 30.0, 0.2, 6, 7);
    let average = fit(&games);
    let bot = Ratings::fit(
        &games,
        &FitOptions {
            anchor: Anchor::Bot {
                bot: 2,
                rating: 2000.0,
            },
            ..FitOptions::default()
        },
    )
    .unwrap();
    let ladder = Ratings::fit(
        &games,
        &FitOptions {
            anchor: Anchor::Fixed(vec![(2, 2000.0)]),
            ..FitOptions::default()
        },
    )
    .unwrap();
    assert_eq!(bot, ladder);
    let e = bot.rating(2).unwrap();
    assert_eq!(
        (e.value, e.std_error, e.low, e.high),
        (2000.0, 0.0, 2000.0, 2000.0)
    );
    let shift = 2000.0 - average.ratings()[2];
    for i in 0..4 {
        assert!((bot.ratings()[i] - average.ratings()[i] - shift).abs() < 1e-7);
        for j in 0..4 {
            let x = average.compare(i, j).unwrap();
            let y = bot.compare(i, j).unwrap();
            assert!(
                (x.difference.std_error - y.difference.std_error).abs() < 1e-7,
                "{i} {j}"
            );
            assert!((x.los - y.los).abs() < 1e-9);
        }
    }
    assert!((average.advantage().value - bot.advantage().value).abs() < 1e-7);
    assert!((average.advantage().std_error - bot.advantage().std_error).abs() < 1e-7);
    // Relative to the pool average the anchored bot has an uncertainty of its own.
    assert!(average.rating(2).unwrap().std_error > 10.0);
    let mean = average.ratings().iter().sum::<f64>() / 4.0;
    assert!((mean - 1500.0).abs() < 1e-9);
    let custom = Ratings::fit(
        &games,
        &FitOptions {
            anchor: Anchor::Average(0.0),
            ..FitOptions::default()
        },
    )
    .unwrap();
    assert!((custom.ratings()[0] - (average.ratings()[0] - 1500.0)).abs() < 1e-7);
}

/// A newcomer rated against a ladder of two known bots, scoring exactly half against
/// each with seats balanced, and the advantage known to be 0: it lands halfway.
#[test]
fn a_newcomer_against_a_fixed_ladder() {
    let games = table(
        3,
        &[
            (2, 0, 3, 2, 3),
            (0, 2, 3, 2, 3),
            (2, 1, 3, 2, 3),
            (1, 2, 3, 2, 3),
            (0, 1, 10, 0, 0),
        ],
    );
    let options = FitOptions {
        anchor: Anchor::Fixed(vec![(0, 1400.0), (1, 1600.0)]),
        advantage: Advantage::Fixed(0.0),
        ..FitOptions::default()
    };
    let r = Ratings::fit(&games, &options).unwrap();
    assert_eq!(&r.ratings()[..2], &[1400.0, 1600.0]);
    assert!((r.ratings()[2] - 1500.0).abs() < 1e-9, "{:?}", r.ratings());
    assert_eq!(r.rating(0).unwrap().std_error, 0.0);
    assert_eq!(
        r.advantage(),
        ratings::Estimate {
            value: 0.0,
            std_error: 0.0,
            low: 0.0,
            high: 0.0
        }
    );
    assert!(r.rating(2).unwrap().std_error > 50.0);
    // The two fixed bots compare with certainty (and in the order given, not the games').
    assert_eq!(r.los(1, 0).unwrap(), 1.0);
    assert_eq!(r.los(0, 1).unwrap(), 0.0);
}

#[test]
fn a_fixed_advantage_is_used_as_given() {
    let games = simulate(&[1450.0, 1500.0, 1550.0], 40.0, 0.25, 10, 3);
    let fitted = fit(&games);
    let fixed = Ratings::fit(
        &games,
        &FitOptions {
            advantage: Advantage::Fixed(25.0),
            ..FitOptions::default()
        },
    )
    .unwrap();
    assert_eq!(fixed.advantage().value, 25.0);
    assert_eq!(fixed.advantage().std_error, 0.0);
    assert!(fitted.advantage().std_error > 0.0);
    assert_eq!(fixed.covariance(3, 0).unwrap(), 0.0);
    // Knowing the advantage can only shrink the uncertainty of a difference.
    let x = fixed.compare(0, 2).unwrap().difference.std_error;
    let y = fitted.compare(0, 2).unwrap().difference.std_error;
    assert!(x <= y + 1e-12, "{x} > {y}");
}

/// Two groups that never met, and a bot with no games: the prior alone links them, so
/// every rating is finite, and the uncertainty shows it.
#[test]
fn disconnected_groups_and_a_bot_without_games_are_finite() {
    let games = table(
        5,
        &[
            (0, 1, 3, 1, 0),
            (1, 0, 0, 1, 3),
            (2, 3, 2, 2, 0),
            (3, 2, 0, 2, 2),
        ],
    );
    let r = fit(&games);
    for e in r.estimates() {
        assert!(
            e.value.is_finite() && e.std_error.is_finite() && e.std_error > 0.0,
            "{e:?}"
        );
    }
    let within = r.compare(0, 1).unwrap().difference.std_error;
    let across = r.compare(0, 2).unwrap().difference.std_error;
    assert!(across > within, "{across} <= {within}");
    let lonely = r.rating(4).unwrap().std_error;
    assert!(r.estimates().iter().all(|e| e.std_error <= lonely));
    assert!(r.ratings()[0] > r.ratings()[1] && r.ratings()[2] > r.ratings()[3]);
}

/// Without a prior the fit is the plain maximum likelihood: 15 of 20 points with seats
/// balanced is exactly 400·log10(15/5) Elo.
#[test]
fn without_a_prior_the_plain_maximum_likelihood() {
    let games = table(2, &[(0, 1, 6, 3, 1), (1, 0, 1, 3, 6)]);
    let r = Ratings::fit(&games, &with_prior(0.0)).unwrap();
    let gap = 400.0 * 3f64.log10();
    assert!(
        (r.ratings()[0] - r.ratings()[1] - gap).abs() < 1e-7,
        "{:?}",
        r.ratings()
    );
    assert!(r.advantage().value.abs() < 1e-7);
}

#[test]
fn without_a_prior_a_perfect_score_or_a_gap_has_no_finite_rating() {
    let perfect = table(2, &[(0, 1, 3, 0, 0), (1, 0, 0, 0, 3)]);
    assert_eq!(
        Ratings::fit(&perfect, &with_prior(0.0)),
        Err(Error::NoFiniteRatings)
    );
    let split = table(
        4,
        &[
            (0, 1, 2, 1, 1),
            (1, 0, 2, 1, 1),
            (2, 3, 2, 1, 1),
            (3, 2, 2, 1, 1),
        ],
    );
    assert_eq!(
        Ratings::fit(&split, &with_prior(0.0)),
        Err(Error::NoFiniteRatings)
    );
    let idle = table(3, &[(0, 1, 2, 1, 1), (1, 0, 2, 1, 1)]);
    assert_eq!(
        Ratings::fit(&idle, &with_prior(0.0)),
        Err(Error::NoFiniteRatings)
    );
    // One first mover that always wins: the advantage would be infinite.
    let seats = table(2, &[(0, 1, 3, 0, 0), (1, 0, 3, 0, 0)]);
    assert_eq!(
        Ratings::fit(&seats, &with_prior(0.0)),
        Err(Error::NoFiniteRatings)
    );
    // The same tables with the default prior fit.
    for t in [&perfect, &split, &idle, &seats] {
        assert!(Ratings::fit(t, &FitOptions::default()).is_ok());
    }
}

#[test]
fn single_games_and_aggregated_counts_are_the_same_table() {
    let mut one_by_one = GameTable::new(3);
    let mut aggregated = GameTable::new(3);
    let results = [
        (0, 1, Outcome::Win),
        (0, 1, Outcome::Win),
        (0, 1, Outcome::Draw),
        (1, 0, Outcome::Loss),
        (2, 1, Outcome::Loss),
        (1, 2, Outcome::Draw),
    ];
    for (f, s, o) in results {
        one_by_one.add_game(f, s, o).unwrap();
    }
    aggregated.add_games(0, 1, Wdl::new(2, 1, 0)).unwrap();
    aggregated.add_games(1, 0, Wdl::new(0, 0, 1)).unwrap();
    aggregated.add_games(2, 1, Wdl::new(0, 0, 1)).unwrap();
    aggregated.add_games(1, 2, Wdl::new(0, 1, 0)).unwrap();
    assert_eq!(one_by_one, aggregated);
    assert_eq!(fit(&one_by_one), fit(&aggregated));
    // Bot 1: lost two and drew one as second mover, lost one as first; beat bot 2 as
    // second mover and drew with it as first.
    assert_eq!(aggregated.record(1).unwrap(), Wdl::new(1, 2, 3));
    assert_eq!(aggregated.total_games(), Some(6));
}

#[test]
fn a_bot_added_later_keeps_the_games_so_far() {
    let mut games = table(2, &[(0, 1, 2, 1, 0), (1, 0, 1, 0, 1)]);
    let before = games.clone();
    assert_eq!(games.add_bot(), 2);
    assert_eq!(games.bots(), 3);
    assert_eq!(games.get(0, 1).unwrap(), before.get(0, 1).unwrap());
    assert_eq!(games.get(1, 0).unwrap(), before.get(1, 0).unwrap());
    assert_eq!(games.get(2, 0).unwrap(), Wdl::default());
    games.add_game(2, 1, Outcome::Win).unwrap();
    assert_eq!(games.cells().count(), 3);
}

#[test]
fn the_confidence_level_sets_the_interval() {
    let games = simulate(&[1450.0, 1550.0], 0.0, 0.3, 20, 5);
    let r = Ratings::fit(
        &games,
        &FitOptions {
            confidence: 0.9,
            ..FitOptions::default()
        },
    )
    .unwrap();
    let e = r.rating(0).unwrap();
    // z of a two-sided 90% interval: 1.6448536269514722.
    assert!((e.high - e.value - 1.644_853_626_951_472 * e.std_error).abs() < 1e-9);
    assert!((e.value - e.low - 1.644_853_626_951_472 * e.std_error).abs() < 1e-9);
    assert_eq!(r.confidence(), 0.9);
}

/// docs/ratings.md, "The prior: virtual draws", its example: A and B played 18 games,
/// B and C 2, A and C none. hus's prior is d/(2(n−1)) = 1/2 virtual draw in every
/// ordered pair (A and C included); BayesElo's `AddPrior` spreads each bot's d/2 over
/// the opponents it played, in proportion to their games: A–B 1.9 draws, B–C 1.1, A–C
/// none. A table of every game and virtual draw times 20 (whole numbers) fitted without a
/// prior has the same maximum as the fractional one: it gives hus's fit exactly, and
/// the fit of hus's model with BayesElo's spreading of the draws.
#[test]
fn the_prior_example_of_the_docs() {
    let real = [
        (0, 1, 7, 1, 1),
        (1, 0, 2, 1, 6),
        (1, 2, 1, 0, 0),
        (2, 1, 0, 0, 1),
    ];
    let hus = fit(&table(3, &real));
    // hus's prior by hand: 10 draws (1/2 times 20) in each of the 6 ordered pairs.
    let mut scaled: Vec<(usize, usize, u64, u64, u64)> = real
        .iter()
        .map(|&(f, s, w, d, l)| (f, s, 20 * w, 20 * d, 20 * l))
        .collect();
    for f in 0..3 {
        for s in 0..3 {
            if f != s {
                scaled.push((f, s, 0, 10, 0));
            }
        }
    }
    let by_hand = Ratings::fit(&table(3, &scaled), &with_prior(0.0)).unwrap();
    // BayesElo's spreading: A–B 1.9 draws (19 a seat times 20 / 2), B–C 1.1 (11 a seat).
    let mut bayeselo: Vec<(usize, usize, u64, u64, u64)> = real
        .iter()
        .map(|&(f, s, w, d, l)| (f, s, 20 * w, 20 * d, 20 * l))
        .collect();
    bayeselo.extend([
        (0, 1, 0, 19, 0),
        (1, 0, 0, 19, 0),
        (1, 2, 0, 11, 0),
        (2, 1, 0, 11, 0),
    ]);
    let spread = Ratings::fit(&table(3, &bayeselo), &with_prior(0.0)).unwrap();
    for (a, b) in hus.ratings().iter().zip(by_hand.ratings()) {
        assert!(
            (a - b).abs() < 1e-7,
            "{:?} {:?}",
            hus.ratings(),
            by_hand.ratings()
        );
    }
    assert!((hus.advantage().value - by_hand.advantage().value).abs() < 1e-7);
    // The figures the document gives, to the tenth of an Elo it prints.
    let printed = |r: &Ratings| -> Vec<f64> {
        r.ratings()
            .iter()
            .chain([r.advantage().value].iter())
            .map(|x| (x * 10.0).round() / 10.0)
            .collect()
    };
    assert_eq!(printed(&hus), [1676.6, 1489.6, 1333.8, 40.2]);
    assert_eq!(printed(&spread), [1719.6, 1525.1, 1255.3, 42.0]);
}

/// A fit started from the fit of the table before its last games finds the same
/// maximum as a cold one, for either anchor, in fewer Newton steps.
#[test]
fn a_warm_start_finds_the_cold_fit_in_fewer_steps() {
    let before = table(
        4,
        &[
            (0, 1, 30, 10, 20),
            (1, 2, 25, 15, 20),
            (2, 3, 40, 5, 15),
            (3, 0, 10, 10, 40),
            (0, 2, 35, 5, 20),
        ],
    );
    let after = table(
        4,
        &[
            (0, 1, 31, 10, 20),
            (1, 2, 25, 16, 20),
            (2, 3, 40, 5, 16),
            (3, 0, 10, 10, 40),
            (0, 2, 35, 5, 20),
        ],
    );
    for anchor in [
        Anchor::Average(1500.0),
        Anchor::Bot {
            bot: 2,
            rating: 1000.0,
        },
    ] {
        let options = FitOptions {
            anchor,
            ..FitOptions::default()
        };
        let previous = Ratings::fit(&before, &options).unwrap();
        let cold = Ratings::fit(&after, &options).unwrap();
        let warm = Ratings::fit_from(&after, &options, Some(&previous)).unwrap();
        for (w, c) in warm.ratings().iter().zip(cold.ratings()) {
            assert!(
                (w - c).abs() < 1e-6,
                "{:?} vs {:?}",
                warm.ratings(),
                cold.ratings()
            );
        }
        assert!((warm.advantage().value - cold.advantage().value).abs() < 1e-6);
        assert!(
            warm.iterations() < cold.iterations(),
            "warm {} vs cold {}",
            warm.iterations(),
            cold.iterations()
        );
        // An earlier fit of another pool is not a start.
        let three = Ratings::fit(&table(3, &[(0, 1, 5, 5, 5), (1, 2, 5, 5, 5)]), &options);
        let other = Ratings::fit_from(&after, &options, three.as_ref().ok()).unwrap();
        assert_eq!(other.iterations(), cold.iterations());
    }
}
