use ratings::{Advantage, Anchor, Error, FitOptions, GameTable, Outcome, Ratings, Sprt, Wdl};

fn two_bots() -> GameTable {
    let mut t = GameTable::new(2);
    t.add_game(0, 1, Outcome::Win).unwrap();
    t
}

fn fit_with(options: FitOptions) -> Result<Ratings, Error> {
    Ratings::fit(&two_bots(), &options)
}

#[test]
fn table_inputs() {
    let mut t = GameTable::new(3);
    assert_eq!(
        t.add_game(3, 0, Outcome::Win),
        Err(Error::BotOutOfRange { bot: 3, bots: 3 })
    );
    assert_eq!(
        t.add_game(0, 7, Outcome::Win),
        Err(Error::BotOutOfRange { bot: 7, bots: 3 })
    );
    assert_eq!(
        t.add_game(1, 1, Outcome::Draw),
        Err(Error::SelfPlay { bot: 1 })
    );
    assert_eq!(t.get(0, 3), Err(Error::BotOutOfRange { bot: 3, bots: 3 }));
    assert_eq!(t.record(5), Err(Error::BotOutOfRange { bot: 5, bots: 3 }));
    t.add_games(0, 1, Wdl::new(u64::MAX - 1, 0, 0)).unwrap();
    assert_eq!(
        t.add_games(0, 1, Wdl::new(0, 2, 0)),
        Err(Error::CountOverflow)
    );
    assert_eq!(t.add_game(0, 1, Outcome::Loss), Ok(()));
    assert_eq!(t.add_game(0, 1, Outcome::Loss), Err(Error::CountOverflow));
    // Nothing was recorded by the failed calls.
    assert_eq!(t.get(0, 1).unwrap(), Wdl::new(u64::MAX - 1, 0, 1));
    assert_eq!(t.total_games(), Some(u64::MAX));
}

#[test]
fn fit_inputs() {
    assert_eq!(
        Ratings::fit(&GameTable::new(1), &FitOptions::default()),
        Err(Error::TooFewBots { bots: 1 })
    );
    assert_eq!(
        Ratings::fit(&GameTable::new(0), &FitOptions::default()),
        Err(Error::TooFewBots { bots: 0 })
    );
    assert_eq!(
        fit_with(FitOptions {
            prior_draws: -1.0,
            ..FitOptions::default()
        }),
        Err(Error::InvalidPriorDraws(-1.0))
    );
    assert!(matches!(
        fit_with(FitOptions {
            prior_draws: f64::NAN,
            ..FitOptions::default()
        }),
        Err(Error::InvalidPriorDraws(_))
    ));
    assert_eq!(
        fit_with(FitOptions {
            confidence: 0.0,
            ..FitOptions::default()
        }),
        Err(Error::InvalidConfidence(0.0))
    );
    assert_eq!(
        fit_with(FitOptions {
            confidence: 1.5,
            ..FitOptions::default()
        }),
        Err(Error::InvalidConfidence(1.5))
    );
    assert_eq!(
        fit_with(FitOptions {
            anchor: Anchor::Bot {
                bot: 2,
                rating: 1500.0
            },
            ..FitOptions::default()
        }),
        Err(Error::BotOutOfRange { bot: 2, bots: 2 })
    );
    assert_eq!(
        fit_with(FitOptions {
            anchor: Anchor::Average(f64::INFINITY),
            ..FitOptions::default()
        }),
        Err(Error::NotFinite {
            what: "anchor rating",
            value: f64::INFINITY
        })
    );
    assert_eq!(
        fit_with(FitOptions {
            anchor: Anchor::Fixed(vec![]),
            ..FitOptions::default()
        }),
        Err(Error::EmptyLadder)
    );
    assert_eq!(
        fit_with(FitOptions {
            anchor: Anchor::Fixed(vec![(1, 1.0), (1, 2.0)]),
            ..FitOptions::default()
        }),
        Err(Error::DuplicateFixedBot { bot: 1 })
    );
    assert_eq!(
        fit_with(FitOptions {
            advantage: Advantage::Fixed(f64::NEG_INFINITY),
            ..FitOptions::default()
        }),
        Err(Error::NotFinite {
            what: "fixed advantage",
            value: f64::NEG_INFINITY
        })
    );
}

