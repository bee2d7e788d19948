//! `Playouts` and `Game::play_out` against the slow path (`Game::play`, one move at a
//! time) and against the reference implementation's own game loop: every playout must
//! end exactly as a real game of the same moves, with the game's history counted.

use std::collections::HashMap;

use engine::{
    AnyPosition, Board, EndReason, Game, Player, Playouts, Position, Preset, Rules, Setup,
};
use proptest::prelude::*;

use crate::ends::Lcg;
use crate::reference;

/// The moves of a playout drawn from `seed`: an index below the number of legal moves.
fn chooser(seed: u64) -> impl FnMut(usize) -> usize {
    let mut rng = Lcg(seed);
    move |moves| rng.below(moves)
}

/// `game` played on with `Game::play`, one move at a time, the moves picked by `choose`
/// among the legal pits in increasing order.
fn slow<B: Board>(game: &Game<B>, mut choose: impl FnMut(usize) -> usize) -> Game<B> {
    let mut game = game.clone();
    while game.end().is_none() {
        let moves: Vec<usize> = game.position().legal_moves().collect();
        game.play(moves[choose(moves.len())]).expect("a legal pit");
    }
    game
}

/// A game from `start` with `plies` random moves already played (fewer if it ends).
fn game_after<B: Board>(start: B, plies: usize, seed: u64) -> Game<B> {
    let mut game = Game::new(start);
    let mut choose = chooser(seed);
    for _ in 0..plies {
        if game.end().is_some() {
            break;
        }
        let moves: Vec<usize> = game.position().legal_moves().collect();
        game.play(moves[choose(moves.len())]).expect("a legal pit");
    }
    game
}

/// Plays `count` playouts of `game` with `Playouts` (seeds `seed`, `seed + 1`...) and
/// checks each against `Game::play`, `Game::play_out` and the reference's game loop:
/// the same end (reason, winner, double), last position, plies and points. Returns the
/// end reasons.
fn check<B: Board>(game: &Game<B>, count: u64, seed: u64) -> Vec<EndReason> {
    let mut playouts = Playouts::new(game);
    let earlier: Vec<String> = game.history().map(|p| p.to_string()).collect();
    let earlier = &earlier[..earlier.len() - 1];
    let rules = game.rules();
    let mut reasons = Vec::new();
    for s in seed..seed + count {
        let fast = playouts.play(chooser(s));
        let slow = slow(game, chooser(s));
        let slow_end = *slow.end().expect("over");
        assert_eq!(fast.end, slow_end, "seed {s} from {}", game.position());
        assert_eq!(fast.position, *slow.position(), "seed {s}");
        assert_eq!(fast.plies, slow.plies() - game.plies(), "seed {s}");
        assert_eq!(
            rules.points(&fast.end, &fast.position),
            slow.points().expect("over")
        );

        let mut out = game.clone();
        assert_eq!(out.play_out(chooser(s)), slow_end, "seed {s}");
        assert_eq!(
            out.history().collect::<Vec<_>>(),
            slow.history().collect::<Vec<_>>()
        );
        assert_eq!(out.quiet_plies(), slow.quiet_plies());

        let plain = reference::play_out(
            &game.position().to_string(),
            earlier,
            game.quiet_plies(),
            chooser(s),
        );
        assert_eq!(plain.reason, fast.end.reason.name(), "seed {s}");
        assert_eq!(plain.winner, fast.end.winner.map(|p| p.index()), "seed {s}");
        assert_eq!(plain.last, fast.position.to_string(), "seed {s}");
        assert_eq!(plain.plies, fast.plies, "seed {s}");
        reasons.push(fast.end.reason);
    }
    reasons
}

/// A board of "walkers" (as in `ends.rs`): on each side one to three pits of 2 before
/// a pit of 1, which move round without a capture, so that games end by repetition or
/// the capture limit as well as without moves.
fn walkers(rules: Rules, rng: &mut Lcg) -> Position {
    let n = rules.pits();
    let mut pits = [vec![0u8; n], vec![0u8; n]];
    for side in &mut pits {
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(n);
            side[at] = 2;
            side[(at + 1) % n] = 1;
        }
    }
    Setup {
        rules,
        pits,
        to_move: Player::Zero,
    }
    .validate()
    .expect("valid")
}

