use protocol::{
    decode_bot_message, BadLineKind, BotMessage, DecodeError, FaultKind, JsonKind, PitProblem,
};

/// Decodes a line that must fail, checking the message a bot author sees and the kind.
fn rejects(line: &[u8], message: &str, kind: BadLineKind) -> DecodeError {
    let error = decode_bot_message(line).expect_err("the line is invalid");
    assert_eq!(error.to_string(), message, "line {line:?}");
    assert_eq!(error.kind(), kind, "line {line:?}");
    error
}

fn pit_rejected(pit: &str, message: &str, problem: PitProblem) {
    let line = format!(r#"{{"type":"move","pit":{pit}}}"#);
    let error = rejects(line.as_bytes(), message, BadLineKind::InvalidPit);
    match error {
        DecodeError::InvalidPit { problem: p, .. } => assert_eq!(p, problem, "pit {pit}"),
        other => panic!("pit {pit}: {other:?}"),
    }
}

#[test]
fn move_and_ready_decode() {
    assert_eq!(
        decode_bot_message(br#"{"type":"move","pit":4}"#),
        Ok(BotMessage::Move { pit: 4 })
    );
    assert_eq!(
        decode_bot_message(br#"{"type":"ready","name":"greedy"}"#),
        Ok(BotMessage::Ready {
            name: Some("greedy".to_owned())
        })
    );
    assert_eq!(
        decode_bot_message(br#"{"type":"ready"}"#),
        Ok(BotMessage::Ready { name: None })
    );
    assert_eq!(
        decode_bot_message(br#"{"type":"ready","name":null}"#),
        Ok(BotMessage::Ready { name: None })
    );
}

#[test]
fn unknown_fields_are_ignored() {
    assert_eq!(
        decode_bot_message(
            br#"{"pit":4,"eval":-3.5,"pv":[4,9,1e999],"info":{"depth":7},"type":"move"}"#
        ),
        Ok(BotMessage::Move { pit: 4 })
    );
    assert_eq!(
        decode_bot_message(br#"{"type":"ready","name":"ab","author":"me","version":"1.2"}"#),
        Ok(BotMessage::Ready {
            name: Some("ab".to_owned())
        })
    );
}

#[test]
fn a_ready_may_carry_a_pit_and_a_move_a_name() {
    assert_eq!(
        decode_bot_message(br#"{"type":"move","pit":3,"name":5}"#),
        Ok(BotMessage::Move { pit: 3 })
    );
    assert_eq!(
        decode_bot_message(br#"{"type":"ready","pit":"x"}"#),
        Ok(BotMessage::Ready { name: None })
    );
}

#[test]
fn whitespace_and_cr_around_the_object_are_accepted() {
    assert_eq!(
        decode_bot_message(b" \t{ \"type\" : \"move\" , \"pit\" : 12 }\t \r"),
        Ok(BotMessage::Move { pit: 12 })
    );
}

#[test]
fn escaped_type_and_name_are_unescaped() {
    assert_eq!(
        decode_bot_message(br#"{"type":"mo\u0076e","pit":1}"#),
        Ok(BotMessage::Move { pit: 1 })
    );
    assert_eq!(
        decode_bot_message(br#"{"type":"ready","name":"caf\u00e9"}"#),
        Ok(BotMessage::Ready {
            name: Some("café".to_owned())
        })
    );
}

#[test]
fn not_utf8_says_where() {
    let error = rejects(
        b"{\"type\":\"move\",\"pit\":\xff}",
        "line is not valid UTF-8 (invalid byte at offset 21)",
        BadLineKind::Malformed,
    );
    assert_eq!(error, DecodeError::NotUtf8 { offset: 21 });
}

#[test]
fn not_json_gives_the_parser_message() {
    rejects(
        b"move 4",
        "line is not valid JSON: expected value at line 1 column 1",
        BadLineKind::Malformed,
    );
    rejects(
        br#"{"type":"move","pit":4"#,
        "line is not valid JSON: EOF while parsing an object at line 1 column 22",
        BadLineKind::Malformed,
    );
    rejects(
        br#"{"type":"move","pit":4} {"type":"move","pit":5}"#,
        "line is not valid JSON: trailing characters at line 1 column 25",
        BadLineKind::Malformed,
    );
    rejects(
        b"",
        "line is not valid JSON: EOF while parsing a value at line 1 column 0",
        BadLineKind::Malformed,
    );
}

#[test]
fn not_an_object_says_what_it_is() {
    let cases = [
        (&b"4"[..], JsonKind::Number, "a number"),
        (b"1e999", JsonKind::Number, "a number"),
        (b"[4]", JsonKind::Array, "an array"),
        (br#""move""#, JsonKind::String, "a string"),
        (b"true", JsonKind::Bool, "a boolean"),
        (b"null", JsonKind::Null, "null"),
    ];
    for (line, found, words) in cases {
        let error = rejects(
            line,
            &format!(
                r#"line must be a JSON object such as {{"type":"move","pit":4}}, got {words}"#
            ),
            BadLineKind::Malformed,
        );
        assert_eq!(error, DecodeError::NotAnObject { found });
    }
}

#[test]
fn missing_type() {
    let error = rejects(
        br#"{"pit":4}"#,
        r#"message has no "type" field"#,
        BadLineKind::Malformed,
    );
    assert_eq!(error, DecodeError::MissingType);
}

#[test]
fn type_not_a_string() {
    let error = rejects(
        br#"{"type":4,"pit":4}"#,
        r#""type" must be a string, got a number"#,
        BadLineKind::Malformed,
    );
    assert_eq!(
        error,
        DecodeError::TypeNotString {
            found: JsonKind::Number
        }
    );
    rejects(
        br#"{"type":null}"#,
        r#""type" must be a string, got null"#,
        BadLineKind::Malformed,
    );
    rejects(
        br#"{"type":["move"]}"#,
        r#""type" must be a string, got an array"#,
        BadLineKind::Malformed,
    );
}

#[test]
fn duplicate_fields_are_rejected() {
    let error = rejects(
        br#"{"type":"move","pit":4,"pit":5}"#,
        r#"field "pit" appears more than once"#,
        BadLineKind::Malformed,
    );
    assert_eq!(error, DecodeError::DuplicateField { field: "pit" });
    rejects(
        br#"{"type":"move","type":"ready"}"#,
        r#"field "type" appears more than once"#,
        BadLineKind::Malformed,
    );
    // Fields the decoder does not read may repeat.
    assert_eq!(
        decode_bot_message(br#"{"type":"move","x":1,"x":2,"pit":4}"#),
        Ok(BotMessage::Move { pit: 4 })
    );
}

#[test]
fn unknown_type_is_named() {
    let error = rejects(
        br#"{"type":"Move","pit":4}"#,
        r#"unknown message type "Move" (a bot sends "ready" or "move")"#,
        BadLineKind::WrongMessage,
    );
    assert_eq!(
        error,
        DecodeError::UnknownType {
            name: "Move".to_owned()
        }
    );
    rejects(
        br#"{"type":"hello"}"#,
        r#"unknown message type "hello" (a bot sends "ready" or "move")"#,
        BadLineKind::WrongMessage,
    );
}

#[test]
fn a_long_unknown_type_is_cut_in_the_message() {
    let line = format!(r#"{{"type":"{}"}}"#, "x".repeat(100));
    rejects(
        line.as_bytes(),
        &format!(
            r#"unknown message type "{}… (100 bytes in all)" (a bot sends "ready" or "move")"#,
            "x".repeat(40)
        ),
        BadLineKind::WrongMessage,
    );
}

#[test]
fn name_must_be_a_string() {
    let error = rejects(
        br#"{"type":"ready","name":7}"#,
        r#""name" must be a string or null, got a number"#,
        BadLineKind::Malformed,
    );
    assert_eq!(
        error,
        DecodeError::InvalidName {
            found: JsonKind::Number
        }
    );
}

#[test]
fn missing_pit() {
    let error = rejects(
        br#"{"type":"move","pits":4}"#,
        r#""move" message has no "pit" field"#,
        BadLineKind::InvalidPit,
    );
    assert_eq!(error, DecodeError::MissingPit);
}

#[test]
fn pit_as_a_string() {
    pit_rejected(
        r#""4""#,
        r#"pit must be a non-negative integer, got "4" (a string)"#,
        PitProblem::String,
    );
}

#[test]
fn pit_as_other_json_kinds() {
    pit_rejected(
        "true",
        "pit must be a non-negative integer, got true (a boolean)",
        PitProblem::Bool,
    );
    pit_rejected(
        "null",
        "pit must be a non-negative integer, got null (null, not a number)",
        PitProblem::Null,
    );
    pit_rejected(
        "[4]",
        "pit must be a non-negative integer, got [4] (an array)",
        PitProblem::Array,
    );
    pit_rejected(
        r#"{"n":4}"#,
        r#"pit must be a non-negative integer, got {"n":4} (an object)"#,
        PitProblem::Object,
    );
}

#[test]
fn pit_negative() {
    pit_rejected(
        "-1",
        "pit must be a non-negative integer, got -1 (a negative number)",
        PitProblem::Negative,
    );
    pit_rejected(
        "-0",
        "pit must be a non-negative integer, got -0 (a negative number)",
        PitProblem::Negative,
    );
    pit_rejected(
        "-99999999999999999999",
        "pit must be a non-negative integer, got -99999999999999999999 (a negative number)",
        PitProblem::Negative,
    );
}

#[test]
fn pit_with_a_fraction() {
    for pit in [
        "4.5",
        "0.1",
        "1e-3",
        "4.000001",
        "1e-99999999999999999999999",
    ] {
        pit_rejected(
            pit,
            &format!("pit must be a non-negative integer, got {pit} (not a whole number)"),
            PitProblem::NotWhole,
        );
    }
}

#[test]
fn whole_pit_in_decimal_form() {
    for pit in [
        "4.0",
        "4e0",
        "4E+0",
        "0.4e1",
        "400e-2",
        "0.0",
        "0e7",
        "1.8446744073709551615e19",
    ] {
        pit_rejected(
            pit,
            &format!(
                "pit must be a non-negative integer, got {pit} (a whole number written with \
                 a decimal point or exponent; send plain digits)"
            ),
            PitProblem::DecimalForm,
        );
    }
}

#[test]
fn pit_too_large() {
    for pit in [
        "18446744073709551616",
        "99999999999999999999",
        "1e999",
        "1E400",
        "1.8446744073709551616e19",
        "1e20",
        "100000000000000000000000000e-5",
    ] {
        pit_rejected(
            pit,
            &format!(
                "pit must be a non-negative integer, got {pit} (a number too large to be a pit)"
            ),
            PitProblem::TooLarge,
        );
    }
}

#[test]
fn pit_at_the_edges_of_u64() {
    assert_eq!(
        decode_bot_message(br#"{"type":"move","pit":18446744073709551615}"#),
        Ok(BotMessage::Move { pit: u64::MAX })
    );
    assert_eq!(
        decode_bot_message(br#"{"type":"move","pit":0}"#),
        Ok(BotMessage::Move { pit: 0 })
    );
    // Range is the referee's business.
    assert_eq!(
        decode_bot_message(br#"{"type":"move","pit":1000}"#),
        Ok(BotMessage::Move { pit: 1000 })
    );
}

#[test]
fn a_long_pit_string_is_cut_in_the_message() {
    let line = format!(r#"{{"type":"move","pit":"{}"}}"#, "7".repeat(1000));
    let error = decode_bot_message(line.as_bytes()).expect_err("a string");
    assert_eq!(
        error.to_string(),
        format!(
            "pit must be a non-negative integer, got \"{}… (1002 bytes in all) (a string)",
            "7".repeat(39)
        )
    );
}

#[test]
fn deep_nesting_never_overflows_the_stack() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(
        decode_bot_message(deep.as_bytes()),
        Err(DecodeError::NotAnObject {
            found: JsonKind::Array
        })
    );
    let line = format!(r#"{{"type":"move","pit":4,"x":{deep}}}"#);
    assert_eq!(
        decode_bot_message(line.as_bytes()),
        Ok(BotMessage::Move { pit: 4 })
    );
}

#[test]
fn kinds_map_to_fault_kinds() {
    assert_eq!(
        FaultKind::from(BadLineKind::Malformed),
        FaultKind::Malformed
    );
    assert_eq!(
        FaultKind::from(BadLineKind::WrongMessage),
        FaultKind::WrongMessage
    );
    assert_eq!(
        FaultKind::from(BadLineKind::InvalidPit),
        FaultKind::InvalidPit
    );
}