#[test]
fn ratings_queries() {
    let r = fit_with(FitOptions::default()).unwrap();
    assert_eq!(r.rating(2), Err(Error::BotOutOfRange { bot: 2, bots: 2 }));
    assert_eq!(r.los(0, 9), Err(Error::BotOutOfRange { bot: 9, bots: 2 }));
    assert_eq!(
        r.compare(5, 0),
        Err(Error::BotOutOfRange { bot: 5, bots: 2 })
    );
    assert_eq!(
        r.expected_score(0, 2),
        Err(Error::BotOutOfRange { bot: 2, bots: 2 })
    );
    // Index `bots` is the advantage; one past it is out of range.
    assert!(r.covariance(2, 2).is_ok());
    assert_eq!(
        r.covariance(3, 0),
        Err(Error::BotOutOfRange { bot: 3, bots: 3 })
    );
    assert_eq!(r.covariance_matrix().len(), 9);
}

#[test]
fn sprt_parameters() {
    assert_eq!(
        Sprt::new(0.0, 5.0, 0.0, 0.05),
        Err(Error::InvalidAlpha(0.0))
    );
    assert_eq!(
        Sprt::new(0.0, 5.0, 1.0, 0.05),
        Err(Error::InvalidAlpha(1.0))
    );
    assert_eq!(
        Sprt::new(0.0, 5.0, 0.05, -0.1),
        Err(Error::InvalidBeta(-0.1))
    );
    assert!(matches!(
        Sprt::new(0.0, 5.0, f64::NAN, 0.05),
        Err(Error::InvalidAlpha(_))
    ));
    assert_eq!(
        Sprt::new(0.0, 5.0, 0.6, 0.4),
        Err(Error::AlphaBetaSum {
            alpha: 0.6,
            beta: 0.4
        })
    );
    assert_eq!(
        Sprt::new(5.0, 5.0, 0.05, 0.05),
        Err(Error::HypothesesNotOrdered {
            elo0: 5.0,
            elo1: 5.0
        })
    );
    assert_eq!(
        Sprt::new(5.0, 0.0, 0.05, 0.05),
        Err(Error::HypothesesNotOrdered {
            elo0: 5.0,
            elo1: 0.0
        })
    );
    assert_eq!(
        Sprt::new(f64::NAN, 0.0, 0.05, 0.05)
            .unwrap_err()
            .to_string(),
        "elo0 must be a finite number, got NaN"
    );
    assert_eq!(
        Sprt::new(0.0, 1e6, 0.05, 0.05),
        Err(Error::EloOutOfRange(1e6))
    );
    assert!(Sprt::new(-1.75, 0.25, 0.05, 0.05).is_ok());
}

#[test]
fn messages_name_what_is_wrong() {
    let cases = [
        (
            Error::BotOutOfRange { bot: 7, bots: 3 },
            "bot index 7 is out of range: there are 3 bots (0 to 2)",
        ),
        (Error::SelfPlay { bot: 1 }, "bot 1 cannot play itself"),
        (
            Error::TooFewBots { bots: 1 },
            "ratings need at least 2 bots, got 1",
        ),
        (
            Error::InvalidPriorDraws(-1.0),
            "prior_draws must be a finite number of virtual draws, 0 or more, got -1",
        ),
        (
            Error::InvalidAlpha(1.5),
            "alpha must be strictly between 0 and 1, got 1.5",
        ),
        (
            Error::AlphaBetaSum {
                alpha: 0.6,
                beta: 0.5,
            },
            "alpha + beta must be below 1, got 0.6 + 0.5",
        ),
        (
            Error::HypothesesNotOrdered {
                elo0: 5.0,
                elo1: 0.0,
            },
            "elo0 must be below elo1, got elo0 = 5, elo1 = 0",
        ),
        (Error::DuplicateFixedBot { bot: 2 }, "bot 2 is fixed twice"),
        (Error::NoGames, "no games to estimate from"),
    ];
    for (error, message) in cases {
        assert_eq!(error.to_string(), message);
    }
    assert!(Error::NoFiniteRatings
        .to_string()
        .contains("use prior_draws > 0"));
}
