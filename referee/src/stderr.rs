//! A bot process's stderr: the drain that copies it to the bot's stderr file (at most
//! [`STDERR_CAP`] bytes per bot and set, all its processes together: a [`StderrBudget`]
//! that a restarted bot's processes share; the rest read and discarded, so that the bot
//! never blocks on a full pipe), and [`last_line`], the one reader of what a stderr file
//! says last, which fault details quote (LOGS.md, `fault.detail`).
//!
//! A bot's file holds all its processes of a set, one after another (restarts append).
//! Each drain knows where its own process's part starts (the file's length when it
//! opened it) and how much of it is the bot's (`kept`), so its cut notes count only its
//! own process's bytes and the last line is read from its own part, never from an
//! earlier process's or from the referee's notes. A drain always ends by writing its
//! notes and flushing, even when it is told to stop before its pipe's end of file (a
//! process the bot started still holds the pipe): it is never cancelled between two
//! writes, and a restarted bot's process starts writing only after the notes of the one
//! before (the set waits for [`Drain::finish`] in `BotProcess::shutdown`).

use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use protocol::excerpt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// Most bytes of a bot's stderr kept on disk per set, all its processes together (a bot
/// restarted after each fault cannot multiply it). A set keeps at most this much for each
/// of its bots (each member of a team), plus a note of under 200 bytes per process.
pub const STDERR_CAP: u64 = 1024 * 1024;

/// What is left of one bot's stderr budget in a set: [`STDERR_CAP`] bytes, shared by all
/// the processes it runs in the set (clones share it).
#[derive(Clone, Debug)]
pub struct StderrBudget {
    left: Arc<AtomicU64>,
}

impl Default for StderrBudget {
    /// A whole budget of [`STDERR_CAP`] bytes.
    fn default() -> Self {
        StderrBudget::new(STDERR_CAP)
    }
}

impl StderrBudget {
    /// A budget of `bytes`.
    pub fn new(bytes: u64) -> StderrBudget {
        StderrBudget {
            left: Arc::new(AtomicU64::new(bytes)),
        }
    }

    /// Takes up to `wanted` bytes of it; how many it got.
    pub fn take(&self, wanted: u64) -> u64 {
        let mut got = 0;
        let _ = self
            .left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                got = left.min(wanted);
                Some(left - got)
            });
        got
    }

    /// What is left.
    #[cfg(test)]
    fn left(&self) -> u64 {
        self.left.load(Ordering::SeqCst)
    }
}
/// Most bytes read from the end of a stderr file to find its last line: a line longer
/// than this is shown by its end.
pub const TAIL_BYTES: u64 = 4096;
/// Most characters of the last line quoted (escaped, then cut with a note).
pub const TAIL_CHARS: usize = 200;
/// After the end of file, how long the drain may take to write what it read and its
/// notes (a loaded machine's disk).
const DRAIN_DONE_WAIT: Duration = Duration::from_secs(5);

/// The note that marks where a process's part of the file was cut.
pub fn cut_note() -> String {
    format!(
        "\n[hus: stderr cut here: the bot's {STDERR_CAP} bytes of stderr for the set are used \
         up; the rest was read and discarded]\n"
    )
}

/// The note that ends a cut process's part: `total` bytes, its own process's.
pub fn total_note(total: u64) -> String {
    format!("[hus: {total} bytes of stderr in all]\n")
}

/// What a drain has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drained {
    /// Bytes the process wrote to stderr (read from the pipe).
    pub total: u64,
    /// Bytes of them written to the file.
    pub kept: u64,
    /// The file was cut: the bot's [`StderrBudget`] ran out (or a write failed).
    pub cut: bool,
    /// The pipe reached its end of file (everything that held it closed it).
    pub eof: bool,
    /// The drain has written its notes and flushed the file: nothing more comes.
    pub done: bool,
}

/// The last line of a process's stderr, as a fault's detail quotes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tail {
    /// The file.
    pub path: PathBuf,
    /// Its last non-blank line, escaped and bounded by [`last_line`].
    pub line: String,
    /// The process's part was cut (the bot's [`StderrBudget`] ran out): this is the last
    /// line kept, empty when nothing of this process's was kept.
    pub cut: bool,
}

impl Tail {
    /// `last line of its stderr (PATH): LINE`, the words a fault's detail adds. The
    /// bot's text comes last, so that nothing after it can be taken for its own.
    pub fn words(&self) -> String {
        let path = excerpt(self.path.as_os_str().as_encoded_bytes(), 2 * TAIL_CHARS);
        if self.cut && self.line.is_empty() {
            format!(
                "nothing of its stderr kept ({path}): the bot's {STDERR_CAP} bytes for the set \
                 were used up"
            )
        } else if self.cut {
            format!(
                "last line kept of its stderr ({path}, cut at the bot's {STDERR_CAP} bytes for \
                 the set): {}",
                self.line
            )
        } else {
            format!("last line of its stderr ({path}): {}", self.line)
        }
    }
}

