//! Work after a set, off the next set's path: a finished set's log and its bots' stderr
//! files are compressed (`referee::compress_log`, zstd) on one background thread of the
//! process, in the order the sets finished, while the next set already plays. Compressing
//! a set's log on its own path held the next set for as long as it took (gzip at level
//! 9: 43% of a league of instant bots' CPU; docs/league.md, Speed).
//!
//! Nothing is lost if the process stops midway: `compress_log` writes the compressed
//! file whole before it removes the plain one, and every reader of a finished log finds
//! the plain file while its compressed form is not whole
//! (`referee::finished_log_candidates`). The queue is bounded ([`MAX_QUEUED`]): a set
//! whose compression would not fit waits for room before its ending is reported, so
//! that the compression never falls further behind. What must see a set's files in their
//! last form waits for the queue to empty ([`wait_for_compressions`]): a runner's
//! [`crate::SetPool::shutdown`] (so a process that ends leaves no plain log it could have
//! compressed) and the archiver (`archive_logs`, which deletes the files it archived).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use referee::Dir;

use crate::set_files::SetFiles;

/// The most finished sets whose compression waits at once.
pub const MAX_QUEUED: usize = 16;

/// A finished set's files: the logs directory they are in (open, reached without
/// following a link) and their names.
type Job = (Arc<Dir>, SetFiles);

/// The sets whose files wait for compression, and whether one is being compressed.
struct State {
    waiting: VecDeque<Job>,
    busy: bool,
    /// Whether the compressing thread was started.
    started: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    waiting: VecDeque::new(),
    busy: false,
    started: false,
});

/// Told whenever the queue changes: a set added, a set's compression done.
static CHANGED: Condvar = Condvar::new();

fn lock() -> MutexGuard<'static, State> {
    // A panic while holding the lock leaves the queue as consistent as any step of it.
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Compresses a finished set's log (`STEM.jsonl` to `STEM.jsonl.zst`, below the open
/// logs directory `logs`) and its bots' non-empty stderr files, now, on this thread. A
/// file that cannot be compressed (a full disk) stays plain, whole.
pub fn compress_set(logs: &Dir, files: &SetFiles) {
    let plain = PathBuf::from(format!("{}.jsonl", files.stem()));
    let _ = referee::compress_log_in(logs, &plain);
    files.compress_stderr();
}

/// Queues a finished set's files for [`compress_set`] on the background thread (started
/// on first use); waits first while [`MAX_QUEUED`] sets wait already. If that thread
/// cannot be started, the set is compressed here.
pub fn compress_later(logs: Arc<Dir>, files: SetFiles) {
    let mut state = lock();
    while state.waiting.len() >= MAX_QUEUED {
        state = CHANGED.wait(state).unwrap_or_else(|p| p.into_inner());
    }
    if !state.started {
        let spawned = std::thread::Builder::new()
            .name("compress logs".to_string())
            .spawn(compress_queued);
        if spawned.is_err() {
            drop(state);
            compress_set(&logs, &files);
            return;
        }
        state.started = true;
    }
    state.waiting.push_back((logs, files));
    CHANGED.notify_all();
}

/// Waits until every set queued so far is compressed (or left plain by an error).
pub fn wait_for_compressions() {
    let mut state = lock();
    while state.busy || !state.waiting.is_empty() {
        state = CHANGED.wait(state).unwrap_or_else(|p| p.into_inner());
    }
}

/// The background thread: compresses the queued sets, in order, for the life of the
/// process (idle, it waits on the queue).
fn compress_queued() {
    let mut state = lock();
    loop {
        match state.waiting.pop_front() {
            Some((logs, files)) => {
                state.busy = true;
                drop(state);
                compress_set(&logs, &files);
                state = lock();
                state.busy = false;
                CHANGED.notify_all();
            }
            None => state = CHANGED.wait(state).unwrap_or_else(|p| p.into_inner()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Many sets queued at once (more than the queue holds): each one's log and stderr
    /// end compressed, and the wait returns only once the last is.
    #[test]
    fn queued_sets_are_all_compressed_by_the_time_the_wait_returns() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path();
        let open = Arc::new(crate::set_files::open_logs(logs).expect("open"));
        let sets = 2 * MAX_QUEUED + 3;
        for i in 0..sets {
            let files = SetFiles::new(logs, &format!("r1-s{i:02}"));
            std::fs::write(files.log(), "{\"type\":\"header\"}\n".repeat(100)).expect("write");
            std::fs::write(files.stderr(referee::Side::B, None), "b said\n").expect("write");
            compress_later(open.clone(), files);
        }
        wait_for_compressions();
        let names = names(logs);
        assert_eq!(names.len(), 2 * sets);
        for i in 0..sets {
            assert!(
                names.contains(&format!("r1-s{i:02}.jsonl.zst")),
                "{names:?}"
            );
            assert!(
                names.contains(&format!("r1-s{i:02}.b.stderr.zst")),
                "{names:?}"
            );
        }
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut referee::open_log(&logs.join("r1-s07.jsonl.zst")).expect("open"),
            &mut text,
        )
        .expect("read");
        assert_eq!(text, "{\"type\":\"header\"}\n".repeat(100));
    }

    /// A log that cannot be compressed (gone already) is no error of the queue: the
    /// next one is compressed all the same.
    #[test]
    fn a_set_that_cannot_be_compressed_does_not_stop_the_queue() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path();
        let open = Arc::new(crate::set_files::open_logs(logs).expect("open"));
        compress_later(open.clone(), SetFiles::new(logs, "r1-gone"));
        let files = SetFiles::new(logs, "r1-here");
        std::fs::write(files.log(), "{}\n").expect("write");
        compress_later(open, files);
        wait_for_compressions();
        assert_eq!(names(logs), ["r1-here.jsonl.zst"]);
    }
}
