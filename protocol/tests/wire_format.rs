use protocol::{
    decode_bot_message, decode_referee_message, encode_line, BotMessage, Capture, FaultKind,
    GameResult, Outcome, Points, Preset, Reason, RefereeMessage, Side, TimeControl, Turn,
};

use crate::support::{bye, game, hello, result, start_pits, turn};

const HELLO: &str = concat!(
    r#"{"type":"hello","protocol":1,"referee":"hus 0.1.0","#,
    r#""rules":{"preset":"hus","width":8,"sowing":"clockwise","capture":"front-run","#,
    r#""captured_sown_from":"landing","scoring":"wins","double_win":true,"#,
    r#""min_seeds_to_move":2,"max_sown_per_move":3000,"no_capture_limit":200,"#,
    r#""repetition":true,"seeds_per_player":24},"#,
    r#""time":{"mode":"per-move","move_ms":1000,"ready_ms":10000},"#,
    r#""games":7,"line_limit":65536}"#,
    "\n"
);

const GAME: &str = concat!(
    r#"{"type":"game","game":1,"first":true,"#,
    r#""you":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2],"#,
    r#""opponent":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2]}"#,
    "\n"
);

const TURN: &str = concat!(
    r#"{"type":"turn","game":1,"ply":0,"#,
    r#""you":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2],"#,
    r#""opponent":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2],"#,
    r#""legal":[4,5,6,7,8,9,10,11,12,13,14,15],"last":null,"time_ms":1000}"#,
    "\n"
);

const RESULT: &str = concat!(
    r#"{"type":"result","game":1,"outcome":"win","reason":"no-moves","#,
    r#""points":{"you":1,"opponent":0},"last":7,"#,
    r#""you":[0,0,0,0,0,0,0,3,5,0,0,1,0,0,0,9],"#,
    r#""opponent":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"plies":37}"#,
    "\n"
);

const BYE: &str = "{\"type\":\"bye\",\"points\":{\"you\":5,\"opponent\":2},\"outcome\":\"win\"}\n";

#[test]
fn hello_exact_text() {
    assert_eq!(hello().to_line(), HELLO);
}

#[test]
fn game_exact_text() {
    assert_eq!(game().to_line(), GAME);
}

#[test]
fn turn_with_last_null_exact_text() {
    assert_eq!(turn().to_line(), TURN);
}

#[test]
fn result_exact_text() {
    assert_eq!(result().to_line(), RESULT);
}

#[test]
fn bye_exact_text() {
    assert_eq!(bye().to_line(), BYE);
}

#[test]
fn clock_turn_has_opponent_time_after_time_ms() {
    let RefereeMessage::Turn(mut t) = turn() else {
        panic!("turn() is a turn");
    };
    t.last = Some(11);
    t.ply = 1;
    t.opponent_time_ms = Some(59000);
    let line = RefereeMessage::Turn(t).to_line();
    assert!(
        line.ends_with("\"last\":11,\"time_ms\":1000,\"opponent_time_ms\":59000}\n"),
        "{line}"
    );
}

#[test]
fn clock_time_control_exact_text() {
    let time = TimeControl::Clock {
        base_ms: 60000,
        increment_ms: 1000,
        ready_ms: 10000,
    };
    assert_eq!(
        serde_json::to_string(&time).expect("serializes"),
        r#"{"mode":"clock","base_ms":60000,"increment_ms":1000,"ready_ms":10000}"#
    );
    assert_eq!(time.ready_ms(), Some(10000));
}

#[test]
fn fault_result_exact_text() {
    let msg = RefereeMessage::Result(GameResult {
        game: 3,
        outcome: Outcome::Loss,
        reason: Reason::Fault(FaultKind::TimeOut),
        points: Points {
            you: 0,
            opponent: 1,
        },
        last: None,
        you: start_pits(),
        opponent: start_pits(),
        plies: 0,
        fault_by: Some(Side::You),
        detail: Some("no move within 1000 ms".to_owned()),
    });
    let expected = concat!(
        r#"{"type":"result","game":3,"outcome":"loss","reason":"time-out","#,
        r#""points":{"you":0,"opponent":1},"last":null,"#,
        r#""you":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2],"#,
        r#""opponent":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2],"plies":0,"#,
        r#""fault_by":"you","detail":"no move within 1000 ms"}"#,
        "\n"
    );
    assert_eq!(msg.to_line(), expected);
    assert_eq!(decode_referee_message(expected).expect("decodes"), msg);
}