/// One process's stderr drain.
pub struct Drain {
    handle: JoinHandle<()>,
    state: watch::Receiver<Drained>,
    stop: Option<oneshot::Sender<()>>,
    path: PathBuf,
    /// Where the process's part of the file starts.
    from: u64,
}

impl Drain {
    /// Starts draining `stderr` into `file` (opened for appending at `path`, `from`
    /// bytes long), keeping what `budget` (the bot's for the set) allows.
    pub fn start(
        stderr: tokio::process::ChildStderr,
        file: std::fs::File,
        path: &Path,
        from: u64,
        budget: StderrBudget,
    ) -> Drain {
        let (state_tx, state) = watch::channel(Drained::default());
        let (stop, stopped) = oneshot::channel();
        let handle = tokio::spawn(drain(
            stderr,
            tokio::fs::File::from_std(file),
            budget,
            state_tx,
            stopped,
        ));
        Drain {
            handle,
            state,
            stop: Some(stop),
            path: path.to_path_buf(),
            from,
        }
    }

    /// What it has done so far.
    pub fn drained(&self) -> Drained {
        *self.state.borrow()
    }

    /// Waits up to `within` for the pipe's end of file; whether it came.
    pub async fn wait_eof(&mut self, within: Duration) -> bool {
        self.wait_for(within, |d| d.eof).await
    }

    async fn wait_for(&mut self, within: Duration, what: impl Fn(&Drained) -> bool) -> bool {
        let waited = tokio::time::timeout(within, self.state.wait_for(|d| what(d) || d.done));
        matches!(waited.await, Ok(Ok(d)) if what(&d))
    }

    /// Ends the drain: at its end of file, or now if it has not come (what was read is
    /// counted and noted), and waits for its notes to be written.
    pub async fn finish(&mut self) -> Drained {
        if !self.drained().eof {
            if let Some(stop) = self.stop.take() {
                let _ = stop.send(());
            }
        }
        self.wait_for(DRAIN_DONE_WAIT, |d| d.done).await;
        self.drained()
    }

    /// The last line of this process's part of the file, once what was read has been
    /// written (up to a moment's wait: otherwise what the file holds now).
    pub async fn tail(&mut self) -> Option<Tail> {
        if self.drained().eof {
            self.wait_for(DRAIN_DONE_WAIT, |d| d.done).await;
        }
        let d = self.drained();
        // What was kept, never the cut note after it.
        let end = self.from + d.kept;
        let line = match last_line(&self.path, self.from..end).ok().flatten() {
            Some(line) => line,
            // Nothing of this process's was kept: its budget was used up before.
            None if d.cut && d.kept == 0 => String::new(),
            None => return None,
        };
        Some(Tail {
            path: self.path.clone(),
            line,
            cut: d.cut,
        })
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// The last non-blank line of the bytes `range` of the file at `path` (the end is
/// bounded by the file's length), read from at most the last [`TAIL_BYTES`] of the
/// range: surrounding whitespace (`\r` included) trimmed, control characters, escape
/// sequences and bytes that are not UTF-8 escaped, cut to [`TAIL_CHARS`] characters by
/// [`excerpt`]. A line that starts before the bytes read begins with `…`. `None` when
/// the range holds only whitespace.
pub fn last_line(path: &Path, range: Range<u64>) -> io::Result<Option<String>> {
    let mut file = std::fs::File::open(path)?;
    let end = range.end.min(file.metadata()?.len());
    if end <= range.start {
        return Ok(None);
    }
    let start = range.start.max(end.saturating_sub(TAIL_BYTES));
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((end - start) as usize);
    file.take(end - start).read_to_end(&mut bytes)?;
    let mut whole = start == range.start;
    if !whole {
        // Read from the middle of a character: start at the next one.
        let skip = bytes
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xc0 == 0x80)
            .count();
        bytes.drain(..skip);
    }
    let mut last = None;
    let mut first = true;
    for line in bytes.split(|&b| b == b'\n') {
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty() {
            last = Some((trimmed, first));
        }
        first = false;
    }
    Ok(last.map(|(line, is_first)| {
        // Only the first piece of what was read can have started earlier.
        whole |= !is_first;
        let shown = excerpt(line, TAIL_CHARS);
        if whole {
            shown
        } else {
            format!("…{shown}")
        }
    }))
}

async fn drain(
    mut stderr: tokio::process::ChildStderr,
    mut file: tokio::fs::File,
    budget: StderrBudget,
    state: watch::Sender<Drained>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut buf = vec![0u8; 8192];
    let mut d = Drained::default();
    let mut noted_cut = false;
    loop {
        let n = tokio::select! {
            biased;
            read = stderr.read(&mut buf) => match read {
                Ok(0) | Err(_) => {
                    d.eof = true;
                    break;
                }
                Ok(n) => n,
            },
            // Told to stop (or the process's owner is gone): what was read is noted.
            _ = &mut stop => break,
        };
        d.total += n as u64;
        let keep = if d.cut { 0 } else { budget.take(n as u64) };
        if keep > 0 {
            if file.write_all(&buf[..keep as usize]).await.is_ok() {
                d.kept += keep;
            } else {
                d.cut = true;
            }
        }
        if keep < n as u64 && !d.cut {
            d.cut = true;
            noted_cut = true;
            let _ = file.write_all(cut_note().as_bytes()).await;
        }
        state.send_replace(d);
    }
    state.send_replace(d);
    if d.cut {
        if !noted_cut {
            // A write failed: the file ends where it did.
            let _ = file.write_all(b"\n").await;
        }
        let _ = file.write_all(total_note(d.total).as_bytes()).await;
    }
    let _ = file.flush().await;
    d.done = true;
    state.send_replace(d);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bot.a.stderr");
        std::fs::write(&path, bytes).expect("write");
        (dir, path)
    }

