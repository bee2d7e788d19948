//! Properties of every move on random positions, and the engine against the plain
//! reference implementation.

use engine::{perft, AnyPosition, Board, Game, Player, Position, Preset, Rules, Setup};
use proptest::prelude::*;

use crate::reference;

/// Random positions: any preset and width, up to 5 seeds a pit (within the 127 limit).
fn any_position() -> impl Strategy<Value = Position> {
    (0..3usize, 8..=16usize, any::<bool>())
        .prop_flat_map(|(preset, width, one)| {
            let pits = proptest::collection::vec(0u8..=5, 2 * width);
            (Just(preset), Just(width), Just(one), pits.clone(), pits)
        })
        .prop_filter_map("too many seeds", |(preset, width, one, a, b)| {
            Setup {
                rules: Rules::new(Preset::ALL[preset], width).ok()?,
                pits: [a, b],
                to_move: if one { Player::One } else { Player::Zero },
            }
            .validate()
            .ok()
        })
}

/// Random wide boards: any preset at widths 17 to 32, up to 3 seeds a pit, or at widths
/// 8 to 16 with one heavy pit, so that the board holds more than 127 seeds (at most 255).
fn wide_position() -> impl Strategy<Value = AnyPosition> {
    (0..3usize, 8..=32usize, any::<bool>(), 0u8..=130)
        .prop_flat_map(|(preset, width, one, heavy)| {
            let pits = proptest::collection::vec(0u8..=3, 2 * width);
            (
                Just(preset),
                Just(width),
                Just(one),
                Just(heavy),
                pits.clone(),
                pits,
            )
        })
        .prop_filter_map(
            "not a wide board",
            |(preset, width, one, heavy, mut a, b)| {
                if width <= 16 {
                    a[width + 1] = heavy;
                }
                let pos = AnyPosition::try_from(&Setup {
                    rules: Rules::new(Preset::ALL[preset], width).ok()?,
                    pits: [a, b],
                    to_move: if one { Player::One } else { Player::Zero },
                })
                .ok()?;
                matches!(pos, AnyPosition::Wide(_)).then_some(pos)
            },
        )
}