#[test]
fn bot_messages_exact_text() {
    assert_eq!(
        BotMessage::Ready {
            name: Some("greedy".to_owned())
        }
        .to_line(),
        "{\"type\":\"ready\",\"name\":\"greedy\"}\n"
    );
    assert_eq!(
        BotMessage::Ready { name: None }.to_line(),
        "{\"type\":\"ready\"}\n"
    );
    assert_eq!(
        BotMessage::Move { pit: 4 }.to_line(),
        "{\"type\":\"move\",\"pit\":4}\n"
    );
}

#[test]
fn every_referee_message_round_trips() {
    for (msg, text) in [
        (hello(), HELLO),
        (game(), GAME),
        (turn(), TURN),
        (result(), RESULT),
        (bye(), BYE),
    ] {
        assert_eq!(decode_referee_message(text).expect("decodes"), msg);
        assert_eq!(
            decode_referee_message(&msg.to_line()).expect("decodes"),
            msg
        );
    }
}

#[test]
fn every_bot_message_round_trips_through_the_strict_decoder() {
    for msg in [
        BotMessage::Ready { name: None },
        BotMessage::Ready {
            name: Some("alpha \"beta\"\n".to_owned()),
        },
        BotMessage::Move { pit: 0 },
        BotMessage::Move { pit: u64::MAX },
    ] {
        let line = msg.to_line();
        assert_eq!(line.matches('\n').count(), 1, "{line:?}");
        assert_eq!(decode_bot_message(line.as_bytes()), Ok(msg));
    }
}

#[test]
fn encode_line_escapes_inner_newlines() {
    let line = encode_line(&serde_json::json!({"detail": "a\nb\r\nc"})).expect("encodes");
    assert_eq!(line, "{\"detail\":\"a\\nb\\r\\nc\"}\n");
}

#[test]
fn referee_decoder_ignores_unknown_fields() {
    let line = concat!(
        r#"{"type":"bye","comment":{"nested":[1,2,3]},"points":{"you":5,"opponent":2,"#,
        r#""bonus":9},"outcome":"win","extra":null}"#
    );
    assert_eq!(decode_referee_message(line).expect("decodes"), bye());
}

#[test]
fn referee_decoder_turns_unknown_types_into_unknown() {
    let line = r#"{"type":"chat","text":"good luck","pits":[1,2]}"#;
    assert_eq!(
        decode_referee_message(line).expect("decodes"),
        RefereeMessage::Unknown
    );
}

#[test]
fn referee_decoder_accepts_surrounding_whitespace_and_cr() {
    let line = format!(" \t{}\r", BYE.trim_end());
    assert_eq!(decode_referee_message(&line).expect("decodes"), bye());
}

