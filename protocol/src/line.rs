//! The line codec: splitting a byte stream into bounded lines.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::excerpt::excerpt;

/// The maximum length of a line in bytes, not counting its `\n` (a `\r` before the
/// `\n` counts). Part of the protocol: `hello.line_limit`.
pub const MAX_LINE_LEN: usize = 64 * 1024;

/// How many bytes [`LineReader`] asks for in one read.
pub const READ_CHUNK: usize = 8 * 1024;

/// How many bytes of an unterminated last line [`LineError::EofMidLine`] keeps.
pub const PARTIAL_KEEP: usize = 1024;

/// A non-blank line, without its `\n` and without the spaces, tabs and `\r` at either
/// end (so a CRLF line ending is accepted).
///
/// The bytes are as received: they may not be UTF-8, which
/// [`decode_bot_message`](crate::decode_bot_message) reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line(Vec<u8>);

impl Line {
    /// The line's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The line's bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl AsRef<[u8]> for Line {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Why [`LineReader::next_line`] produced no line.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// More than `limit` bytes arrived without a newline. The reader is poisoned: every
    /// later call returns this error again, since there is no telling where the next
    /// line would start. The referee restarts a bot that does this.
    #[error("line longer than {limit} bytes")]
    TooLong {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// The stream ended after a partial line (bytes that are not all blanks, with no
    /// `\n`). The partial line is dropped; the next call returns `Ok(None)`.
    #[error(
        "the stream ended in the middle of a line ({len} bytes with no newline): {}",
        excerpt(partial, 200)
    )]
    EofMidLine {
        /// The first [`PARTIAL_KEEP`] bytes of the partial line.
        partial: Vec<u8>,
        /// The length of the whole partial line.
        len: usize,
    },
    /// Reading failed. The reader's state is unchanged; a retry may succeed. (The I/O
    /// error is in the message, not a source of its own: it would be said twice.)
    #[error("reading failed: {0}")]
    Io(io::Error),
}

impl From<io::Error> for LineError {
    fn from(e: io::Error) -> LineError {
        LineError::Io(e)
    }
}