proptest! {
    #[test]
    fn wide_boards_agree_with_the_reference(pos in wide_position()) {
        let board = reference::parse(&pos.to_string());
        for pit in 0..2 * pos.width() + 1 {
            let mut after = pos;
            match (after.play(pit), reference::play(&board, pit)) {
                (Ok(report), Some(expected)) => {
                    prop_assert_eq!(after.to_string(), expected.after);
                    prop_assert_eq!(report.summary.sown, expected.sown);
                    prop_assert_eq!(report.summary.captures, expected.captures);
                    prop_assert_eq!(report.summary.truncated, expected.truncated);
                    prop_assert_eq!(after.total_seeds(), pos.total_seeds());
                    prop_assert_eq!(after.to_move(), pos.to_move().other());
                }
                (Err(_), None) => prop_assert_eq!(after, pos),
                (got, want) => prop_assert!(false, "pit {}: engine {:?}, reference legal: {}", pit, got, want.is_some()),
            }
        }
    }

    #[test]
    fn wide_notation_round_trips(pos in wide_position()) {
        let text = pos.to_string();
        let back: AnyPosition = text.parse().expect("round trip");
        prop_assert_eq!(back, pos);
        prop_assert_eq!(AnyPosition::try_from(&back.to_setup()), Ok(pos));
    }

    #[test]
    fn wide_perft_agrees_with_a_count_over_games(pos in wide_position()) {
        let fast = perft(&pos, 2);
        let mut slow = vec![0u64; 2];
        count(&Game::new(pos), 0, &mut slow);
        prop_assert_eq!(&fast, &slow);
        let AnyPosition::Wide(inner) = pos else { unreachable!("wide_position is wide") };
        prop_assert_eq!(perft(&inner, 2), fast);
    }

    #[test]
    fn every_move_conserves_seeds(pos in any_position()) {
        for pit in pos.legal_moves() {
            let mut after = pos;
            after.play(pit).expect("legal");
            prop_assert_eq!(after.total_seeds(), pos.total_seeds());
            prop_assert_eq!(after.to_move(), pos.to_move().other());
            prop_assert_eq!(after.rules(), pos.rules());
        }
    }

    #[test]
    fn play_is_deterministic(pos in any_position()) {
        for pit in pos.legal_moves() {
            let (mut a, mut b) = (pos, pos);
            let (ra, rb) = (a.play(pit), b.play(pit));
            prop_assert_eq!(a, b);
            prop_assert_eq!(ra, rb);
        }
    }

    #[test]
    fn a_pit_is_legal_exactly_when_it_holds_two_or_more(pos in any_position(), pit in 0usize..40) {
        let n = 2 * pos.width();
        let holds = if pit < n { pos.seeds(pos.to_move(), pit) } else { 0 };
        prop_assert_eq!(pos.is_legal(pit), pit < n && holds >= 2);
        prop_assert_eq!(pos.legal_moves().contains(pit), pit < n && holds >= 2);
        let mut after = pos;
        let result = after.play(pit);
        prop_assert_eq!(result.is_ok(), pit < n && holds >= 2);
        if result.is_err() {
            prop_assert_eq!(after, pos);
        }
    }

    #[test]
    fn the_engine_agrees_with_the_reference(pos in any_position()) {
        let board = reference::parse(&pos.to_string());
        for pit in 0..2 * pos.width() {
            let mut after = pos;
            match (after.play(pit), reference::play(&board, pit)) {
                (Ok(report), Some(expected)) => {
                    prop_assert_eq!(after.to_string(), expected.after);
                    prop_assert_eq!(report.summary.sown, expected.sown);
                    prop_assert_eq!(report.summary.captures, expected.captures);
                    prop_assert_eq!(report.summary.truncated, expected.truncated);
                    prop_assert_eq!(report.captures().count() as u32, expected.captures);
                }
                (Err(_), None) => {}
                (got, want) => prop_assert!(false, "pit {}: engine {:?}, reference legal: {}", pit, got, want.is_some()),
            }
        }
    }

    #[test]
    fn notation_round_trips(pos in any_position()) {
        let text = pos.to_string();
        let back: Position = text.parse().expect("round trip");
        prop_assert_eq!(back, pos);
        prop_assert_eq!(back.to_setup().validate(), Ok(pos));
    }

    #[test]
    fn perft_agrees_with_a_count_over_games(pos in any_position()) {
        let fast = perft(&pos, 3);
        let mut slow = vec![0u64; 3];
        count(&Game::new(pos), 0, &mut slow);
        prop_assert_eq!(fast, slow);
    }

    #[test]
    fn random_games_always_end(preset in 0..3usize, width in 8..=16usize, seed in any::<u64>()) {
        let mut game = Game::new(Position::start(Rules::new(Preset::ALL[preset], width).expect("valid")));
        let mut rng = crate::ends::Lcg(seed);
        while game.end().is_none() {
            let moves: Vec<usize> = game.position().legal_moves().collect();
            game.play(moves[rng.below(moves.len())]).expect("legal");
            prop_assert!(game.plies() < 100_000);
        }
        let points = game.points().expect("over");
        prop_assert!(points[0] == 0 || points[1] == 0 || Preset::ALL[preset] == Preset::Rulebook);
    }
}

/// Perft the slow way: clone the whole game at every node.
fn count<B: Board>(game: &Game<B>, ply: usize, counts: &mut [u64]) {
    if ply == counts.len() || game.end().is_some() {
        return;
    }
    for pit in game.position().legal_moves() {
        counts[ply] += 1;
        let mut child = game.clone();
        child.play(pit).expect("legal");
        count(&child, ply + 1, counts);
    }
}
