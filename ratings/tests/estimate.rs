use ratings::{elo_difference, Error, Pentanomial, Wdl};

/// fastchess prints two decimals (and a percentage with two decimals for the LOS).
fn assert_published(got: f64, published: f64) {
    assert!(
        (got - published).abs() <= 0.005 + 1e-9,
        "got {got}, published {published}"
    );
}

// fastchess `app/tests/elo_test.cpp` (Disservin/fastchess), "EloWDL 1" and "EloWDL 2":
// `Stats(wins, losses, draws)`; `diff()`, `error()` (half the interval) and `los()`.
#[test]
fn trinomial_estimates_match_fastchess_published_values() {
    let e = Wdl::new(136, 111, 96).elo(0.95).unwrap();
    assert_published(e.elo, 40.70);
    assert_published(e.half_width(), 30.43);
    assert_published(100.0 * e.los, 99.60);
    assert!(e.low < e.elo && e.elo < e.high);

    let e = Wdl::new(76, 123, 89).elo(0.95).unwrap();
    assert_published(100.0 * e.los, 15.53);
}

// fastchess `app/tests/elo_test.cpp`, "EloPentanomial 1" to "3":
// `Stats(LL, LD, WL, DD, WD, WW)`.
#[test]
fn pentanomial_estimates_match_fastchess_published_values() {
    let e = Pentanomial::new([34, 54, 31 + 32, 64, 75])
        .elo(0.95)
        .unwrap();
    assert_published(e.elo, 55.58);
    assert_published(e.half_width(), 27.65);
    assert_published(100.0 * e.los, 100.00);

    let e = Pentanomial::new([332, 433, 457 + 41, 333, 334])
        .elo(0.95)
        .unwrap();
    assert_published(e.elo, -8.64);
    assert_published(e.half_width(), 10.33);
    assert_published(100.0 * e.los, 5.05);

    let e = Pentanomial::new([7895, 8757, 5485 + 200, 568, 9999])
        .elo(0.95)
        .unwrap();
    assert_published(e.elo, -21.04);
    assert_published(e.half_width(), 2.95);
}

/// By hand: 3 wins, 4 draws, 3 losses score exactly ½: 0 Elo, LOS ½; the variance of a
/// game's score is (3·¼ + 3·¼)/10 = 0.15, so the interval is ½ ± 1.96·√(0.15/10).
#[test]
fn an_even_score_by_hand() {
    let e = Wdl::new(3, 4, 3).elo(0.95).unwrap();
    assert_eq!(e.score, 0.5);
    assert!(e.elo.abs() < 1e-12);
    assert!((e.los - 0.5).abs() < 1e-15);
    let se = (0.15f64 / 10.0).sqrt();
    assert!((e.score_std_error - se).abs() < 1e-15);
    let high = elo_difference(0.5 + 1.959_963_984_540_054 * se);
    assert!((e.high - high).abs() < 1e-9 && (e.low + high).abs() < 1e-9);
}

#[test]
fn a_perfect_score_stays_finite_at_the_clamp() {
    let e = Wdl::new(10, 0, 0).elo(0.95).unwrap();
    assert!(e.elo.is_finite() && e.elo > 1000.0);
    // The upper end is clamped to a score of 0.999: 400·log10(999).
    assert!((e.high - 400.0 * 999f64.log10()).abs() < 1e-9);
    assert!(e.los > 0.999);
}

#[test]
fn no_games_and_bad_confidence_are_errors() {
    assert_eq!(Wdl::default().elo(0.95), Err(Error::NoGames));
    assert_eq!(Pentanomial::default().elo(0.95), Err(Error::NoGames));
    assert_eq!(
        Wdl::new(1, 0, 0).elo(1.0),
        Err(Error::InvalidConfidence(1.0))
    );
    assert!(matches!(
        Wdl::new(1, 0, 0).elo(f64::NAN),
        Err(Error::InvalidConfidence(_))
    ));
}
