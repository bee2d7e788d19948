use crate::reference::{table, Cell};
use proptest::prelude::*;
use ratings::{FitOptions, Pentanomial, Ratings, Sprt, Wdl};

/// A random table: 2 to 6 bots, each ordered pair with 0 to 12 wins, draws, losses.
fn tables() -> impl Strategy<Value = (usize, Vec<Cell>)> {
    (2usize..=6).prop_flat_map(|n| {
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|f| (0..n).filter(move |&s| s != f).map(move |s| (f, s)))
            .collect();
        proptest::collection::vec((0u64..12, 0u64..12, 0u64..12), pairs.len()).prop_map(
            move |counts| {
                let cells = pairs
                    .iter()
                    .zip(counts)
                    .map(|(&(f, s), (w, d, l))| (f, s, w, d, l))
                    .collect();
                (n, cells)
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every table fits, to finite ratings averaging 1500, with a symmetric covariance
    /// and a LOS matrix whose mirror entries add up to 1.
    #[test]
    fn every_table_fits((n, cells) in tables()) {
        let r = Ratings::fit(&table(n, &cells), &FitOptions::default()).unwrap();
        let mean = r.ratings().iter().sum::<f64>() / n as f64;
        prop_assert!((mean - 1500.0).abs() < 1e-8);
        for e in r.estimates() {
            prop_assert!(e.value.is_finite() && e.std_error > 0.0 && e.std_error.is_finite());
        }
        let los = r.los_matrix();
        for i in 0..n {
            for j in 0..n {
                prop_assert!((r.covariance(i, j).unwrap() - r.covariance(j, i).unwrap()).abs() < 1e-9);
                prop_assert!((0.0..=1.0).contains(&los[i][j]));
                prop_assert!((los[i][j] + los[j][i] - 1.0).abs() < 1e-12);
            }
        }
    }

    /// Renumbering the bots renumbers the ratings and nothing else.
    #[test]
    fn labels_do_not_matter((n, cells) in tables(), rotate in 1usize..6) {
        let relabel = |b: usize| (b + rotate) % n;
        let moved: Vec<Cell> = cells.iter().map(|&(f, s, w, d, l)| (relabel(f), relabel(s), w, d, l)).collect();
        let a = Ratings::fit(&table(n, &cells), &FitOptions::default()).unwrap();
        let b = Ratings::fit(&table(n, &moved), &FitOptions::default()).unwrap();
        for bot in 0..n {
            prop_assert!((a.ratings()[bot] - b.ratings()[relabel(bot)]).abs() < 1e-6);
            let x = a.rating(bot).unwrap().std_error;
            prop_assert!((x - b.rating(relabel(bot)).unwrap().std_error).abs() < 1e-6);
        }
        prop_assert!((a.advantage().value - b.advantage().value).abs() < 1e-6);
    }

    /// Reversing every result mirrors the ratings around the average, and the advantage
    /// around 0.
    #[test]
    fn reversed_results_mirror_the_ratings((n, cells) in tables()) {
        let reversed: Vec<Cell> = cells.iter().map(|&(f, s, w, d, l)| (f, s, l, d, w)).collect();
        let a = Ratings::fit(&table(n, &cells), &FitOptions::default()).unwrap();
        let b = Ratings::fit(&table(n, &reversed), &FitOptions::default()).unwrap();
        for bot in 0..n {
            prop_assert!((a.ratings()[bot] - 1500.0 + b.ratings()[bot] - 1500.0).abs() < 1e-6);
        }
        prop_assert!((a.advantage().value + b.advantage().value).abs() < 1e-6);
    }

    /// The LLR of A over B is minus that of B over A with the hypotheses mirrored, for
    /// single games and pairs.
    #[test]
    fn sprt_llr_is_antisymmetric(w in 0u64..500, d in 0u64..500, l in 0u64..500,
                                 pairs in proptest::array::uniform5(0u64..300),
                                 elo0 in -20.0f64..10.0, width in 0.5f64..20.0) {
        let elo1 = elo0 + width;
        let ab = Sprt::new(elo0, elo1, 0.05, 0.05).unwrap();
        let ba = Sprt::new(-elo1, -elo0, 0.05, 0.05).unwrap();
        let x = ab.trinomial(&Wdl::new(w, d, l)).llr;
        let y = ba.trinomial(&Wdl::new(l, d, w)).llr;
        prop_assert!((x + y).abs() < 1e-7 * x.abs().max(1.0));
        let mut reversed = pairs;
        reversed.reverse();
        let x = ab.pentanomial(&Pentanomial::new(pairs)).llr;
        let y = ba.pentanomial(&Pentanomial::new(reversed)).llr;
        prop_assert!((x + y).abs() < 1e-7 * x.abs().max(1.0));
    }

    /// One more win never lowers the LLR; one more loss never raises it.
    #[test]
    fn sprt_llr_moves_with_the_results(w in 0u64..500, d in 0u64..500, l in 0u64..500) {
        let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05).unwrap();
        let llr = sprt.trinomial(&Wdl::new(w, d, l)).llr;
        prop_assert!(sprt.trinomial(&Wdl::new(w + 1, d, l)).llr >= llr - 1e-9);
        prop_assert!(sprt.trinomial(&Wdl::new(w, d, l + 1)).llr <= llr + 1e-9);
    }
}