#[test]
fn referee_decoder_rejects_a_line_without_type() {
    let error =
        decode_referee_message(r#"{"points":{"you":5,"opponent":2}}"#).expect_err("no type");
    assert!(error
        .to_string()
        .starts_with("cannot decode the referee's line: "));
}

#[test]
fn unknown_reason_and_rule_values_still_decode() {
    let line = RESULT.replace("\"no-moves\"", "\"resigned\"");
    let RefereeMessage::Result(r) = decode_referee_message(&line).expect("decodes") else {
        panic!("a result");
    };
    assert_eq!(r.reason, Reason::Other("resigned".to_owned()));
    assert_eq!(r.reason.as_str(), "resigned");

    let line = HELLO
        .replace("\"preset\":\"hus\"", "\"preset\":\"oware\"")
        .replace("\"front-run\"", "\"sideways\"")
        .replace("\"mode\":\"per-move\"", "\"mode\":\"hourglass\"");
    let RefereeMessage::Hello(h) = decode_referee_message(&line).expect("decodes") else {
        panic!("a hello");
    };
    assert_eq!(h.rules.preset, Preset::Unknown);
    assert_eq!(h.rules.capture, Capture::Unknown);
    assert_eq!(h.time, TimeControl::Unknown);
    assert_eq!(h.time.ready_ms(), None);
}

#[test]
fn every_reason_string() {
    let names = [
        (Reason::NoMoves, "no-moves"),
        (Reason::Repetition, "repetition"),
        (Reason::NoCaptureLimit, "no-capture-limit"),
        (Reason::Fault(FaultKind::TimeOut), "time-out"),
        (Reason::Fault(FaultKind::StartUp), "start-up"),
        (Reason::Fault(FaultKind::Crash), "crash"),
        (Reason::Fault(FaultKind::Malformed), "malformed"),
        (Reason::Fault(FaultKind::WrongMessage), "wrong-message"),
        (Reason::Fault(FaultKind::InvalidPit), "invalid-pit"),
        (Reason::Fault(FaultKind::IllegalMove), "illegal-move"),
        (Reason::Fault(FaultKind::OversizedLine), "oversized-line"),
        (
            Reason::Fault(FaultKind::UnsolicitedMessage),
            "unsolicited-message",
        ),
    ];
    for (reason, name) in names {
        assert_eq!(reason.as_str(), name);
        assert_eq!(Reason::from_wire(name), reason);
        let json = serde_json::to_string(&reason).expect("serializes");
        assert_eq!(json, format!("\"{name}\""));
        assert_eq!(
            serde_json::from_str::<Reason>(&json).expect("decodes"),
            reason
        );
    }
    for kind in FaultKind::ALL {
        assert_eq!(
            serde_json::to_string(&kind).expect("serializes"),
            format!("\"{}\"", kind.as_str())
        );
        assert_eq!(Reason::from(kind).fault(), Some(kind));
    }
    assert_eq!(Reason::NoMoves.fault(), None);
}

#[test]
fn other_presets_serialize_as_documented() {
    assert_eq!(
        serde_json::to_string(&Preset::MancalaWorld).expect("serializes"),
        "\"mancala-world\""
    );
    assert_eq!(
        serde_json::to_string(&Capture::LandingAndAcross).expect("serializes"),
        "\"landing-and-across\""
    );
    assert_eq!(
        serde_json::to_string(&Capture::AcrossAndBehind).expect("serializes"),
        "\"across-and-behind\""
    );
    assert_eq!(
        serde_json::to_string(&protocol::Sowing::Anticlockwise).expect("serializes"),
        "\"anticlockwise\""
    );
    assert_eq!(
        serde_json::to_string(&protocol::CapturedSownFrom::Next).expect("serializes"),
        "\"next\""
    );
    assert_eq!(
        serde_json::to_string(&protocol::Scoring::Seeds).expect("serializes"),
        "\"seeds\""
    );
    assert_eq!(
        serde_json::to_string(&Outcome::Draw).expect("serializes"),
        "\"draw\""
    );
    assert_eq!(
        serde_json::to_string(&Side::Opponent).expect("serializes"),
        "\"opponent\""
    );
}

#[test]
fn turn_without_opponent_time_decodes_to_none() {
    let RefereeMessage::Turn(Turn {
        opponent_time_ms, ..
    }) = decode_referee_message(TURN).expect("decodes")
    else {
        panic!("a turn");
    };
    assert_eq!(opponent_time_ms, None);
}

#[test]
fn team_fields_exact_text_and_absent_otherwise() {
    // A team set: hello.team after every other field, game.order and opponent_order.
    let RefereeMessage::Hello(mut h) = hello() else {
        panic!("a hello");
    };
    h.team = Some(protocol::TeamInfo {
        name: "red".into(),
        members: vec!["greedy".into(), "random".into()],
        you: 1,
        opponent: "blue".into(),
        opponent_members: vec!["js".into(), "java".into(), "rust".into()],
    });
    let line = RefereeMessage::Hello(h.clone()).to_line();
    assert_eq!(
        line,
        HELLO.replace(
            "\"line_limit\":65536}",
            concat!(
                r#""line_limit":65536,"team":{"name":"red","members":["greedy","random"],"#,
                r#""you":1,"opponent":"blue","opponent_members":["js","java","rust"]}}"#
            )
        )
    );
    assert_eq!(
        decode_referee_message(&line).expect("decodes"),
        RefereeMessage::Hello(h)
    );
    let RefereeMessage::Game(mut g) = game() else {
        panic!("a game");
    };
    g.order = Some(vec![1, 0]);
    g.opponent_order = Some(vec![2, 0, 1]);
    assert_eq!(
        RefereeMessage::Game(g).to_line(),
        GAME.replace("]}\n", "],\"order\":[1,0],\"opponent_order\":[2,0,1]}\n")
    );
    // A hello or game of an ordinary set has none of them (the exact texts above), and
    // a bot library reading an ordinary hello gets `None`.
    let RefereeMessage::Hello(plain) = decode_referee_message(HELLO).expect("decodes") else {
        panic!("a hello");
    };
    assert_eq!(plain.team, None);
}
