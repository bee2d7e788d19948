use crate::reference::{
    brute_force_fit, cells_of, centered_covariance, invert, numerical_information, phi, simulate,
    table, Cell,
};
use ratings::{Anchor, FitOptions, Ratings};

/// A small pool with uneven counts, draws, a perfect score between bots 0 and 3, and
/// a pair that never met (1 and 3).
fn awkward_cells() -> Vec<Cell> {
    vec![
        (0, 1, 3, 2, 1),
        (1, 0, 2, 2, 2),
        (0, 2, 4, 0, 3),
        (2, 0, 1, 1, 0),
        (1, 2, 0, 3, 2),
        (2, 3, 5, 1, 0),
        (0, 3, 2, 0, 0),
        (3, 0, 0, 0, 3),
        (3, 2, 1, 2, 1),
    ]
}

/// The crate's Newton fit against plain gradient ascent on a log-posterior written
/// game by game, for several priors and tables.
#[test]
fn ratings_match_a_brute_force_maximisation() {
    let simulated = cells_of(&simulate(
        &[1420.0, 1500.0, 1530.0, 1610.0],
        45.0,
        0.3,
        5,
        99,
    ));
    for (cells, prior) in [
        (awkward_cells(), 2.0),
        (awkward_cells(), 0.7),
        (simulated.clone(), 2.0),
        (simulated, 0.0),
    ] {
        let n = 4;
        let (brute, brute_advantage) = brute_force_fit(n, &cells, prior);
        let options = FitOptions {
            prior_draws: prior,
            anchor: Anchor::Bot {
                bot: 0,
                rating: 0.0,
            },
            ..FitOptions::default()
        };
        let r = Ratings::fit(&table(n, &cells), &options).unwrap();
        for bot in 0..n {
            assert!(
                (r.ratings()[bot] - brute[bot]).abs() < 1e-6,
                "prior {prior}: {:?} vs {brute:?}",
                r.ratings()
            );
        }
        assert!((r.advantage().value - brute_advantage).abs() < 1e-6);
    }
}

/// The covariance is the inverse of the observed information: compare every entry with
/// the inverse of a finite-difference Hessian of the independent log-posterior, moved to
/// the pool-average anchor by its Jacobian.
#[test]
fn covariance_matches_the_inverse_of_a_numerical_hessian() {
    for (cells, prior) in [
        (awkward_cells(), 2.0),
        (
            cells_of(&simulate(
                &[1400.0, 1450.0, 1600.0, 1650.0],
                20.0,
                0.2,
                8,
                1,
            )),
            1.0,
        ),
    ] {
        let n = 4;
        let r = Ratings::fit(
            &table(n, &cells),
            &FitOptions {
                prior_draws: prior,
                ..FitOptions::default()
            },
        )
        .unwrap();
        let shifted: Vec<f64> = r.ratings().iter().map(|x| x - r.ratings()[0]).collect();
        let info = numerical_information(n, &cells, prior, &shifted, r.advantage().value);
        let expected = centered_covariance(n, &invert(&info));
        let scale = expected[0][0].abs();
        for i in 0..=n {
            for j in 0..=n {
                let got = r.covariance(i, j).unwrap();
                assert!(
                    (got - expected[i][j]).abs() < 1e-4 * scale,
                    "({i},{j}): {got} vs {}",
                    expected[i][j]
                );
            }
        }
        for bot in 0..n {
            let e = r.rating(bot).unwrap();
            let sd = expected[bot][bot].sqrt();
            assert!((e.std_error - sd).abs() < 1e-4 * sd);
            assert!((e.high - (e.value + 1.959_963_984_540_054 * e.std_error)).abs() < 1e-9);
            assert!((e.low - (e.value - 1.959_963_984_540_054 * e.std_error)).abs() < 1e-9);
        }
        let a = r.advantage();
        assert!((a.std_error - expected[n][n].sqrt()).abs() < 1e-4 * a.std_error);
    }
}

/// LOS uses Var(r_i − r_j) = Var r_i + Var r_j − 2 Cov(r_i, r_j); ignoring the covariance
/// gives a visibly different answer in this pool, so the test tells the two apart.
#[test]
fn los_uses_the_covariance_not_just_the_variances() {
    let cells = awkward_cells();
    let r = Ratings::fit(&table(4, &cells), &FitOptions::default()).unwrap();
    let shifted: Vec<f64> = r.ratings().iter().map(|x| x - r.ratings()[0]).collect();
    let cov = centered_covariance(
        4,
        &invert(&numerical_information(
            4,
            &cells,
            2.0,
            &shifted,
            r.advantage().value,
        )),
    );
    let mut some_differ = false;
    for i in 0..4 {
        for j in 0..4 {
            if i == j {
                assert_eq!(r.los(i, j).unwrap(), 0.5);
                continue;
            }
            let diff = r.ratings()[i] - r.ratings()[j];
            let with_cov = phi(diff / (cov[i][i] + cov[j][j] - 2.0 * cov[i][j]).sqrt());
            let without = phi(diff / (cov[i][i] + cov[j][j]).sqrt());
            let los = r.los(i, j).unwrap();
            assert!(
                (los - with_cov).abs() < 1e-4,
                "({i},{j}): {los} vs {with_cov}"
            );
            assert!((los + r.los(j, i).unwrap() - 1.0).abs() < 1e-12);
            assert_eq!(r.los_matrix()[i][j], los);
            some_differ |= (with_cov - without).abs() > 0.01;
        }
    }
    assert!(some_differ);
}
