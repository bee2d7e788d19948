//! Log downloads (`/api/logs/FILE`, `/api/sets/SET/log`), streamed and bounded: a log
//! is sent in chunks of `CHUNK` bytes straight from its open file (or, a log the shared
//! store keeps, unpacked from its gzip chunk by chunk), never read whole into memory;
//! at most `DownloadLimits::max` downloads run at once, and `DownloadLimits::per_address`
//! for one client address (one more is answered 503 with `Retry-After` and the bound it
//! met), so that one address holding its downloads leaves the others theirs; and each
//! must end within `DownloadLimits::time` (past it the body fails and the connection is
//! closed). A client that reads too little is cut by the connection's stall limit
//! (`http::STALL`: 64 KiB within 10 s of waiting writes): hyper polls a body only when
//! the socket takes more, so a body nobody reads could not see a deadline of its own
//! pass.

use std::io::{self, Read};
use std::net::IpAddr;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::{FutureExt, Stream, StreamExt};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::time::Sleep;
use tokio_util::io::ReaderStream;

use crate::capacity::{Capacity, Client, Full, Slot};

/// Downloads at once, by default (`hus serve --max-downloads`).
pub const MAX_DOWNLOADS: u32 = 16;
/// Downloads one client address may have under way at once, by default (`hus serve
/// --max-downloads-per-address`): a quarter of the whole, so that four addresses are
/// needed to take every place.
pub const MAX_DOWNLOADS_PER_ADDRESS: u32 = 4;
/// Time one download may take, by default (`hus serve --download-time`): a 30 MB log
/// at 100 kB/s.
pub const DOWNLOAD_TIME: Duration = Duration::from_secs(300);
/// Seconds a client refused for want of a free download is told to wait.
pub const RETRY_AFTER_S: u64 = 10;
/// Bytes of one chunk of a download.
pub const CHUNK: usize = 64 * 1024;

/// The bounds on downloads.
#[derive(Clone, Copy, Debug)]
pub struct DownloadLimits {
    /// Downloads at once.
    pub max: usize,
    /// Downloads of one client address at once.
    pub per_address: usize,
    /// Time one download may take, from its answer to its last byte.
    pub time: Duration,
}

impl Default for DownloadLimits {
    fn default() -> Self {
        DownloadLimits {
            max: MAX_DOWNLOADS as usize,
            per_address: MAX_DOWNLOADS_PER_ADDRESS as usize,
            time: DOWNLOAD_TIME,
        }
    }
}

/// The downloads under way: one slot each (in all and per client), held by its body
/// until its last byte is sent or the body is dropped (the client went, the deadline
/// passed).
pub struct Downloads {
    slots: std::sync::Arc<Capacity>,
    limits: DownloadLimits,
}

impl Downloads {
    /// Room for `limits.max` downloads at once, `limits.per_address` of one client.
    pub fn new(limits: DownloadLimits) -> Downloads {
        Downloads {
            slots: Capacity::new(limits.max, limits.per_address),
            limits,
        }
    }

    /// A free download for the client of `ip`, or the answer for a client that must
    /// come back later.
    pub fn start(&self, ip: IpAddr) -> Result<Ticket, Busy> {
        match self.slots.try_take(ip) {
            Ok(slot) => Ok(Ticket {
                slot,
                time: self.limits.time,
            }),
            Err(full) => Err(Busy {
                full,
                client: Client::of(ip),
                limits: self.limits,
            }),
        }
    }
}

/// Every download is taken, or every download one client may have: answered 503 with
/// `Retry-After` and the bound.
#[derive(Debug)]
pub struct Busy {
    full: Full,
    client: Client,
    limits: DownloadLimits,
}

impl IntoResponse for Busy {
    fn into_response(self) -> Response {
        let error = match self.full {
            Full::Total => format!(
                "{} downloads are under way, the most this server sends at once: \
                 try again in {RETRY_AFTER_S} s",
                self.limits.max
            ),
            Full::Client => format!(
                "{} has {} downloads under way, the most one address may: \
                 try again in {RETRY_AFTER_S} s",
                self.client, self.limits.per_address
            ),
        };
        (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_S))],
            Json(json!({ "error": error })),
        )
            .into_response()
    }
}

/// One download's right to run, and its time limit.
pub struct Ticket {
    slot: Slot,
    time: Duration,
}

/// A log file opened for sending: the handle (what is sent is this file, whatever the
/// name points to later) and its length when opened (what is sent of it: a running
/// set's log grows while it is sent).
pub struct OpenLog {
    file: tokio::fs::File,
    len: u64,
}

/// Opens the regular file at `path` for sending. The last component must not be a
/// symbolic link (`O_NOFOLLOW`: `path` was resolved already, so a link here was put in
/// since), and opening never blocks on a FIFO (`O_NONBLOCK`; it is then refused as not
/// a regular file, by the open handle's own metadata).
pub async fn open_log(path: &Path) -> io::Result<OpenLog> {
    let file = tokio::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .await?;
    let meta = file.metadata().await?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(OpenLog {
        file,
        len: meta.len(),
    })
}