    fn last(bytes: &[u8]) -> Option<String> {
        let (_dir, path) = file_with(bytes);
        last_line(&path, 0..u64::MAX).expect("reads")
    }

    #[test]
    fn the_last_non_blank_line_is_found_with_or_without_a_newline_at_the_end() {
        assert_eq!(
            last(b"Traceback:\n  File x\nNameError: y\n\n  \r\n").as_deref(),
            Some("NameError: y")
        );
        assert_eq!(last(b"one\ntwo").as_deref(), Some("two"));
        assert_eq!(last(b"  crlf line \r\n").as_deref(), Some("crlf line"));
    }

    #[test]
    fn only_whitespace_or_nothing_is_no_line() {
        assert_eq!(last(b""), None);
        assert_eq!(last(b"\n\n\n"), None);
        assert_eq!(last(b" \r\n\t\n"), None);
    }

    #[test]
    fn control_characters_escapes_and_invalid_utf8_are_escaped() {
        assert_eq!(
            last(b"\x1b[31mred\x1b[0m \xff\xfe bell\x07\n").as_deref(),
            Some(r"\x1b[31mred\x1b[0m \xff\xfe bell\x07")
        );
        assert_eq!(
            last("right-to-left \u{202e}txt.exe\n".as_bytes()).as_deref(),
            Some(r"right-to-left \u{202e}txt.exe")
        );
    }

    #[test]
    fn a_long_line_is_cut_on_a_character_with_its_length() {
        let line = "é".repeat(300);
        let shown = last(line.as_bytes()).expect("a line");
        assert_eq!(shown, format!("{}… (600 bytes in all)", "é".repeat(200)));
    }

