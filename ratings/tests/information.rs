use crate::reference::{invert, simulate, table};
use ratings::{expected_score, Anchor, Error, FitOptions, Ratings};

const C: f64 = std::f64::consts::LN_10 / 400.0;

/// Sum over bots of Var(r_k − pool average) for a covariance of (ratings, advantage).
fn pool_variance(cov: &[Vec<f64>], n: usize) -> f64 {
    let mean_row = |i: usize| (0..n).map(|j| cov[i][j]).sum::<f64>() / n as f64;
    let grand = (0..n).map(mean_row).sum::<f64>() / n as f64;
    (0..n).map(|k| cov[k][k] - 2.0 * mean_row(k) + grand).sum()
}

/// One more game adds w·u·uᵀ to the information; check the crate's Sherman–Morrison
/// figures against inverting the updated information directly. Bot 0 is anchored, so
/// the covariance of the other ratings and the advantage is the inverse of the
/// information in exactly those parameters.
#[test]
fn one_more_game_matches_a_direct_inverse() {
    let games = simulate(&[1400.0, 1480.0, 1500.0, 1620.0], 35.0, 0.3, 4, 11);
    let options = FitOptions {
        anchor: Anchor::Bot {
            bot: 0,
            rating: 1500.0,
        },
        ..FitOptions::default()
    };
    let r = Ratings::fit(&games, &options).unwrap();
    let n = 4;
    // Covariance of (r_1, r_2, r_3, a) and the information it inverts.
    let reduced: Vec<Vec<f64>> = (1..=n)
        .map(|i| (1..=n).map(|j| r.covariance(i, j).unwrap()).collect())
        .collect();
    let info = invert(&reduced);
    for (first, second) in [(1, 3), (3, 1), (0, 2), (2, 0), (1, 2)] {
        let g = r.game_information(first, second).unwrap();
        let p = expected_score(r.ratings()[first] - r.ratings()[second] + r.advantage().value);
        assert!((g.expected_score - p).abs() < 1e-15);
        assert!((g.information - C * C * p * (1.0 - p)).abs() < 1e-18);
        // u over (r_1, r_2, r_3, a); bot 0 is fixed, so it has no entry.
        let mut u = [0.0; 4];
        if first > 0 {
            u[first - 1] += 1.0;
        }
        if second > 0 {
            u[second - 1] -= 1.0;
        }
        u[3] = 1.0;
        let updated: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| info[i][j] + g.information * u[i] * u[j])
                    .collect()
            })
            .collect();
        let after = invert(&updated);
        // Back to (r_0, r_1, r_2, r_3, a) with r_0 fixed.
        let embed = |m: &Vec<Vec<f64>>| -> Vec<Vec<f64>> {
            (0..=n)
                .map(|i| {
                    (0..=n)
                        .map(|j| {
                            if i == 0 || j == 0 {
                                0.0
                            } else {
                                m[i - 1][j - 1]
                            }
                        })
                        .collect()
                })
                .collect()
        };
        let (before, after) = (embed(&reduced), embed(&after));
        let var = |m: &Vec<Vec<f64>>| m[first][first] + m[second][second] - 2.0 * m[first][second];
        assert!((g.difference_variance - var(&before)).abs() < 1e-9 * var(&before));
        assert!(
            (g.difference_variance_after - var(&after)).abs() < 1e-7 * var(&after),
            "{g:?} vs {}",
            var(&after)
        );
        assert!(g.difference_variance_after < g.difference_variance);
        let reduction = pool_variance(&before, n) - pool_variance(&after, n);
        assert!(
            (g.pool_variance_reduction - reduction).abs() < 1e-6 * reduction,
            "{g:?} vs {reduction}"
        );
        let a_reduction = before[n][n] - after[n][n];
        assert!((g.advantage_variance_reduction - a_reduction).abs() < 1e-6 * a_reduction);
    }
}

/// The pool figure does not depend on the anchor.
#[test]
fn the_pool_reduction_is_the_same_for_every_anchor() {
    let games = simulate(&[1400.0, 1480.0, 1500.0, 1620.0], 35.0, 0.3, 3, 12);
    let a = Ratings::fit(&games, &FitOptions::default()).unwrap();
    let b = Ratings::fit(
        &games,
        &FitOptions {
            anchor: Anchor::Bot {
                bot: 3,
                rating: 0.0,
            },
            ..FitOptions::default()
        },
    )
    .unwrap();
    for (f, s) in [(0, 1), (2, 3), (3, 0)] {
        let x = a.game_information(f, s).unwrap();
        let y = b.game_information(f, s).unwrap();
        assert!(
            (x.pool_variance_reduction - y.pool_variance_reduction).abs()
                < 1e-7 * x.pool_variance_reduction
        );
        assert!(
            (x.difference_variance_after - y.difference_variance_after).abs()
                < 1e-7 * x.difference_variance_after
        );
    }
}

/// A newcomer with no games is the most uncertain: the best game to play next involves
/// it, and no other game reduces the total uncertainty more.
#[test]
fn the_most_informative_game_involves_the_newcomer() {
    let mut games = simulate(&[1400.0, 1500.0, 1600.0], 0.0, 0.3, 10, 4);
    let newcomer = games.add_bot();
    let r = Ratings::fit(&games, &FitOptions::default()).unwrap();
    let best = r.most_informative_game();
    assert!(
        best.first == newcomer || best.second == newcomer,
        "{best:?}"
    );
    for f in 0..4 {
        for s in (0..4).filter(|&s| s != f) {
            assert!(
                r.game_information(f, s).unwrap().pool_variance_reduction
                    <= best.pool_variance_reduction
            );
        }
    }
    assert_eq!(r.game_information(1, 1), Err(Error::SelfPlay { bot: 1 }));
    assert_eq!(
        r.game_information(0, 4),
        Err(Error::BotOutOfRange { bot: 4, bots: 4 })
    );
}

#[test]
fn an_unplayed_pair_tells_more_than_a_well_played_one() {
    let games = table(
        3,
        &[
            (0, 1, 20, 20, 20),
            (1, 0, 20, 20, 20),
            (1, 2, 1, 0, 1),
            (2, 1, 1, 0, 1),
        ],
    );
    let r = Ratings::fit(&games, &FitOptions::default()).unwrap();
    let played = r.game_information(0, 1).unwrap();
    let unplayed = r.game_information(0, 2).unwrap();
    assert!(unplayed.difference_variance > played.difference_variance);
    assert!(unplayed.pool_variance_reduction > played.pool_variance_reduction);
}