impl OpenLog {
    /// Whether the file is compressed (a finished set's log: zstd, or gzip of an older
    /// version), by its first bytes, read without moving the handle.
    pub async fn is_compressed(&self) -> bool {
        let Ok(std) = self.file.try_clone().await.map(|f| f.try_into_std()) else {
            return false;
        };
        let Ok(std) = std else { return false };
        tokio::task::spawn_blocking(move || {
            use std::os::unix::fs::FileExt;
            let mut head = [0u8; 4];
            match std.read_at(&mut head, 0) {
                Ok(n) => referee::is_compressed(&head[..n]),
                Err(_) => false,
            }
        })
        .await
        .unwrap_or(false)
    }
}

/// The headers of a download named `name`: its type and `Content-Disposition`.
fn attachment_headers(name: &str) -> [(header::HeaderName, String); 2] {
    let kind = if name.ends_with(".jsonl") {
        "application/jsonl; charset=utf-8"
    } else if name.ends_with(".gz") {
        "application/gzip"
    } else if name.ends_with(".zst") {
        "application/zstd"
    } else {
        "text/plain; charset=utf-8"
    };
    [
        (header::CONTENT_TYPE, kind.to_string()),
        (
            header::CONTENT_DISPOSITION,
            format!(
                "attachment; filename=\"{}\"",
                name.replace(['"', '\\'], "_")
            ),
        ),
    ]
}

/// The download of an open file, named `name`, with its `Content-Length`.
pub fn file_download(name: &str, log: OpenLog, ticket: Ticket) -> Response {
    let chunks = ReaderStream::with_capacity(log.file.take(log.len), CHUNK);
    let mut response = (
        attachment_headers(name),
        Body::from_stream(Bounded::new(chunks.boxed(), ticket)),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(log.len));
    response
}

/// The download of a log the store keeps, named `name`, unpacked chunk by chunk as it
/// is sent (its length is known only once unpacked: no `Content-Length`, chunked).
pub fn packed_download(name: &str, log: league::PackedLog, ticket: Ticket) -> Response {
    let chunks = futures_util::stream::iter(Unpacking::new(log.into_reader()));
    (
        attachment_headers(name),
        Body::from_stream(Bounded::new(chunks.boxed(), ticket)),
    )
        .into_response()
}

/// The download of a compressed log file (zstd, or gzip of an older version) as its
/// text, named `name`, unpacked chunk by chunk as it is sent (on the blocking threads: the file is read as it is unpacked).
pub async fn unpacked_download(name: &str, log: OpenLog, ticket: Ticket) -> Response {
    let file = log.file.into_std().await;
    let len = log.len;
    // Its form (zstd, gzip) is told by its first bytes, read on a blocking thread too.
    let reader: Box<dyn Read + Send> =
        match tokio::task::spawn_blocking(move || referee::unpacked(file.take(len))).await {
            Ok(Ok(reader)) => reader,
            Ok(Err(e)) => Box::new(FailedRead(Some(e))),
            Err(e) => Box::new(FailedRead(Some(io::Error::other(e.to_string())))),
        };
    let chunks = futures_util::stream::unfold(Some(Unpacking::new(reader)), |state| async move {
        let mut unpacking = state?;
        let (chunk, unpacking) = tokio::task::spawn_blocking(move || {
            let chunk = unpacking.next();
            (chunk, unpacking)
        })
        .await
        .ok()?;
        chunk.map(|c| (c, Some(unpacking)))
    });
    (
        attachment_headers(name),
        Body::from_stream(Bounded::new(chunks.boxed(), ticket)),
    )
        .into_response()
}

/// A reader that could not be made: its error, once, then an end.
struct FailedRead(Option<io::Error>);

impl Read for FailedRead {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}

/// Chunks of at most `CHUNK` bytes read from a reader, up to its end or first error.
struct Unpacking<R> {
    reader: R,
    done: bool,
}

impl<R: Read> Unpacking<R> {
    fn new(reader: R) -> Self {
        Unpacking {
            reader,
            done: false,
        }
    }
}

impl<R: Read> Iterator for Unpacking<R> {
    type Item = io::Result<Bytes>;