/// Reads non-blank lines from an async byte stream, with a maximum line length.
///
/// Bytes are read in chunks of [`READ_CHUNK`] into a buffer that never holds more than
/// the limit plus one chunk, whatever the peer writes: a line that grows past the limit
/// is an error as soon as its bytes arrive, not when its newline does.
///
/// [`next_line`](LineReader::next_line) is cancel-safe: every byte read is kept in the
/// reader, so a call dropped by `tokio::time::timeout` or `select!` loses nothing and
/// the next call goes on from where it stopped.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    /// Bytes read and not yet returned start at `start`.
    buf: Vec<u8>,
    start: usize,
    /// `buf[start..searched]` holds no `\n`.
    searched: usize,
    limit: usize,
    chunk: Box<[u8]>,
    poisoned: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader with the protocol's limit, [`MAX_LINE_LEN`].
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_LEN)
    }

    /// A reader whose lines may be at most `limit` bytes long, not counting the `\n`.
    pub fn with_limit(inner: R, limit: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            start: 0,
            searched: 0,
            limit,
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            poisoned: false,
        }
    }

    /// Returns the next non-blank line, or `Ok(None)` at the end of the stream.
    ///
    /// Parses what is buffered first and reads only when no complete line is there.
    /// Cancel-safe (see the type's docs).
    pub async fn next_line(&mut self) -> Result<Option<Line>, LineError> {
        let mut read_without_a_line = false;
        loop {
            if let Some(line) = self.take_buffered_line()? {
                return Ok(Some(line));
            }
            if read_without_a_line {
                // A peer that streams blank lines or a line in many pieces always has
                // bytes ready: let the rest of the runtime (a deadline's timer above
                // all) run between two reads, or it would wait for the stream to pause.
                // Cancel-safe too: everything read is already in `buf`.
                tokio::task::yield_now().await;
            }
            self.compact();
            // The only await point. `read` is cancel-safe: when its future is dropped,
            // no bytes have been taken from the stream, and every byte it returned is
            // in `buf` before the next await.
            let n = loop {
                match self.inner.read(&mut self.chunk).await {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(LineError::Io(e)),
                }
            };
            if n == 0 {
                return self.end_of_stream();
            }
            self.append_chunk(n);
            read_without_a_line = true;
        }
    }

    /// Whether [`next_line`](LineReader::next_line) would return at once without
    /// reading: a complete non-blank line is buffered, or the buffer already breaks
    /// the limit (the call would return [`LineError::TooLong`]). An end of stream not
    /// yet seen is not known here.
    pub fn buffered_line_ready(&self) -> bool {
        if self.poisoned {
            return true;
        }
        let mut rest = &self.buf[self.start..];
        while let Some(at) = rest.iter().position(|&b| b == b'\n') {
            if at > self.limit || !trim_line(&rest[..at]).is_empty() {
                return true;
            }
            rest = &rest[at + 1..];
        }
        rest.len() > self.limit
    }

    /// How many bytes are buffered and not yet returned. Never more than the limit
    /// plus [`READ_CHUNK`].
    pub fn buffered_len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The maximum line length.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether the reader has returned [`LineError::TooLong`] and is of no more use.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The underlying stream, mutably; reading from it directly loses the line framing.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The underlying stream; buffered bytes are dropped.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Takes the next complete non-blank line out of the buffer, skipping blank ones.
    fn take_buffered_line(&mut self) -> Result<Option<Line>, LineError> {
        if self.poisoned {
            return Err(LineError::TooLong { limit: self.limit });
        }
        loop {
            match self.buf[self.searched..].iter().position(|&b| b == b'\n') {
                Some(offset) => {
                    let end = self.searched + offset;
                    if end - self.start > self.limit {
                        return Err(self.poison());
                    }
                    let line = trim_line(&self.buf[self.start..end]).to_vec();
                    self.start = end + 1;
                    self.searched = self.start;
                    if !line.is_empty() {
                        return Ok(Some(Line(line)));
                    }
                }
                None => {
                    self.searched = self.buf.len();
                    if self.buf.len() - self.start > self.limit {
                        return Err(self.poison());
                    }
                    return Ok(None);
                }
            }
        }
    }

    fn poison(&mut self) -> LineError {
        self.poisoned = true;
        // Nothing buffered will ever be returned: free it.
        self.buf = Vec::new();
        self.start = 0;
        self.searched = 0;
        LineError::TooLong { limit: self.limit }
    }

    /// Drops the bytes already returned, so that the buffer holds only the pending line.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.searched -= self.start;
            self.start = 0;
        }
    }

    fn append_chunk(&mut self, n: usize) {
        let needed = self.buf.len() + n;
        if needed > self.buf.capacity() {
            // Grow geometrically (one-byte reads must not copy the line each time) but
            // never past what the limit allows, so memory stays bounded.
            let ceiling = self.limit.saturating_add(READ_CHUNK);
            let target = needed.max(self.buf.capacity().saturating_mul(2).clamp(1024, ceiling));
            self.buf.reserve_exact(target - self.buf.len());
        }
        self.buf.extend_from_slice(&self.chunk[..n]);
    }

    fn end_of_stream(&mut self) -> Result<Option<Line>, LineError> {
        let pending = &self.buf[self.start..];
        let result = if trim_line(pending).is_empty() {
            Ok(None)
        } else {
            Err(LineError::EofMidLine {
                partial: pending[..pending.len().min(PARTIAL_KEEP)].to_vec(),
                len: pending.len(),
            })
        };
        self.buf.clear();
        self.start = 0;
        self.searched = 0;
        result
    }
}

/// Strips spaces, tabs and `\r` from both ends of a line.
pub(crate) fn trim_line(line: &[u8]) -> &[u8] {
    let is_blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let start = line.iter().position(|b| !is_blank(b)).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !is_blank(b))
        .map_or(start, |at| at + 1);
    &line[start..end]
}
