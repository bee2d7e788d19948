use ratings::{Decision, Error, Outcome, Pentanomial, Sprt, Wdl};

/// Published values are printed to two decimals: ours must round to them.
fn assert_published(got: f64, published: f64) {
    assert!(
        (got - published).abs() <= 0.005 + 1e-9,
        "got {got}, published {published}"
    );
}

// fastchess `tests/sprt_test.cpp` (Disservin/fastchess, "logistic trinomial 1" and "2"):
// `Stats(wins, losses, draws)` with `SPRT(alpha 0.05, beta 0.05, elo0, elo1, "logistic")`.
#[test]
fn trinomial_llr_matches_fastchess_published_values() {
    let sprt = Sprt::new(0.5, 2.5, 0.05, 0.05).unwrap();
    let status = sprt.trinomial(&Wdl::new(21404, 40708, 21184));
    assert_published(status.llr, -1.57);
    assert_eq!(status.decision, Decision::Continue);

    let sprt = Sprt::new(0.0, 2.0, 0.05, 0.05).unwrap();
    assert_published(sprt.trinomial(&Wdl::new(57433, 106593, 57030)).llr, -2.59);
}

// fastchess `tests/sprt_test.cpp`, "logistic pentanomial 1" and "2":
// `Stats(LL, LD, WL, DD, WD, WW)`; WL and DD both score 1 point in the pair.
#[test]
fn pentanomial_llr_matches_fastchess_published_values() {
    let sprt = Sprt::new(0.5, 2.5, 0.05, 0.05).unwrap();
    let status = sprt.pentanomial(&Pentanomial::new([223, 9863, 20279 + 1000, 10037, 246]));
    assert_published(status.llr, -3.07);
    assert_eq!(status.decision, Decision::AcceptH0);

    let sprt = Sprt::new(0.0, 2.0, 0.05, 0.05).unwrap();
    let status = sprt.pentanomial(&Pentanomial::new([871, 26175, 55003 + 980, 26678, 821]));
    assert_published(status.llr, -4.98);
    assert_eq!(status.decision, Decision::AcceptH0);
}

#[test]
fn bounds_follow_from_alpha_and_beta() {
    let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05).unwrap();
    // ln(0.05/0.95) = −ln 19 = −2.944438979166440.
    assert!((sprt.lower_bound() + 2.944_438_979_166_44).abs() < 1e-12);
    assert!((sprt.upper_bound() - 2.944_438_979_166_44).abs() < 1e-12);
    let sprt = Sprt::new(0.0, 5.0, 0.01, 0.1).unwrap();
    assert!((sprt.lower_bound() - (0.1f64 / 0.99).ln()).abs() < 1e-15);
    assert!((sprt.upper_bound() - (0.9f64 / 0.01).ln()).abs() < 1e-15);
}

#[test]
fn decision_at_and_beyond_the_bounds() {
    let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05).unwrap();
    let (lower, upper) = (sprt.lower_bound(), sprt.upper_bound());
    assert_eq!(sprt.decision(upper), Decision::AcceptH1);
    assert_eq!(sprt.decision(upper + 1.0), Decision::AcceptH1);
    assert_eq!(sprt.decision(lower), Decision::AcceptH0);
    assert_eq!(sprt.decision(lower - 1.0), Decision::AcceptH0);
    assert_eq!(sprt.decision(0.0), Decision::Continue);
    assert_eq!(sprt.decision(upper - 1e-9), Decision::Continue);
    assert_eq!(sprt.decision(lower + 1e-9), Decision::Continue);
}

#[test]
fn no_games_is_zero_and_continue() {
    let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05).unwrap();
    let status = sprt.trinomial(&Wdl::default());
    assert_eq!(status.llr, 0.0);
    assert_eq!(status.decision, Decision::Continue);
    assert_eq!(sprt.pentanomial(&Pentanomial::default()).llr, 0.0);
}

/// Without draws the MLE distribution with mean s is Bernoulli(s) itself, so the
/// generalized LLR is the classic one, W ln(s1/s0) + L ln((1−s1)/(1−s0)) — up to the
/// 0.001 virtual draws that stand in for the empty draw count.
#[test]
fn without_draws_the_llr_is_the_classic_bernoulli_sprt() {
    let sprt = Sprt::new(0.0, 20.0, 0.05, 0.05).unwrap();
    let (w, l) = (540.0, 460.0);
    let s0: f64 = 0.5;
    let s1 = 1.0 / (1.0 + 10f64.powf(-20.0 / 400.0));
    let classic = w * (s1 / s0).ln() + l * ((1.0 - s1) / (1.0 - s0)).ln();
    let llr = sprt.trinomial(&Wdl::new(540, 0, 460)).llr;
    assert!((llr - classic).abs() < 1e-3, "llr {llr}, classic {classic}");
    // 540 - 460 is a score of 0.54, far above s1 = 0.5288: H1 is accepted.
    assert!(llr > sprt.upper_bound());
}

