use std::time::Duration;

use protocol::{LineError, LineReader, MAX_LINE_LEN, READ_CHUNK};
use tokio::io::AsyncWriteExt;

use crate::support::ChunkReader;

/// Reads every line until the end of the stream (or an error, returned last).
async fn read_all<R: tokio::io::AsyncRead + Unpin>(
    reader: &mut LineReader<R>,
) -> (Vec<Vec<u8>>, Option<LineError>) {
    let mut lines = Vec::new();
    loop {
        match reader.next_line().await {
            Ok(Some(line)) => lines.push(line.into_bytes()),
            Ok(None) => return (lines, None),
            Err(e) => return (lines, Some(e)),
        }
    }
}

fn lines_of(chunks: Vec<Vec<u8>>, limit: usize) -> (Vec<Vec<u8>>, Option<LineError>) {
    crate::support::block_on(async {
        let mut reader = LineReader::with_limit(ChunkReader::new(chunks), limit);
        read_all(&mut reader).await
    })
}

const STREAM: &[u8] =
    b"{\"type\":\"ready\"}\n\n  \t \r\n{\"type\":\"move\",\"pit\":4}\r\n \t{\"a\": 1 } \t\n\r\nx\n";

fn expected() -> Vec<Vec<u8>> {
    vec![
        b"{\"type\":\"ready\"}".to_vec(),
        b"{\"type\":\"move\",\"pit\":4}".to_vec(),
        b"{\"a\": 1 }".to_vec(),
        b"x".to_vec(),
    ]
}

#[test]
fn lines_split_at_every_byte_boundary() {
    for at in 0..=STREAM.len() {
        let (lines, error) = lines_of(vec![STREAM[..at].to_vec(), STREAM[at..].to_vec()], 100);
        assert!(error.is_none(), "split at {at}: {error:?}");
        assert_eq!(lines, expected(), "split at {at}");
    }
}

#[test]
fn lines_split_at_every_pair_of_boundaries() {
    for a in 0..=STREAM.len() {
        for b in a..=STREAM.len() {
            let chunks = vec![
                STREAM[..a].to_vec(),
                STREAM[a..b].to_vec(),
                STREAM[b..].to_vec(),
            ];
            let (lines, error) = lines_of(chunks, 100);
            assert!(error.is_none(), "split at {a}, {b}: {error:?}");
            assert_eq!(lines, expected(), "split at {a}, {b}");
        }
    }
}

#[test]
fn one_byte_at_a_time() {
    let chunks = STREAM.iter().map(|&b| vec![b]).collect();
    let (lines, error) = lines_of(chunks, 100);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(lines, expected());
}

#[test]
fn invalid_utf8_is_passed_through() {
    let (lines, error) = lines_of(vec![b"\xff\xfe\x00 \r\n".to_vec()], 100);
    assert!(error.is_none());
    assert_eq!(lines, vec![b"\xff\xfe\x00".to_vec()]);
}

#[test]
fn clean_eof_and_empty_stream() {
    assert_eq!(lines_of(vec![], 100).0, Vec::<Vec<u8>>::new());
    assert!(lines_of(vec![], 100).1.is_none());
    // Blanks with no newline at the end are not a partial line.
    let (lines, error) = lines_of(vec![b"a\n \t\r".to_vec()], 100);
    assert_eq!(lines, vec![b"a".to_vec()]);
    assert!(error.is_none(), "{error:?}");
}