    #[test]
    fn a_huge_file_is_read_only_at_its_end() {
        // 64 MiB of one endless line, then the error: only the last 4 KiB are read.
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("huge.stderr");
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&path).expect("create");
            let block = vec![b'x'; 1 << 20];
            for _ in 0..64 {
                f.write_all(&block).expect("write");
            }
            f.write_all(b"\npanicked at the end\n").expect("write");
        }
        assert_eq!(
            last_line(&path, 0..u64::MAX).expect("reads").as_deref(),
            Some("panicked at the end")
        );
        // A line longer than what is read is shown by its end, marked as such.
        let end = 64 << 20;
        let shown = last_line(&path, 0..end).expect("reads").expect("a line");
        assert_eq!(shown, format!("…{}… (4096 bytes in all)", "x".repeat(200)));
    }

    #[test]
    fn a_character_cut_by_the_window_is_skipped_not_escaped() {
        // The window starts one byte into "é" (2 bytes): that byte is dropped.
        let mut bytes = vec![b'a'];
        bytes.extend("é".as_bytes());
        bytes.extend(vec![b'b'; TAIL_BYTES as usize - 1]);
        let shown = last(&bytes).expect("a line");
        assert!(shown.starts_with("…bbb"), "{shown}");
    }

    #[test]
    fn only_the_range_of_the_process_is_read() {
        // An earlier process's line before the range, the referee's notes after it.
        let mut bytes = b"earlier process: its last words\n".to_vec();
        let from = bytes.len() as u64;
        bytes.extend(b"\n\n");
        let (_dir, path) = file_with(&bytes);
        assert_eq!(last_line(&path, from..u64::MAX).expect("reads"), None);
        let mut bytes = b"old\n".to_vec();
        bytes.extend(b"mine\npartial");
        let end = bytes.len() as u64;
        bytes.extend(cut_note().as_bytes());
        bytes.extend(total_note(5_000_000).as_bytes());
        let (_dir, path) = file_with(&bytes);
        assert_eq!(
            last_line(&path, 4..end).expect("reads").as_deref(),
            Some("partial")
        );
    }

    /// A drain stopped before its end of file (a process still holds the pipe) notes
    /// exactly what it read, and says so in its state.
    #[test]
    fn a_drain_stopped_before_its_end_of_file_notes_its_own_count() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("bot.a.stderr");
            std::fs::write(&path, b"an earlier process\n").expect("write");
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .expect("open");
            let from = file.metadata().expect("metadata").len();
            let bytes = STDERR_CAP + 4321;
            // It writes its bytes, then keeps the pipe open (`exec sleep`).
            let mut child = tokio::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "head -c {bytes} /dev/zero | tr '\\0' e >&2; exec sleep 30"
                ))
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .expect("sh runs");
            let stderr = child.stderr.take().expect("stderr");
            let mut drain = Drain::start(stderr, file, &path, from, StderrBudget::default());
            // Not a verdict on time: the wait ends when everything has been read.
            let mut state = drain.state.clone();
            state
                .wait_for(|d| d.total == bytes)
                .await
                .expect("the drain runs");
            let d = drain.finish().await;
            assert_eq!(
                d,
                Drained {
                    total: bytes,
                    kept: STDERR_CAP,
                    cut: true,
                    eof: false,
                    done: true
                }
            );
            let mut expected = b"an earlier process\n".to_vec();
            expected.extend(std::iter::repeat_n(b'e', STDERR_CAP as usize));
            expected.extend(cut_note().bytes());
            expected.extend(total_note(bytes).bytes());
            assert!(std::fs::read(&path).expect("read") == expected);
            let tail = drain.tail().await.expect("a line");
            assert_eq!(
                tail.line,
                format!("…{}… (4096 bytes in all)", "e".repeat(200))
            );
            assert!(tail.cut);
            let _ = child.kill().await;
        });
    }

    /// The processes of one bot in a set share its budget: the second keeps only what
    /// the first left, the third nothing, and each notes its own count.
    #[test]
    fn a_bots_processes_share_one_budget_for_the_set() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("bot.a.stderr");
            let budget = StderrBudget::new(1000);
            let mut expected = Vec::new();
            for (bytes, kept) in [(600u64, 600u64), (700, 400), (50, 0)] {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .expect("open");
                let from = file.metadata().expect("metadata").len();
                let mut child = tokio::process::Command::new("sh")
                    .arg("-c")
                    .arg(format!("head -c {bytes} /dev/zero | tr '\\0' e >&2"))
                    .stderr(std::process::Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .expect("sh runs");
                let stderr = child.stderr.take().expect("stderr");
                let mut drain = Drain::start(stderr, file, &path, from, budget.clone());
                let _ = child.wait().await;
                assert!(drain.wait_eof(Duration::from_secs(60)).await, "end of file");
                let d = drain.finish().await;
                assert_eq!((d.total, d.kept, d.cut), (bytes, kept, kept < bytes));
                expected.extend(std::iter::repeat_n(b'e', kept as usize));
                if kept < bytes {
                    expected.extend(cut_note().bytes());
                    expected.extend(total_note(bytes).bytes());
                }
                let tail = drain.tail().await.expect("a tail");
                assert_eq!(tail.line.is_empty(), kept == 0);
            }
            assert_eq!(budget.left(), 0);
            assert!(std::fs::read(&path).expect("read") == expected);
        });
    }

    #[test]
    fn the_words_name_the_file_and_end_with_the_line() {
        let tail = Tail {
            path: PathBuf::from("hus-logs/x.a.stderr"),
            line: "boom".into(),
            cut: false,
        };
        assert_eq!(
            tail.words(),
            "last line of its stderr (hus-logs/x.a.stderr): boom"
        );
        let cut = Tail { cut: true, ..tail };
        assert_eq!(
            cut.words(),
            "last line kept of its stderr (hus-logs/x.a.stderr, cut at the bot's 1048576 bytes \
             for the set): boom"
        );
        let nothing = Tail {
            line: String::new(),
            ..cut
        };
        assert_eq!(
            nothing.words(),
            "nothing of its stderr kept (hus-logs/x.a.stderr): the bot's 1048576 bytes for the \
             set were used up"
        );
    }
}