/// If the observed mean score equals s1, the MLE under H1 is the empirical distribution,
/// so the LLR is N times a Kullback–Leibler divergence: positive. Likewise negative at s0.
#[test]
fn llr_sign_at_the_hypotheses() {
    // elo0 = 0 (s0 = 0.5); elo1 = 400·log10(0.6/0.4) gives s1 = 0.6 exactly.
    let elo1 = 400.0 * 1.5f64.log10();
    let sprt = Sprt::new(0.0, elo1, 0.05, 0.05).unwrap();
    // 30 wins, 60 draws, 10 losses: score (30 + 30)/100 = 0.6.
    assert!(sprt.trinomial(&Wdl::new(30, 60, 10)).llr > 0.0);
    // 20 wins, 60 draws, 20 losses: score 0.5 = s0.
    assert!(sprt.trinomial(&Wdl::new(20, 60, 20)).llr < 0.0);
    // Pairs scoring 1.2 of 2 on average: [0, 10, 60, 30, 0] → (5 + 60 + 45)/... = per game 0.55; use
    // [5, 10, 40, 25, 20]: points 0·5 + 0.5·10 + 1·40 + 1.5·25 + 2·20 = 122.5 of 200 → 0.6125.
    assert!(sprt.pentanomial(&Pentanomial::new([5, 10, 40, 25, 20])).llr > 0.0);
    assert!(
        sprt.pentanomial(&Pentanomial::new([10, 20, 40, 20, 10]))
            .llr
            < 0.0
    );
}

/// Turning a loss into a win never lowers the LLR; turning a win into a draw never raises it.
#[test]
fn llr_is_monotone_in_the_results() {
    let sprt = Sprt::new(-2.0, 8.0, 0.05, 0.05).unwrap();
    let mut previous = f64::NEG_INFINITY;
    for wins in 0..=200 {
        let llr = sprt.trinomial(&Wdl::new(wins, 300, 200 - wins)).llr;
        assert!(llr > previous, "wins {wins}: {llr} after {previous}");
        previous = llr;
    }
    let mut previous = f64::NEG_INFINITY;
    for k in 0..=100 {
        // k pairs move from 1 point to 1.5 points.
        let llr = sprt
            .pentanomial(&Pentanomial::new([30, 80, 200 - k, 80 + k, 30]))
            .llr;
        assert!(llr > previous, "k {k}: {llr} after {previous}");
        previous = llr;
    }
}

/// The test of A over B with (elo0, elo1) is the test of B over A with (−elo1, −elo0),
/// with the hypotheses' roles swapped: the LLR changes sign.
#[test]
fn llr_is_antisymmetric_under_swapping_sides() {
    let ab = Sprt::new(0.0, 5.0, 0.05, 0.05).unwrap();
    let ba = Sprt::new(-5.0, 0.0, 0.05, 0.05).unwrap();
    let wdl = Wdl::new(1210, 2500, 1170);
    let a = ab.trinomial(&wdl).llr;
    let b = ba.trinomial(&wdl.reversed()).llr;
    assert!((a + b).abs() < 1e-9 * a.abs().max(1.0), "{a} vs {b}");
    let mut counts = [40, 410, 1100, 430, 35];
    let p = ab.pentanomial(&Pentanomial::new(counts)).llr;
    counts.reverse();
    let q = ba.pentanomial(&Pentanomial::new(counts)).llr;
    assert!((p + q).abs() < 1e-9 * p.abs().max(1.0), "{p} vs {q}");
}

#[test]
fn pairs_are_counted_by_points() {
    let mut pairs = Pentanomial::default();
    pairs.add_pair(Outcome::Loss, Outcome::Loss).unwrap();
    pairs.add_pair(Outcome::Draw, Outcome::Loss).unwrap();
    pairs.add_pair(Outcome::Win, Outcome::Loss).unwrap();
    pairs.add_pair(Outcome::Draw, Outcome::Draw).unwrap();
    pairs.add_pair(Outcome::Win, Outcome::Draw).unwrap();
    pairs.add_pair(Outcome::Win, Outcome::Win).unwrap();
    pairs.add_pair(Outcome::Win, Outcome::Win).unwrap();
    assert_eq!(pairs.counts, [1, 1, 2, 1, 2]);
    assert_eq!(pairs.pairs(), Some(7));
    assert_eq!(pairs.points(), 0.5 + 2.0 + 1.5 + 4.0);
    let mut full = Pentanomial::new([u64::MAX, 0, 0, 0, 0]);
    assert_eq!(
        full.add_pair(Outcome::Loss, Outcome::Loss),
        Err(Error::CountOverflow)
    );
    assert_eq!(
        full.add_pair(Outcome::Win, Outcome::Loss),
        Err(Error::CountOverflow)
    );
    assert_eq!(full.counts, [u64::MAX, 0, 0, 0, 0]);
}