#[test]
fn eof_mid_line() {
    let (lines, error) = lines_of(vec![b"a\n{\"type\":\"mo".to_vec()], 100);
    assert_eq!(lines, vec![b"a".to_vec()]);
    match error {
        Some(LineError::EofMidLine { partial, len }) => {
            assert_eq!(partial, b"{\"type\":\"mo");
            assert_eq!(len, 11);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn eof_mid_line_is_reported_once_then_clean_eof() {
    let mut reader = LineReader::new(ChunkReader::new([b"abc"]));
    let error = reader.next_line().await.expect_err("partial line");
    assert_eq!(
        error.to_string(),
        "the stream ended in the middle of a line (3 bytes with no newline): abc"
    );
    assert_eq!(reader.next_line().await.expect("clean"), None);
}

#[test]
fn eof_mid_line_keeps_only_the_start() {
    let (_, error) = lines_of(vec![vec![b'z'; 5000]], 10_000);
    match error {
        Some(LineError::EofMidLine { partial, len }) => {
            assert_eq!(partial, vec![b'z'; protocol::PARTIAL_KEEP]);
            assert_eq!(len, 5000);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_line_of_exactly_the_limit_is_accepted() {
    for limit in [
        1,
        10,
        READ_CHUNK - 1,
        READ_CHUNK,
        READ_CHUNK + 1,
        MAX_LINE_LEN,
    ] {
        let mut stream = vec![b'x'; limit];
        stream.push(b'\n');
        stream.extend_from_slice(b"n\n");
        let (lines, error) = lines_of(vec![stream], limit);
        assert!(error.is_none(), "limit {limit}: {error:?}");
        assert_eq!(
            lines,
            vec![vec![b'x'; limit], b"n".to_vec()],
            "limit {limit}"
        );
    }
}

#[test]
fn the_cr_and_blanks_count_towards_the_limit() {
    let (lines, error) = lines_of(vec![b"abcd\r\n".to_vec()], 4);
    assert!(lines.is_empty());
    assert!(
        matches!(error, Some(LineError::TooLong { limit: 4 })),
        "{error:?}"
    );
}

#[test]
fn one_byte_over_the_limit_is_too_long() {
    for limit in [
        2,
        10,
        READ_CHUNK - 1,
        READ_CHUNK,
        READ_CHUNK + 1,
        MAX_LINE_LEN,
    ] {
        // With and without the newline: either way the line is too long.
        for newline in [true, false] {
            let mut stream = b"ok\n".to_vec();
            stream.extend(vec![b'x'; limit + 1]);
            if newline {
                stream.push(b'\n');
            }
            let (lines, error) = lines_of(vec![stream], limit);
            assert_eq!(lines, vec![b"ok".to_vec()], "limit {limit}");
            assert!(
                matches!(error, Some(LineError::TooLong { limit: l }) if l == limit),
                "limit {limit}, newline {newline}: {error:?}"
            );
        }
    }
}

#[tokio::test]
async fn too_long_is_reported_before_the_newline_arrives() {
    let (mut bot, referee) = tokio::io::duplex(1 << 20);
    let mut reader = LineReader::with_limit(referee, 100);
    bot.write_all(&[b'y'; 101]).await.expect("write");
    // No newline, the pipe stays open: the reader must not wait for more.
    let result = tokio::time::timeout(Duration::from_secs(5), reader.next_line())
        .await
        .expect("no waiting for the newline");
    assert!(
        matches!(result, Err(LineError::TooLong { limit: 100 })),
        "{result:?}"
    );
    assert!(reader.is_poisoned());
    assert!(reader.buffered_line_ready());
    // Poisoned: the same error again, even once a good line follows.
    bot.write_all(b"\n{\"type\":\"move\",\"pit\":4}\n")
        .await
        .expect("write");
    assert!(matches!(
        reader.next_line().await,
        Err(LineError::TooLong { limit: 100 })
    ));
    assert_eq!(
        LineError::TooLong { limit: 100 }.to_string(),
        "line longer than 100 bytes"
    );
}

/// Writes `z` forever, counting the bytes it hands out.
struct Endless {
    given: usize,
}

impl tokio::io::AsyncRead for Endless {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let n = buf.remaining();
        buf.put_slice(&vec![b'z'; n]);
        self.given += n;
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn memory_stays_bounded_against_an_endless_line() {
    for limit in [0, 1000, READ_CHUNK, MAX_LINE_LEN] {
        let mut reader = LineReader::with_limit(Endless { given: 0 }, limit);
        let result = reader.next_line().await;
        assert!(
            matches!(result, Err(LineError::TooLong { limit: l }) if l == limit),
            "{result:?}"
        );
        assert_eq!(reader.buffered_len(), 0);
        // It stopped reading as soon as the limit was passed.
        let given = reader.get_ref().given;
        assert!(
            given > limit && given <= limit + READ_CHUNK,
            "limit {limit}: read {given}"
        );
    }
}

#[tokio::test]
async fn cancelled_call_loses_no_bytes() {
    let (mut bot, referee) = tokio::io::duplex(1024);
    let mut reader = LineReader::new(referee);
    bot.write_all(b"{\"type\":\"mo").await.expect("write");
    let first = tokio::time::timeout(Duration::from_millis(30), reader.next_line()).await;
    assert!(first.is_err(), "the line is not complete yet: {first:?}");
    assert_eq!(reader.buffered_len(), 11);
    assert!(!reader.buffered_line_ready());
    bot.write_all(b"ve\",\"pit\":4}\n").await.expect("write");
    let line = reader.next_line().await.expect("reads").expect("a line");
    assert_eq!(line.as_bytes(), b"{\"type\":\"move\",\"pit\":4}");
}

#[tokio::test]
async fn cancelled_repeatedly_while_bytes_trickle_in() {
    let (mut bot, referee) = tokio::io::duplex(1024);
    let mut reader = LineReader::new(referee);
    let line = b"{\"type\":\"move\",\"pit\":13}\n";
    let mut got = None;
    for &byte in line {
        bot.write_all(&[byte]).await.expect("write");
        if let Ok(result) = tokio::time::timeout(Duration::from_millis(2), reader.next_line()).await
        {
            got = Some(result.expect("reads").expect("a line"));
        }
    }
    let got = got.expect("the line arrived once complete");
    assert_eq!(got.as_bytes(), b"{\"type\":\"move\",\"pit\":13}");
}

#[tokio::test]
async fn buffered_line_ready_tells_a_waiting_line() {
    let (mut bot, referee) = tokio::io::duplex(1024);
    let mut reader = LineReader::with_limit(referee, 100);
    assert!(!reader.buffered_line_ready());
    bot.write_all(b"{\"type\":\"move\",\"pit\":4}\n\n  \n{\"pit\":5}\n")
        .await
        .expect("write");
    assert!(!reader.buffered_line_ready(), "nothing read yet");
    let first = reader.next_line().await.expect("reads").expect("a line");
    assert_eq!(first.as_bytes(), b"{\"type\":\"move\",\"pit\":4}");
    // The second move came in the same read: it waits in the buffer.
    assert!(reader.buffered_line_ready());
    let second = tokio::time::timeout(Duration::ZERO, reader.next_line())
        .await
        .expect("no read needed")
        .expect("reads")
        .expect("a line");
    assert_eq!(second.as_bytes(), b"{\"pit\":5}");
    assert!(!reader.buffered_line_ready());
    // Only blanks buffered: nothing ready.
    bot.write_all(b" \r\n\t\n").await.expect("write");
    let waited = tokio::time::timeout(Duration::from_millis(20), reader.next_line()).await;
    assert!(waited.is_err());
    assert!(!reader.buffered_line_ready());
    assert_eq!(reader.buffered_len(), 0);
}

#[tokio::test]
async fn buffered_line_ready_tells_an_oversized_buffer() {
    let (mut bot, referee) = tokio::io::duplex(1024);
    let mut reader = LineReader::with_limit(referee, 5);
    bot.write_all(b"ab\nabcdefgh").await.expect("write");
    let first = reader.next_line().await.expect("reads").expect("a line");
    assert_eq!(first.as_bytes(), b"ab");
    assert!(reader.buffered_line_ready());
    assert!(matches!(
        reader.next_line().await,
        Err(LineError::TooLong { limit: 5 })
    ));
}

#[tokio::test]
async fn io_errors_are_passed_on() {
    struct Failing;
    impl tokio::io::AsyncRead for Failing {
        fn poll_read(
            self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
            _buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Err(std::io::Error::other("pipe on fire")))
        }
    }
    let mut reader = LineReader::new(Failing);
    let error = reader.next_line().await.expect_err("fails");
    assert!(matches!(error, LineError::Io(_)));
    assert_eq!(error.to_string(), "reading failed: pipe on fire");
}
