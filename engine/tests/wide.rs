//! Wide boards: `WidePosition` at widths 17 to 32 and beyond 127 seeds, `AnyPosition`'s
//! choice of board, their errors, and games played on both board types at once.

use engine::{
    AnyPosition, Board, EndReason, Game, Player, Position, Preset, Rules, Setup, SetupError,
    WidePosition, MAX_NARROW_WIDTH, MAX_WIDE_TOTAL_SEEDS, MAX_WIDTH,
};

fn rules(preset: Preset, width: usize) -> Rules {
    Rules::new(preset, width).expect("valid rules")
}

#[test]
fn the_constants() {
    assert_eq!(
        (MAX_NARROW_WIDTH, MAX_WIDTH, MAX_WIDE_TOTAL_SEEDS),
        (16, 32, 255)
    );
    assert_eq!(std::mem::size_of::<Position>(), 64);
}

#[test]
fn wide_starts_follow_the_same_rule() {
    assert_eq!(
        WidePosition::start(rules(Preset::Hus, 24)).to_string(),
        format!(
            "hus 24 {z},{t}/{b} {z},{t}/{b} 0",
            z = ["0"; 12].join(","),
            t = ["2"; 12].join(","),
            b = ["2"; 24].join(",")
        )
    );
    assert_eq!(
        AnyPosition::start(rules(Preset::MancalaWorld, 17)).to_string(),
        format!(
            "mancala-world 17 {t},{z}/{b} {t},{z}/{b} 0",
            t = ["2"; 8].join(","),
            z = ["0"; 9].join(","),
            b = ["2"; 17].join(",")
        )
    );
    for preset in Preset::ALL {
        for w in 8..=32 {
            let start = AnyPosition::start(rules(preset, w));
            assert_eq!(start.width(), w);
            assert_eq!(
                start.seeds_of(Player::Zero),
                2 * w as u32 + 2 * (w as u32 / 2)
            );
            assert_eq!(start.seeds_of(Player::One), start.seeds_of(Player::Zero));
            assert_eq!(start.legal_moves().len(), w + w / 2);
            assert_eq!(
                matches!(start, AnyPosition::Narrow(_)),
                w <= 16,
                "width {w}"
            );
            let text = start.to_string();
            assert_eq!(text.parse::<AnyPosition>(), Ok(start));
            let wide = WidePosition::start(rules(preset, w));
            assert_eq!(wide.to_string(), text);
            assert_eq!(text.parse::<WidePosition>(), Ok(wide));
        }
    }
    // The widest start: 192 seeds, within a wide board's 255.
    assert_eq!(
        AnyPosition::start(rules(Preset::Hus, 32)).total_seeds(),
        192
    );
}

#[test]
fn any_position_picks_the_narrow_board_when_it_fits() {
    let narrow: AnyPosition =
        "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,81 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0"
            .parse()
            .expect("parses");
    assert!(matches!(narrow, AnyPosition::Narrow(_)));
    assert_eq!(narrow.total_seeds(), 127);
    // More than 127 seeds at width 8: the wide board.
    let heavy: AnyPosition =
        "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,82 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0"
            .parse()
            .expect("parses");
    assert!(matches!(heavy, AnyPosition::Wide(_)));
    assert_eq!(heavy.total_seeds(), 128);
    assert_eq!(
        heavy.to_string(),
        "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,82 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0"
    );
}

#[test]
fn boards_too_big_are_refused_with_the_limit() {
    let mut setup = WidePosition::start(rules(Preset::Hus, 32)).to_setup();
    setup.pits[0][0] = 64;
    assert_eq!(
        AnyPosition::try_from(&setup),
        Err(SetupError::TooManySeeds {
            total: 256,
            max: 255
        })
    );
    assert_eq!(
        AnyPosition::try_from(&setup).map_err(|e| e.to_string()),
        Err("256 seeds on the board, at most 255 are supported".to_string())
    );
    setup.pits[0][0] = 63;
    assert_eq!(
        AnyPosition::try_from(&setup).map(|p| p.total_seeds()),
        Ok(255)
    );
    // A Position holds widths up to 16 only.
    let wide = Setup {
        rules: rules(Preset::Rulebook, 20),
        pits: [vec![0; 40], vec![0; 40]],
        to_move: Player::Zero,
    };
    assert_eq!(wide.validate(), Err(SetupError::TooWide { width: 20 }));
    let text = AnyPosition::try_from(&wide).expect("wide").to_string();
    assert_eq!(
        text.parse::<Position>().map_err(|e| e.to_string()),
        Err(
            "a width of 20 needs a wide board: a Position holds widths up to 16 (use AnyPosition)"
                .to_string()
        )
    );
    let short = Setup {
        pits: [vec![0; 40], vec![0; 39]],
        ..wide
    };
    assert_eq!(
        WidePosition::try_from(&short),
        Err(SetupError::PitCount {
            player: Player::One,
            expected: 40,
            found: 39
        })
    );
}

