//! The lines of a log, read into one reused buffer. Following a log that is still being
//! written, a line without its newline yet is not an error: the writer is in the middle
//! of it, so the source waits and reads on.

use std::io::{self, BufRead, BufReader, Read};
use std::time::Duration;

/// The longest line accepted (a move with thousands of relays is far below it). A
/// longer one is refused before it can fill memory.
pub const MAX_LINE: u64 = 64 << 20;

/// What [`Source::next`] found.
pub enum Next {
    /// Line `number` (from 1) is in [`Source::line`]; `complete` is false for a last line
    /// without its newline.
    Line { number: u64, complete: bool },
    /// Line `number` is longer than [`MAX_LINE`].
    TooLong(u64),
    /// The end of the file (never, when following).
    End,
}

pub struct Source<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
    number: u64,
    /// Following: how long to wait for more.
    poll: Option<Duration>,
}

impl<R: Read> Source<R> {
    pub fn new(inner: R, poll: Option<Duration>) -> Source<R> {
        Source {
            reader: BufReader::with_capacity(1 << 16, inner),
            buf: Vec::with_capacity(1 << 12),
            number: 0,
            poll,
        }
    }

    pub fn following(&self) -> bool {
        self.poll.is_some()
    }

    /// The current line, without its newline (or `\r\n`).
    pub fn line(&self) -> &[u8] {
        let mut line = self.buf.as_slice();
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest.strip_suffix(b"\r").unwrap_or(rest);
        }
        line
    }

    pub fn next(&mut self) -> io::Result<Next> {
        self.buf.clear();
        loop {
            let room = MAX_LINE + 1 - self.buf.len() as u64;
            (&mut self.reader)
                .take(room)
                .read_until(b'\n', &mut self.buf)?;
            if self.buf.last() == Some(&b'\n') {
                self.number += 1;
                return Ok(Next::Line {
                    number: self.number,
                    complete: true,
                });
            }
            if self.buf.len() as u64 > MAX_LINE {
                return Ok(Next::TooLong(self.number + 1));
            }
            // The end of what is written so far.
            match self.poll {
                Some(wait) => std::thread::sleep(wait),
                None if self.buf.is_empty() => return Ok(Next::End),
                None => {
                    self.number += 1;
                    return Ok(Next::Line {
                        number: self.number,
                        complete: false,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<(u64, bool, Vec<u8>)> {
        let mut src = Source::new(bytes, None);
        let mut out = Vec::new();
        loop {
            match src.next().expect("reads") {
                Next::Line { number, complete } => {
                    out.push((number, complete, src.line().to_vec()))
                }
                Next::TooLong(_) => panic!("too long"),
                Next::End => return out,
            }
        }
    }

    #[test]
    fn a_last_line_without_newline_is_marked_incomplete() {
        assert_eq!(
            lines(b"a\r\nb\n{\"c"),
            [
                (1, true, b"a".to_vec()),
                (2, true, b"b".to_vec()),
                (3, false, b"{\"c".to_vec())
            ]
        );
        assert_eq!(lines(b""), []);
        assert_eq!(lines(b"\n"), [(1, true, Vec::new())]);
    }
}
