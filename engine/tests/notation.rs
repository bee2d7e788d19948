//! The one-line notation: exact text, round trips, and one clear error per mistake.

use engine::{Player, Position, Preset, Rules};

#[test]
fn starting_positions_round_trip_at_every_width() {
    for preset in Preset::ALL {
        for width in 8..=16 {
            let pos = Position::start(Rules::new(preset, width).expect("valid"));
            let text = pos.to_string();
            let back: Position = text.parse().expect("round trip");
            assert_eq!(back, pos, "{text}");
            assert_eq!(back.to_string(), text);
        }
    }
}

#[test]
fn side_to_move_and_seed_counts_are_read() {
    let pos: Position =
        "rulebook 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,12 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 1"
            .parse()
            .expect("parses");
    assert_eq!(pos.to_move(), Player::One);
    assert_eq!(pos.seeds(Player::Zero, 15), 12);
    assert_eq!(pos.rules().preset(), Preset::Rulebook);
    assert_eq!(pos.width(), 8);
}

fn error(text: &str) -> String {
    match text.parse::<Position>() {
        Ok(p) => panic!("{text:?} parsed as {p}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn each_mistake_has_its_own_message() {
    let ok_side = "0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2";
    assert_eq!(
        error("hus 8"),
        "expected 5 fields separated by spaces (PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK \
         TOMOVE), found 2"
    );
    assert_eq!(
        error(&format!("chess 8 {ok_side} {ok_side} 0")),
        "unknown rules preset \"chess\" (expected hus, rulebook or mancala-world)"
    );
    assert_eq!(
        error(&format!("hus 7 {ok_side} {ok_side} 0")),
        "row width 7 is out of range (expected 8 to 32)"
    );
    assert_eq!(
        error(&format!("hus eight {ok_side} {ok_side} 0")),
        "width \"eight\" is not a number"
    );
    assert_eq!(
        error(&format!("hus 8 0,0,0,0,2,2,2,2 {ok_side} 0")),
        "player 0's pits \"0,0,0,0,2,2,2,2\" should be FRONT/BACK, two comma-separated rows"
    );
    assert_eq!(
        error(&format!("hus 8 {ok_side} 0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0")),
        "player 1's front row has 7 pits, expected 8"
    );
    assert_eq!(
        error(&format!(
            "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,x,2 {ok_side} 0"
        )),
        "player 0's pit 14: \"x\" is not a seed count (0 to 255)"
    );
    assert_eq!(
        error(&format!(
            "hus 8 0,0,0,0,2,2,2,-1/2,2,2,2,2,2,2,2 {ok_side} 0"
        )),
        "player 0's pit 7: \"-1\" is not a seed count (0 to 255)"
    );
    assert_eq!(
        error(&format!("hus 8 {ok_side} {ok_side} 2")),
        "side to move \"2\" should be 0 or 1"
    );
    assert_eq!(
        error(&format!(
            "hus 8 100,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 {ok_side} 0"
        )),
        "148 seeds on the board, at most 127 are supported"
    );
    assert_eq!(
        error(&format!("hus 33 {ok_side} {ok_side} 0")),
        "row width 33 is out of range (expected 8 to 32)"
    );
    assert_eq!(
        error(&format!(
            "hus 8 0,0,0,0,2,2,2,256/2,2,2,2,2,2,2,2 {ok_side} 0"
        )),
        "player 0's pit 7: \"256\" is not a seed count (0 to 255)"
    );
}