    fn next(&mut self) -> Option<io::Result<Bytes>> {
        if self.done {
            return None;
        }
        let mut chunk = Vec::with_capacity(CHUNK);
        match (&mut self.reader)
            .take(CHUNK as u64)
            .read_to_end(&mut chunk)
        {
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(_) => Some(Ok(Bytes::from(chunk))),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

type Chunks = futures_util::stream::BoxStream<'static, io::Result<Bytes>>;

/// A download's body: the chunks, while the ticket is held and the time lasts. Past
/// the deadline it yields an error (hyper then closes the connection: the client sees
/// a download cut short, never a complete-looking one) and ends.
struct Bounded {
    chunks: Chunks,
    deadline: Pin<Box<Sleep>>,
    time: Duration,
    /// `None` once the body ended: the download's place is free again.
    ticket: Option<Slot>,
}

impl Bounded {
    fn new(chunks: Chunks, ticket: Ticket) -> Bounded {
        Bounded {
            chunks,
            deadline: Box::pin(tokio::time::sleep(ticket.time)),
            time: ticket.time,
            ticket: Some(ticket.slot),
        }
    }
}

impl Stream for Bounded {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ticket.is_none() {
            return Poll::Ready(None);
        }
        if self.deadline.poll_unpin(cx).is_ready() {
            self.ticket = None;
            let time = self.time;
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the download took longer than {} s", time.as_secs_f64()),
            ))));
        }
        let next = self.chunks.poll_next_unpin(cx);
        if let Poll::Ready(None | Some(Err(_))) = &next {
            self.ticket = None;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime")
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    /// The 503's `Retry-After` and sentence.
    async fn refusal(busy: Busy) -> (String, String) {
        let response = busy.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let retry = response.headers()[header::RETRY_AFTER]
            .to_str()
            .expect("text")
            .to_string();
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("the body");
        let body: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        (
            retry,
            body["error"].as_str().expect("a sentence").to_string(),
        )
    }

    #[test]
    fn downloads_past_the_bounds_are_told_to_come_back_and_one_address_leaves_the_others_theirs() {
        let rt = runtime();
        rt.block_on(async {
            let downloads = Downloads::new(DownloadLimits {
                max: 3,
                per_address: 2,
                time: DOWNLOAD_TIME,
            });
            let one = downloads.start(ip(1)).expect("first");
            let _two = downloads.start(ip(1)).expect("second");
            // 127.0.0.1 holds its two: its third is refused, another address's is not.
            let refused = downloads.start(ip(1)).err().expect("third refused");
            assert_eq!(
                refusal(refused).await,
                (
                    "10".to_string(),
                    "127.0.0.1 has 2 downloads under way, the most one address may: try \
                     again in 10 s"
                        .to_string()
                )
            );
            let _other = downloads.start(ip(2)).expect("another address");
            let refused = downloads.start(ip(3)).err().expect("all taken");
            assert_eq!(
                refusal(refused).await,
                (
                    "10".to_string(),
                    "3 downloads are under way, the most this server sends at once: try \
                     again in 10 s"
                        .to_string()
                )
            );
            // A finished body frees its place.
            let mut body = Bounded::new(futures_util::stream::empty().boxed(), one);
            assert!(body.next().await.is_none());
            drop(body);
            assert!(downloads.start(ip(1)).is_ok());
        });
    }

    #[test]
    fn a_download_past_its_time_fails_and_frees_its_place() {
        let rt = runtime();
        rt.block_on(async {
            let time = Duration::from_secs(300);
            let downloads = Downloads::new(DownloadLimits {
                max: 1,
                per_address: 1,
                time,
            });
            let ticket = downloads.start(ip(1)).expect("a place");
            // A client that takes one chunk a minute: the fifth comes in time, the sixth
            // (at 360 s) is past the deadline.
            let minutes = futures_util::stream::unfold(0u32, |n| async move {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Some((Ok(Bytes::from(vec![b'x'; 10])), n + 1))
            });
            let mut body = Bounded::new(minutes.boxed(), ticket);
            let start = tokio::time::Instant::now();
            for _ in 0..4 {
                assert_eq!(body.next().await.expect("a chunk").expect("ok").len(), 10);
            }
            assert!(downloads.start(ip(2)).is_err(), "the place is still taken");
            let err = body.next().await.expect("an item").expect_err("cut");
            assert_eq!(err.kind(), io::ErrorKind::TimedOut);
            assert_eq!(err.to_string(), "the download took longer than 300 s");
            assert_eq!(start.elapsed(), time);
            assert!(body.next().await.is_none());
            assert!(downloads.start(ip(2)).is_ok(), "the place is free again");
        });
    }

    #[test]
    fn a_packed_log_is_sent_in_chunks_that_add_up_to_its_text() {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|n| format!("{{\"n\":{n}}}\n").into_bytes())
            .collect();
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gzip, &text).expect("gzip");
        let gz = gzip.finish().expect("gzip");
        let chunks: Vec<Bytes> = Unpacking::new(flate2::read::GzDecoder::new(&gz[..]))
            .map(|c| c.expect("unpacked"))
            .collect();
        assert!(chunks.iter().all(|c| c.len() <= CHUNK && !c.is_empty()));
        assert_eq!(chunks.len(), text.len().div_ceil(CHUNK));
        assert_eq!(chunks.concat(), text);
        // A broken gzip ends the download with an error, not with a shorter log.
        let mut broken = Unpacking::new(flate2::read::GzDecoder::new(&gz[..gz.len() / 2]));
        let last = broken.by_ref().last().expect("something");
        assert!(last.is_err());
        assert!(broken.next().is_none());
    }
}
