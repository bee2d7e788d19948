//! Blocking helpers for bots written in Rust.

use std::io::{self, BufRead, Write};

use serde::Serialize;

use crate::decode::decode_referee_message;
use crate::line::{trim_line, MAX_LINE_LEN};
use crate::messages::RefereeMessage;

/// Reads the next non-blank line from the referee, trimmed like
/// [`LineReader`](crate::LineReader) does, with the limit [`MAX_LINE_LEN`].
///
/// Returns `Ok(None)` at the end of the stream (blanks before it are ignored).
/// A line over the limit or not UTF-8 is an [`io::ErrorKind::InvalidData`] error, and
/// a last line without its `\n` an [`io::ErrorKind::UnexpectedEof`] error.
pub fn read_referee_line<R: BufRead + ?Sized>(reader: &mut R) -> io::Result<Option<String>> {
    read_referee_line_with_limit(reader, MAX_LINE_LEN)
}

/// [`read_referee_line`] with another limit.
pub fn read_referee_line_with_limit<R: BufRead + ?Sized>(
    reader: &mut R,
    limit: usize,
) -> io::Result<Option<String>> {
    loop {
        let mut line = Vec::new();
        let complete = loop {
            let available = match reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break false;
            }
            let (take, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            if line.len() + take > limit {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("line longer than {limit} bytes"),
                ));
            }
            line.extend_from_slice(&available[..take]);
            reader.consume(if complete { take + 1 } else { take });
            if complete {
                break true;
            }
        };
        let trimmed = trim_line(&line);
        if trimmed.is_empty() {
            if complete {
                continue;
            }
            return Ok(None);
        }
        if !complete {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the stream ended in the middle of a line",
            ));
        }
        return String::from_utf8(trimmed.to_vec())
            .map(Some)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e));
    }
}

/// Reads and decodes the next message from the referee; `Ok(None)` at the end of the
/// stream. A line that does not decode is an [`io::ErrorKind::InvalidData`] error.
pub fn read_referee_message<R: BufRead + ?Sized>(
    reader: &mut R,
) -> io::Result<Option<RefereeMessage>> {
    match read_referee_line(reader)? {
        None => Ok(None),
        Some(line) => decode_referee_message(&line)
            .map(Some)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
    }
}

/// Writes a message as one line and flushes, so the referee sees it at once.
pub fn write_message<W: Write + ?Sized, M: Serialize + ?Sized>(
    writer: &mut W,
    msg: &M,
) -> io::Result<()> {
    let line = crate::decode::encode_line(msg).map_err(io::Error::other)?;
    writer.write_all(line.as_bytes())?;
    writer.flush()
}