/// Many random playouts, from the start (after 0, 3 or 12 plies) and from boards of
/// walkers: every end rule is met, and each playout ends as the slow path and the
/// reference end the same game.
#[test]
fn playouts_end_as_the_same_games_played_move_by_move() {
    let mut reasons: HashMap<EndReason, u32> = HashMap::new();
    let mut rng = Lcg(11);
    for (g, preset) in Preset::ALL.into_iter().enumerate() {
        for width in [8, 9, 12, 16] {
            let rules = Rules::new(preset, width).expect("valid");
            for opening in [0, 3, 12] {
                let game = game_after(
                    Position::start(rules),
                    opening,
                    g as u64 + 100 * opening as u64,
                );
                for reason in check(&game, 25, 1_000 * opening as u64) {
                    *reasons.entry(reason).or_default() += 1;
                }
                let game = game_after(walkers(rules, &mut rng), opening, 7 + opening as u64);
                for reason in check(&game, 25, 2_000 * opening as u64) {
                    *reasons.entry(reason).or_default() += 1;
                }
            }
        }
    }
    assert_eq!(reasons.values().sum::<u32>(), 3 * 4 * 3 * 2 * 25);
    for reason in [
        EndReason::NoMoves,
        EndReason::Repetition,
        EndReason::NoCaptureLimit,
    ] {
        assert!(
            reasons.get(&reason).copied().unwrap_or(0) >= 10,
            "few playouts ended by {reason}: {reasons:?}"
        );
    }
}

/// A game already over ends every playout at once, as it ended; one forfeited too.
#[test]
fn a_game_over_ends_its_playouts_at_once() {
    let pos: Position = "hus 8 0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,0 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0"
        .parse()
        .expect("valid");
    let game = Game::new(pos);
    let mut playouts = Playouts::new(&game);
    let end = playouts.play(|_| 0);
    assert_eq!(Some(&end.end), game.end());
    assert_eq!((end.position, end.plies), (pos, 0));

    let mut forfeited = Game::new(Position::start(Rules::default()));
    forfeited.forfeit(Player::Zero);
    let end = Playouts::new(&forfeited).play(|_| 0);
    assert_eq!(end.end.reason, EndReason::Fault);
    assert_eq!(end.plies, 0);
    assert_eq!(forfeited.clone().play_out(|_| 0).reason, EndReason::Fault);
}

/// An index past the number of legal moves is taken modulo the number.
#[test]
fn an_index_past_the_moves_wraps() {
    let game = Game::new(Position::start(Rules::default()));
    let mut playouts = Playouts::new(&game);
    let mut big = chooser(9);
    let a = playouts.play(chooser(9));
    let b = playouts.play(|moves| big(moves) + 5 * moves);
    assert_eq!(a, b);
}

proptest! {
    // Each case plays whole games three ways, the reference's on notation strings: fewer
    // cases than the default keep the test to seconds.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn playouts_from_random_positions_end_as_the_reference(
        preset in 0..3usize,
        width in 8..=16usize,
        opening in 0..40usize,
        seed in any::<u64>(),
    ) {
        let start = Position::start(Rules::new(Preset::ALL[preset], width).expect("valid"));
        check(&game_after(start, opening, seed), 3, seed);
    }

    #[test]
    fn playouts_on_wide_boards_end_as_the_reference(
        preset in 0..3usize,
        width in 17..=32usize,
        opening in 0..40usize,
        seed in any::<u64>(),
    ) {
        let start = AnyPosition::start(Rules::new(Preset::ALL[preset], width).expect("valid"));
        let AnyPosition::Wide(start) = start else {
            panic!("width {width} is a wide board");
        };
        check(&game_after(start, opening, seed), 2, seed);
    }
}

proptest! {
    #[test]
    fn nth_is_the_nth_pit(mask in any::<u64>(), n in 0usize..70) {
        let moves = engine::Moves::from_mask(mask);
        let pits: Vec<usize> = moves.collect();
        let mut nth = moves;
        prop_assert_eq!(nth.nth(n), pits.get(n).copied());
        prop_assert_eq!(nth.collect::<Vec<_>>(), pits.get(n + 1..).unwrap_or(&[]).to_vec());
    }
}
