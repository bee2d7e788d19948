use protocol::excerpt;

#[test]
fn printable_text_is_kept() {
    assert_eq!(
        excerpt(br#"{"type":"move","pit":"4\n"}"#, 100),
        r#"{"type":"move","pit":"4\n"}"#
    );
    assert_eq!(excerpt("café ✓".as_bytes(), 100), "café ✓");
    assert_eq!(excerpt(b"", 10), "");
}

#[test]
fn control_and_invalid_bytes_are_escaped() {
    assert_eq!(excerpt(b"a\x00b\xffc", 100), r"a\x00b\xffc");
    assert_eq!(excerpt(b"\n\r\t\x1b\x7f", 100), r"\n\r\t\x1b\x7f");
    assert_eq!(
        excerpt("\u{85}\u{202e}\u{200b}".as_bytes(), 100),
        r"\u{85}\u{202e}\u{200b}"
    );
    // A truncated multi-byte character.
    assert_eq!(excerpt(b"\xe2\x9c", 100), r"\xe2\x9c");
}

#[test]
fn long_input_is_cut_with_the_total() {
    assert_eq!(excerpt(&[b'a'; 12345], 5), "aaaaa… (12345 bytes in all)");
    assert_eq!(excerpt(b"abcde", 5), "abcde");
    assert_eq!(excerpt(b"abcdef", 5), "abcde… (6 bytes in all)");
    assert_eq!(excerpt(b"abc", 0), "… (3 bytes in all)");
}

#[test]
fn an_escape_is_never_split() {
    // "ab\x00" is 6 characters: with room for 4 the escape does not fit at all.
    assert_eq!(excerpt(b"ab\x00", 4), "ab… (3 bytes in all)");
    assert_eq!(excerpt(b"ab\x00", 6), r"ab\x00");
    assert_eq!(
        excerpt("é".repeat(10).as_bytes(), 3),
        "ééé… (20 bytes in all)"
    );
}
