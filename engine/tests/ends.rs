//! The end rules (in their order), game points under both scorings, and set scores.

use std::collections::HashMap;

use engine::{judge, EndReason, Game, GameEnd, Player, Position, Preset, Rules, SetScore, Setup};

fn pos(text: &str) -> Position {
    text.parse().expect("test position parses")
}

fn end(reason: EndReason, winner: Option<Player>, double: bool) -> Option<GameEnd> {
    Some(GameEnd {
        reason,
        winner,
        double,
    })
}

#[test]
fn no_pit_with_two_seeds_loses() {
    let p = pos("hus 8 1,0,1,0,1,0,1,0/1,1,1,1,1,1,1,1 0,0,0,0,0,0,0,0/2,0,0,0,0,0,0,0 0");
    assert_eq!(
        judge(&p, false, 0),
        end(EndReason::NoMoves, Some(Player::One), false)
    );
    // Checked first: it applies even on a repetition or at the capture limit.
    assert_eq!(
        judge(&p, true, 250),
        end(EndReason::NoMoves, Some(Player::One), false)
    );
}

#[test]
fn no_seeds_at_all_loses_double() {
    let p = pos("hus 8 0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0,0,0,0,0,0,0,0/2,0,0,0,0,0,0,0 0");
    let e = judge(&p, false, 0);
    assert_eq!(e, end(EndReason::NoMoves, Some(Player::One), true));
    let e = e.expect("over");
    assert_eq!(p.rules().points(&e, &p), [0, 2]);
    let mw =
        pos("mancala-world 8 0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0,0,0,0,0,0,0,0/2,0,0,0,0,0,0,0 0");
    assert_eq!(mw.rules().points(&e, &mw), [0, 1]);
    let rb = pos("rulebook 8 0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0,0,0,0,0,0,0,0/2,3,0,0,0,0,0,0 0");
    assert_eq!(rb.rules().points(&e, &rb), [0, 10]);
}

#[test]
fn repetition_and_capture_limit_go_to_the_player_with_more_seeds() {
    let p = pos("hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,3/2,2,2,2,2,2,2,2 0");
    assert_eq!(
        judge(&p, true, 0),
        end(EndReason::Repetition, Some(Player::One), false)
    );
    assert_eq!(judge(&p, false, 199), None);
    assert_eq!(
        judge(&p, false, 200),
        end(EndReason::NoCaptureLimit, Some(Player::One), false)
    );
    // Repetition is checked before the capture limit.
    assert_eq!(
        judge(&p, true, 200),
        end(EndReason::Repetition, Some(Player::One), false)
    );
    let rb = pos("rulebook 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,3/2,2,2,2,2,2,2,2 0");
    let e = judge(&rb, true, 0).expect("over");
    assert_eq!(rb.rules().points(&e, &rb), [24, 25]);
    assert_eq!(p.rules().points(&e, &p), [0, 1]);
}

#[test]
fn equal_seeds_is_a_draw() {
    let p = pos("hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 1");
    let e = judge(&p, true, 0);
    assert_eq!(e, end(EndReason::Repetition, None, false));
    assert_eq!(p.rules().points(&e.expect("over"), &p), [0, 0]);
    let e = judge(&p, false, 200);
    assert_eq!(e, end(EndReason::NoCaptureLimit, None, false));
}

#[test]
fn capturing_the_last_seeds_wins_double_in_each_scoring() {
    // Player 1's only seeds are in front pit 4, across from player 0's pit 3.
    for (preset, points) in [
        (Preset::Hus, [2, 0]),
        (Preset::MancalaWorld, [1, 0]),
        (Preset::Rulebook, [2 * 8, 0]),
    ] {
        let text =
            format!("{preset} 8 0,2,0,1,0,0,0,0/0,0,0,0,0,0,0,0 0,0,0,0,5,0,0,0/0,0,0,0,0,0,0,0 0");
        let mut game = Game::new(pos(&text));
        game.play(1).expect("legal");
        assert_eq!(
            game.end(),
            Some(&GameEnd {
                reason: EndReason::NoMoves,
                winner: Some(Player::Zero),
                double: true
            }),
            "{preset}"
        );
        assert_eq!(game.points(), Some(points), "{preset}");
        assert_eq!(game.play(4), Err(engine::PlayError::GameOver));
    }
}

#[test]
fn a_fault_is_an_ordinary_win_or_every_seed_under_rulebook() {
    for (preset, points) in [
        (Preset::Hus, [0, 1]),
        (Preset::MancalaWorld, [0, 1]),
        (Preset::Rulebook, [0, 48]),
    ] {
        let mut game = Game::new(Position::start(Rules::new(preset, 8).expect("valid")));
        game.play(8).expect("legal");
        game.forfeit(Player::Zero);
        assert_eq!(
            game.end(),
            Some(&GameEnd {
                reason: EndReason::Fault,
                winner: Some(Player::One),
                double: false
            })
        );
        assert_eq!(game.points(), Some(points), "{preset}");
    }
}

