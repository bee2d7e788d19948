use std::io::{self, BufReader, Cursor};

use protocol::{
    read_referee_line, read_referee_line_with_limit, read_referee_message, write_message,
    BotMessage, RefereeMessage,
};

use crate::support::bye;

#[test]
fn reads_trimmed_non_blank_lines() {
    let mut input = Cursor::new(b"\n \r\n  {\"a\":1} \r\n\t\nsecond\n".to_vec());
    assert_eq!(
        read_referee_line(&mut input).expect("ok").as_deref(),
        Some("{\"a\":1}")
    );
    assert_eq!(
        read_referee_line(&mut input).expect("ok").as_deref(),
        Some("second")
    );
    assert_eq!(read_referee_line(&mut input).expect("ok"), None);
    assert_eq!(read_referee_line(&mut input).expect("ok"), None);
}

#[test]
fn works_with_a_tiny_buffer() {
    let input = b"first line\nsecond\n".to_vec();
    let mut reader = BufReader::with_capacity(1, Cursor::new(input));
    assert_eq!(
        read_referee_line(&mut reader).expect("ok").as_deref(),
        Some("first line")
    );
    assert_eq!(
        read_referee_line(&mut reader).expect("ok").as_deref(),
        Some("second")
    );
    assert_eq!(read_referee_line(&mut reader).expect("ok"), None);
}

#[test]
fn limit_is_exact() {
    let mut input = BufReader::with_capacity(3, Cursor::new(b"abcd\nabcde\n".to_vec()));
    assert_eq!(
        read_referee_line_with_limit(&mut input, 4)
            .expect("ok")
            .as_deref(),
        Some("abcd")
    );
    let error = read_referee_line_with_limit(&mut input, 4).expect_err("too long");
    assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    assert_eq!(error.to_string(), "line longer than 4 bytes");
}

#[test]
fn partial_last_line_and_bad_utf8_are_errors() {
    let mut input = Cursor::new(b"{\"type\"".to_vec());
    let error = read_referee_line(&mut input).expect_err("partial");
    assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);

    let mut input = Cursor::new(b"\xff\n".to_vec());
    let error = read_referee_line(&mut input).expect_err("not UTF-8");
    assert_eq!(error.kind(), io::ErrorKind::InvalidData);

    let mut input = Cursor::new(b"ok\n  ".to_vec());
    assert_eq!(
        read_referee_line(&mut input).expect("ok").as_deref(),
        Some("ok")
    );
    assert_eq!(
        read_referee_line(&mut input).expect("blank tail is a clean end"),
        None
    );
}

#[test]
fn reads_messages() {
    let text = format!("{}{}", bye().to_line(), "{\"type\":\"future\"}\n");
    let mut input = Cursor::new(text.into_bytes());
    assert_eq!(read_referee_message(&mut input).expect("ok"), Some(bye()));
    assert_eq!(
        read_referee_message(&mut input).expect("ok"),
        Some(RefereeMessage::Unknown)
    );
    assert_eq!(read_referee_message(&mut input).expect("ok"), None);

    let mut input = Cursor::new(b"{\"type\":\"bye\"}\n".to_vec());
    let error = read_referee_message(&mut input).expect_err("missing fields");
    assert_eq!(error.kind(), io::ErrorKind::InvalidData);
}

#[test]
fn writes_one_line() {
    let mut out = Vec::new();
    write_message(&mut out, &BotMessage::Move { pit: 9 }).expect("writes");
    write_message(&mut out, &BotMessage::Ready { name: None }).expect("writes");
    assert_eq!(
        out,
        b"{\"type\":\"move\",\"pit\":9}\n{\"type\":\"ready\"}\n"
    );
}
