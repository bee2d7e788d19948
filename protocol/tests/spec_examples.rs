use protocol::{decode_bot_message, decode_referee_message, RefereeMessage};

/// The example session in PROTOCOL.md: `<- ` lines are the referee's, `-> ` the bot's.
fn example_lines() -> Vec<(bool, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../PROTOCOL.md");
    let text = std::fs::read_to_string(path).expect("PROTOCOL.md is readable");
    text.lines()
        .filter_map(|line| {
            if let Some(msg) = line.strip_prefix("<- ") {
                Some((true, msg.to_owned()))
            } else {
                line.strip_prefix("-> ").map(|msg| (false, msg.to_owned()))
            }
        })
        .collect()
}

/// Every line of the example decodes and encodes back to itself with this crate. (That
/// the session is a real one, played by the referee, is checked end to end by
/// `protocol_example_session_is_a_real_session` in `tests/e2e/doc_examples.rs`.)
#[test]
fn the_example_session_is_exactly_what_the_code_writes() {
    let lines = example_lines();
    assert_eq!(lines.len(), 17, "example lines in PROTOCOL.md");
    for (from_referee, line) in lines {
        if from_referee {
            let msg = decode_referee_message(&line).expect("the example decodes");
            assert_ne!(msg, RefereeMessage::Unknown, "{line}");
            assert_eq!(msg.to_line(), format!("{line}\n"));
        } else {
            let msg = decode_bot_message(line.as_bytes()).expect("the example decodes");
            assert_eq!(msg.to_line(), format!("{line}\n"));
        }
    }
}
