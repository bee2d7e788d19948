//! The lines of a log, read into one reused buffer. Following a log that is still being
//! written, a line without its newline yet is not an error: the writer is in the middle
//! of it, so the source waits and reads on, until the log's writer is gone or nothing
//! new came for the idle limit ([`Follow`]).

use std::io::{self, BufRead, BufReader, Read};
use std::time::{Duration, Instant};

use crate::records::Writer;

use super::watch::{writer_state, WriterState};

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
    /// The end of the file (when following: of what was written when following
    /// stopped, see [`Source::stopped`]).
    End,
}

/// How to follow a log that is still being written.
pub struct Follow {
    /// How long to wait before looking for more.
    poll: Duration,
    /// Stop when nothing new has come for this long.
    idle_limit: Option<Duration>,
    /// The log's writer, once the header has named it.
    writer: Option<Box<Writer>>,
    /// When the last bytes came.
    last_data: Instant,
    /// Why following stopped: from then on the log is read to its current end, like a
    /// file that is not followed.
    stopped: Option<String>,
}

impl Follow {
    pub fn new(poll: Duration, idle_limit: Option<Duration>) -> Follow {
        Follow {
            poll,
            idle_limit,
            writer: None,
            last_data: Instant::now(),
            stopped: None,
        }
    }

    /// Why to stop waiting for more, if there is a reason.
    fn reason_to_stop(&self) -> Option<String> {
        if let Some(limit) = self.idle_limit {
            if self.last_data.elapsed() >= limit {
                return Some(format!("no new line for {} (--idle-limit)", words(limit)));
            }
        }
        match writer_state(self.writer.as_ref()?) {
            WriterState::Gone(why) => Some(why),
            WriterState::Running | WriterState::Unknown(_) => None,
        }
    }
}

/// `300 ms`, `30 s`.
fn words(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

pub struct Source<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
    number: u64,
    follow: Option<Follow>,
}

impl<R: Read> Source<R> {
    pub fn new(inner: R, follow: Option<Follow>) -> Source<R> {
        Source {
            reader: BufReader::with_capacity(1 << 16, inner),
            buf: Vec::with_capacity(1 << 12),
            number: 0,
            follow,
        }
    }

    pub fn following(&self) -> bool {
        self.follow.is_some()
    }

    /// Following: watch `writer`, the process the log's header names, and stop when it
    /// is gone. Returns a note when whether it runs cannot be told and nothing else
    /// will end the wait (no idle limit).
    pub fn watch(&mut self, writer: Option<Box<Writer>>) -> Option<String> {
        let follow = self.follow.as_mut()?;
        let unknown = match &writer {
            None => Some(
                "the log does not name the process that writes it (an earlier hus wrote it)"
                    .to_string(),
            ),
            Some(w) => match writer_state(w) {
                WriterState::Unknown(why) => Some(why),
                WriterState::Running | WriterState::Gone(_) => None,
            },
        };
        follow.writer = writer;
        let why = unknown.filter(|_| follow.idle_limit.is_none())?;
        Some(format!(
            "{why}: hus cannot tell when it is gone, and follows the log until its set-end \
             or aborted (--idle-limit DURATION stops sooner)"
        ))
    }

    /// Why following stopped before the log's end, if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.follow.as_ref()?.stopped.as_deref()
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
            let read = (&mut self.reader)
                .take(room)
                .read_until(b'\n', &mut self.buf)?;
            if read > 0 {
                if let Some(follow) = self.follow.as_mut() {
                    follow.last_data = Instant::now();
                }
            }
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
            if let Some(follow) = self.follow.as_mut() {
                if follow.stopped.is_none() {
                    if let Some(why) = follow.reason_to_stop() {
                        // Read once more: the writer may have written its last lines
                        // between the last read and now.
                        follow.stopped = Some(why);
                    } else {
                        std::thread::sleep(follow.poll);
                    }
                    continue;
                }
            }
            if self.buf.is_empty() {
                return Ok(Next::End);
            }
            self.number += 1;
            return Ok(Next::Line {
                number: self.number,
                complete: false,
            });
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

    #[test]
    fn following_stops_at_the_idle_limit_and_reads_what_is_there() {
        let follow = Follow::new(Duration::from_millis(10), Some(Duration::from_millis(50)));
        let mut src = Source::new(&b"a\n{\"b"[..], Some(follow));
        assert_eq!(src.watch(None), None, "an idle limit: no note");
        assert!(matches!(
            src.next().expect("reads"),
            Next::Line {
                number: 1,
                complete: true
            }
        ));
        assert_eq!(src.stopped(), None);
        let waiting = std::time::Instant::now();
        assert!(matches!(
            src.next().expect("reads"),
            Next::Line {
                number: 2,
                complete: false
            }
        ));
        assert!(waiting.elapsed() >= Duration::from_millis(50));
        assert_eq!(src.line(), b"{\"b");
        assert!(matches!(src.next().expect("reads"), Next::End));
        assert_eq!(src.stopped(), Some("no new line for 50 ms (--idle-limit)"));
    }

    #[test]
    fn following_a_log_of_a_gone_writer_stops_at_its_end() {
        let mut gone = Writer::this_process().expect("a Linux /proc");
        gone.start_time += 1;
        let mut src = Source::new(
            &b"a\n"[..],
            Some(Follow::new(Duration::from_secs(3600), None)),
        );
        assert_eq!(src.watch(Some(gone)), None);
        assert!(matches!(src.next().expect("reads"), Next::Line { .. }));
        assert!(matches!(src.next().expect("reads"), Next::End));
        assert!(
            src.stopped()
                .is_some_and(|why| why.starts_with("the referee writing it (pid ")),
            "{:?}",
            src.stopped()
        );
        // Without a writer to watch nor an idle limit, a note says so.
        let mut src = Source::new(&b""[..], Some(Follow::new(Duration::from_secs(1), None)));
        assert!(src
            .watch(None)
            .is_some_and(|note| note.contains("--idle-limit DURATION stops sooner")));
    }
}
