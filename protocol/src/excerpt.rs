//! Showing untrusted bytes in reports.

use std::fmt::Write as _;

/// Shows `bytes` as readable text of at most `max` characters, for a fault report.
///
/// Printable text is kept as it is (backslashes included, so JSON escapes read as
/// written). `\n`, `\r` and `\t` are written as those escapes; other control
/// characters and bytes that are not UTF-8 become `\xNN` (`\u{NNNN}` for control and
/// invisible direction characters beyond ASCII, which could garble a terminal). An
/// escape is never split. When the text does not fit, it is cut and a marker
/// `… (N bytes in all)` is appended after the `max` characters.
///
/// ```
/// use protocol::excerpt;
///
/// assert_eq!(excerpt(b"pit\x00\xff", 20), r"pit\x00\xff");
/// assert_eq!(excerpt(b"0123456789", 4), "0123… (10 bytes in all)");
/// ```
pub fn excerpt(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    let mut piece = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            piece.clear();
            escape_char(c, &mut piece);
            if !push_piece(&mut out, &mut chars, &piece, max) {
                return cut(out, bytes.len());
            }
        }
        for byte in chunk.invalid() {
            piece.clear();
            let _ = write!(piece, "\\x{byte:02x}");
            if !push_piece(&mut out, &mut chars, &piece, max) {
                return cut(out, bytes.len());
            }
        }
    }
    out
}

fn push_piece(out: &mut String, chars: &mut usize, piece: &str, max: usize) -> bool {
    let len = piece.chars().count();
    if *chars + len > max {
        return false;
    }
    out.push_str(piece);
    *chars += len;
    true
}

fn cut(mut out: String, total: usize) -> String {
    let _ = write!(out, "… ({total} bytes in all)");
    out
}

fn escape_char(c: char, piece: &mut String) {
    match c {
        '\n' => piece.push_str("\\n"),
        '\r' => piece.push_str("\\r"),
        '\t' => piece.push_str("\\t"),
        c if c.is_ascii_control() => {
            let _ = write!(piece, "\\x{:02x}", c as u32);
        }
        c if c.is_control() || is_invisible_format(c) => {
            let _ = write!(piece, "\\u{{{:x}}}", c as u32);
        }
        c => piece.push(c),
    }
}

/// Zero-width and bidirectional formatting characters: harmless in data, but they
/// make a report lie about what it shows.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}'
    )
}