/// A row of `len` pits, empty but for `set` (pit, seeds).
fn row(len: usize, set: &[(usize, u8)]) -> String {
    let mut pits = vec![0u8; len];
    for &(pit, seeds) in set {
        pits[pit] = seeds;
    }
    pits.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

#[test]
fn a_capture_runs_along_a_long_front_row() {
    // Width 24, hus. Player 0 plays pit 18 (2 seeds): 19, then 20, which held 1: the
    // last seed lands in an occupied front pit; across from 20 is the opponent's pit 3.
    // Their front pits 0..=10 hold one seed each: the run toward their lower pits would
    // take 2, 1, 0 (3 seeds), the other way 4..=10 (7 seeds), so it runs up: 3, 4, ...,
    // 10, 8 seeds, sown from pit 20 itself to 27, an empty back pit.
    let before = format!(
        "hus 24 {}/{} {}/{} 0",
        row(24, &[(18, 2), (20, 1)]),
        row(24, &[]),
        row(24, &(0..=10).map(|p| (p, 1)).collect::<Vec<_>>()),
        row(24, &[])
    );
    let mut pos: AnyPosition = before.parse().expect("parses");
    assert!(matches!(pos, AnyPosition::Wide(_)));
    let report = pos.play(18).expect("legal");
    assert_eq!(
        pos.to_string(),
        format!(
            "hus 24 {}/{} {}/{} 1",
            row(24, &[(19, 1), (20, 3), (21, 1), (22, 1), (23, 1)]),
            row(24, &[(0, 1), (1, 1), (2, 1), (3, 1)]),
            row(24, &[(0, 1), (1, 1), (2, 1)]),
            row(24, &[])
        )
    );
    assert_eq!(report.summary.sown, 10);
    assert_eq!(report.summary.captured, 8);
    let capture = report.captures().next().expect("one capture");
    assert_eq!(
        capture.taken.iter().map(|t| t.pit).collect::<Vec<_>>(),
        (3..=10).collect::<Vec<u8>>()
    );
    assert_eq!(
        (capture.landing, capture.sown_from, capture.sown),
        (20, 20, 8)
    );
    // The plain implementation agrees.
    let expected = crate::reference::play(&crate::reference::parse(&before), 18).expect("legal");
    assert_eq!(pos.to_string(), expected.after);
}

#[test]
fn counts_past_127_sow_and_capture() {
    // Width 32 with 200 seeds, most of them in one pit: laps of 64 and a pit of 130.
    let before = format!(
        "rulebook 32 {}/{} {}/{} 0",
        row(32, &[(0, 130), (5, 2)]),
        row(32, &[(40 - 32, 3)]),
        row(32, &[(26, 60)]),
        row(32, &[(5, 5)])
    );
    let board = crate::reference::parse(&before);
    for pit in [0, 5, 40] {
        let mut pos: WidePosition = before.parse().expect("parses");
        let report = pos.play(pit).expect("legal");
        let expected = crate::reference::play(&board, pit).expect("legal");
        assert_eq!(pos.to_string(), expected.after, "pit {pit}");
        assert_eq!(report.summary.sown, expected.sown, "pit {pit}");
        assert_eq!(pos.total_seeds(), 200);
    }
}

#[test]
fn a_wide_game_ends_by_the_same_rules() {
    // Each player has one back pit of 2 at width 32: player 0 plays it, player 1 plays
    // theirs, and player 0 has no move left (NoMoves for player 0).
    let text = format!(
        "mancala-world 32 {}/{} {}/{} 0",
        row(32, &[]),
        row(32, &[(0, 2)]),
        row(32, &[]),
        row(32, &[(0, 2)])
    );
    let mut game = Game::new(text.parse::<AnyPosition>().expect("parses"));
    game.play(32).expect("legal");
    assert!(game.end().is_none());
    game.play(32).expect("legal");
    let end = game.end().expect("over");
    assert_eq!(
        (end.reason, end.winner),
        (EndReason::NoMoves, Some(Player::One))
    );
    assert_eq!(game.points(), Some([0, 1]));
    assert_eq!(
        engine::perft(&text.parse::<WidePosition>().expect("parses"), 3),
        [1, 1, 0]
    );
}

#[test]
fn narrow_and_wide_boards_play_the_same_games() {
    // The wide board at widths 8 to 16 must play exactly like the 64-byte one.
    let mut rng = crate::ends::Lcg(0x5eed);
    for game in 0..60 {
        let preset = Preset::ALL[game % 3];
        let width = 8 + game % 9;
        let start = Position::start(rules(preset, width));
        let wide = WidePosition::from_setup(&start.to_setup()).expect("fits");
        let (mut a, mut b) = (Game::new(start), Game::new(wide));
        while a.end().is_none() {
            let moves: Vec<usize> = a.position().legal_moves().collect();
            assert_eq!(b.position().legal_moves().collect::<Vec<_>>(), moves);
            let pit = moves[rng.below(moves.len())];
            let (ra, rb) = (a.play(pit).expect("legal"), b.play(pit).expect("legal"));
            assert_eq!(ra, rb);
            assert_eq!(a.position().to_string(), b.position().to_string());
        }
        assert_eq!(a.end(), b.end());
        assert_eq!(a.points(), b.points());
    }
}