/// A small deterministic generator, so the tests need no dependency.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Random games, with the end rules re-derived independently: positions are remembered
/// by their notation, captures counted from the reports.
#[test]
fn random_games_end_exactly_when_the_rules_say() {
    let mut rng = Lcg(7);
    let mut seen_reasons: HashMap<EndReason, u32> = HashMap::new();
    for g in 0..600 {
        let preset = Preset::ALL[g % 3];
        let width = [8, 8, 9, 12, 16][g % 5];
        let rules = Rules::new(preset, width).expect("valid");
        // Half the games from the start, half from boards of "walkers": a pit of 2 before
        // a pit of 1 sows into that pit and the empty one after it, which moves the pair
        // one pit on without a capture, so such games go round in circles or run into the
        // capture limit.
        let start = if g % 2 == 0 {
            Position::start(rules)
        } else {
            let mut pits = [vec![0u8; 2 * width], vec![0u8; 2 * width]];
            for side in &mut pits {
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(2 * width);
                    side[at] = 2;
                    side[(at + 1) % (2 * width)] = 1;
                }
            }
            Setup {
                rules,
                pits,
                to_move: Player::Zero,
            }
            .validate()
            .expect("valid")
        };
        let mut game = Game::new(start);
        let mut seen: HashMap<String, u32> = HashMap::new();
        seen.insert(game.position().to_string(), 0);
        let mut quiet = 0;
        let mut plies = 0;
        loop {
            let p = *game.position();
            let moves: Vec<usize> = p.legal_moves().collect();
            let end = game.end().copied();
            if moves.is_empty() {
                assert_eq!(end.map(|e| e.reason), Some(EndReason::NoMoves));
                break;
            }
            if seen[&p.to_string()] < plies {
                assert_eq!(end.map(|e| e.reason), Some(EndReason::Repetition), "{p}");
                break;
            }
            if quiet >= 200 {
                assert_eq!(end.map(|e| e.reason), Some(EndReason::NoCaptureLimit));
                assert_eq!(quiet, 200);
                break;
            }
            assert_eq!(end, None, "game over too early at ply {plies}: {p}");
            let pit = moves[rng.below(moves.len())];
            let report = game.play(pit).expect("legal");
            quiet = if report.captures().count() > 0 {
                0
            } else {
                quiet + 1
            };
            plies += 1;
            seen.entry(game.position().to_string()).or_insert(plies);
        }
        assert_eq!(game.plies(), plies);
        *seen_reasons
            .entry(game.end().expect("over").reason)
            .or_default() += 1;
    }
    // Each end rule must actually have been exercised.
    for reason in [
        EndReason::NoMoves,
        EndReason::Repetition,
        EndReason::NoCaptureLimit,
    ] {
        assert!(
            seen_reasons.get(&reason).copied().unwrap_or(0) > 0,
            "no game ended by {reason}: {seen_reasons:?}"
        );
    }
}

#[test]
fn set_scores_add_up_and_know_when_they_are_decided() {
    let mut set = SetScore::default();
    set.record([1, 0], Some(0));
    set.record([0, 2], Some(1));
    set.record([0, 0], None);
    set.record([1, 0], Some(0));
    assert_eq!(set.points, [2, 2]);
    assert_eq!(set.wins, [2, 1]);
    assert_eq!(set.draws, 1);
    assert_eq!(set.games(), 4);
    assert_eq!(set.leader(), None);
    set.record([1, 0], Some(0));
    assert_eq!(set.leader(), Some(0));
    assert!(!set.decided(1, 2));
    assert!(set.decided(0, 2));
    let hus = Rules::new(Preset::Hus, 8).expect("valid");
    let rb = Rules::new(Preset::Rulebook, 8).expect("valid");
    let mw = Rules::new(Preset::MancalaWorld, 8).expect("valid");
    assert_eq!([hus, rb, mw].map(|r| r.max_points_per_game()), [2, 96, 1]);
    let mut seeds = SetScore::default();
    seeds.record([30, 18], Some(0));
    seeds.record([0, 48], Some(1));
    assert_eq!(seeds.points, [30, 66]);
    assert_eq!(seeds.leader(), Some(1));
}

#[test]
fn repetition_ends_the_game_on_the_second_occurrence() {
    // Each side has one "walker": pit 0 holds 2 and pit 1 holds 1. Playing the 2 sows
    // pits 1 and 2 and ends in the empty one, so the pair moves one pit on; the only
    // move is forced and nothing is ever captured. After 16 moves each (32 plies) both
    // rings are back where they started, with player 0 to move: the start position has
    // occurred for the second time.
    let start = pos("hus 8 2,1,0,0,0,0,0,0/0,0,0,0,0,0,0,0 2,1,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0");
    let mut game = Game::new(start);
    let mut seen = vec![start];
    for ply in 0..32 {
        assert_eq!(game.end(), None, "over early at ply {ply}");
        let moves: Vec<usize> = game.position().legal_moves().collect();
        assert_eq!(moves, [ply / 2 % 16], "the walker's pit at ply {ply}");
        game.play(moves[0]).expect("legal");
        seen.push(*game.position());
    }
    assert_eq!(*game.position(), start);
    // The history is every position in order, the start first and again last.
    assert_eq!(game.history().len(), 33);
    assert_eq!(game.history().copied().collect::<Vec<_>>(), seen);
    assert_eq!(game.history().next(), Some(&start));
    assert_eq!(
        game.end(),
        Some(&GameEnd {
            reason: EndReason::Repetition,
            winner: None,
            double: false
        })
    );
    assert_eq!(game.quiet_plies(), 32);
    assert_eq!(game.points(), Some([0, 0]));
}
