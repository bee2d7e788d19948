//! A bot's faulted sets on its page and in the API, each with an excerpt of the bot's
//! stderr in that set, read from wherever the set's stderr file is kept (its own
//! file, its compressed form, or the archive of its number).

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{json, Value};

use super::logs::{confined, logs_dir};
use crate::error::ApiError;
use crate::state::{AppState, SetView};

/// How many of a bot's latest faulted sets its page lists.
const FAULTED_SETS: usize = 20;
/// Lines of a bot's stderr shown for a faulted set, at most, from its end.
const STDERR_LINES: usize = 5;
/// Bytes read from the end of a stderr file for them.
const STDERR_TAIL: u64 = 4096;

/// The bot's latest faulted sets: each set's name and number, the bot's faults in it,
/// and the last lines of its stderr in that set (`null` when the file is gone: empty,
/// pruned, or a team member's).
pub(crate) async fn faulted_sets(app: &Arc<AppState>, bot: &str) -> Result<Vec<Value>, ApiError> {
    let sets = app
        .reader
        .sets(league::FinishedQuery::Faulted {
            bot: bot.to_string(),
            before: None,
            limit: FAULTED_SETS,
        })
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?;
    let logs = logs_dir(app);
    let bot = bot.to_string();
    let out = tokio::task::spawn_blocking(move || {
        sets.into_iter()
            .map(|(number, set)| {
                let seat = u8::from(set.key.a != bot);
                let view = SetView::from_finished(number, &set);
                let faults: Vec<&crate::state::FaultView> = view
                    .faults
                    .iter()
                    .zip(&set.outcome.faults)
                    .filter(|(_, f)| f.bot == seat)
                    .map(|(v, _)| v)
                    .collect();
                let letter = if seat == 0 { 'a' } else { 'b' };
                let stderr = stderr_tail(&logs, number, &format!("{}.{letter}.stderr", view.set));
                json!({ "set": view.set, "number": number, "faults": faults, "stderr": stderr })
            })
            .collect::<Vec<Value>>()
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(out)
}

/// The last `STDERR_LINES` lines of the stderr file `name` (`STEM.a.stderr`) of the set
/// numbered `number`, wherever it is kept: its own file while the set plays, its
/// compressed form once the set is finished, or the archive of its number. `None` when there is
/// none (a quiet bot's, a pruned set's).
fn stderr_tail(logs: &FsPath, number: u64, name: &str) -> Option<Vec<String>> {
    use std::io::{Read, Seek, SeekFrom};
    if let Some(path) = confined(logs, name) {
        let mut file = std::fs::File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(STDERR_TAIL)))
            .ok()?;
        let mut bytes = Vec::new();
        file.take(STDERR_TAIL).read_to_end(&mut bytes).ok()?;
        return Some(last_lines(&bytes, len > STDERR_TAIL));
    }
    let compressed = [referee::COMPRESSED_SUFFIX, referee::GZIP_SUFFIX]
        .iter()
        .find_map(|suffix| confined(logs, &format!("{name}{suffix}")));
    let text = match compressed {
        Some(path) => {
            // At most what an archive would take; a bot keeps 1 MiB a set.
            let mut text = Vec::new();
            referee::open_log(&path)
                .ok()?
                .take(referee::archive::MAX_ARCHIVED_LOG)
                .read_to_end(&mut text)
                .ok()?;
            text
        }
        None => return archived_tail(&league::archive_path(logs, number), name),
    };
    Some(tail_of(&text))
}

/// The last lines of a whole stderr text.
fn tail_of(text: &[u8]) -> Vec<String> {
    let from = text.len().saturating_sub(STDERR_TAIL as usize);
    last_lines(&text[from..], from > 0)
}

/// The archives whose stderr tails are kept: an archived set never changes, so each
/// archive is read once for all its stderr files' tails (at most `STDERR_LINES` lines
/// of `STDERR_TAIL` bytes each, 128 files an archive: at most about 512 KiB an archive).
const TAILED_ARCHIVES: usize = 16;

/// An archive's stderr tails, by member name (`STEM.a.stderr`).
type ArchiveTails = std::collections::HashMap<String, Vec<String>>;

/// The stderr tails of the archives read last, newest last.
static ARCHIVED_TAILS: std::sync::Mutex<Vec<(PathBuf, ArchiveTails)>> =
    std::sync::Mutex::new(Vec::new());

/// The tail of the stderr file `name` in the archive at `archive`. An archive is read
/// whole to reach a member, so it is read once for every tail it holds, one archive at a
/// time (the lock is held while reading): a page that lists many archived sets, asked
/// for again and again by anyone, costs one read of each archive, not one per set and
/// request.
fn archived_tail(archive: &FsPath, name: &str) -> Option<Vec<String>> {
    let mut kept = ARCHIVED_TAILS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = kept.iter().position(|(path, _)| path == archive) {
        let entry = kept.remove(i);
        let tail = entry.1.get(name).cloned();
        kept.push(entry);
        return tail;
    }
    let mut tails = std::collections::HashMap::new();
    referee::archive::each_stderr(archive, |member, text| {
        tails.insert(member.to_string(), tail_of(&text));
        Ok(true)
    })
    .ok()?;
    let tail = tails.get(name).cloned();
    if kept.len() == TAILED_ARCHIVES {
        kept.remove(0);
    }
    kept.push((archive.to_path_buf(), tails));
    tail
}

/// The last `STDERR_LINES` lines of `bytes`, the end of a stderr file (`cut`: not its
/// start, so its first line is not shown whole); invalid UTF-8 replaced: bot-supplied
/// text, for pages to show as text.
fn last_lines(bytes: &[u8], cut: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A cut first line is not shown.
    if cut && !lines.is_empty() {
        lines.remove(0);
    }
    let from = lines.len().saturating_sub(STDERR_LINES);
    lines[from..].iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set's stderr tail is read from its file, its gzip form or its archive; an
    /// archive is read once for every tail it holds (the second read finds them kept,
    /// even with the archive gone).
    #[test]
    fn stderr_tails_come_from_the_file_its_compressed_form_or_one_read_of_the_archive() {
        let dir = tempfile::tempdir().expect("tmp");
        let logs = dir.path();
        let lines: String = (1..=8).map(|i| format!("line {i}\n")).collect();
        std::fs::write(logs.join("r1-x-vs-y.a.stderr"), &lines).expect("write");
        let want: Vec<String> = (4..=8).map(|i| format!("line {i}")).collect();
        assert_eq!(
            stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"),
            Some(want.clone())
        );
        let compressed = referee::compress_log(&logs.join("r1-x-vs-y.a.stderr")).expect("compress");
        assert_eq!(
            stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"),
            Some(want.clone())
        );
        let archives = logs.join(league::ARCHIVE_DIR);
        std::fs::create_dir(&archives).expect("mkdir");
        let log = logs.join("r1-x-vs-y.jsonl");
        std::fs::write(&log, "{\"type\":\"header\"}\n").expect("write");
        referee::archive::write_archive(
            &referee::Dir::open(&archives).expect("dir"),
            "sets-000000001-000000064.tar.zst",
            &[("r1-x-vs-y".to_string(), log.as_path())],
            &[("r1-x-vs-y.a.stderr".to_string(), compressed.as_path())],
        )
        .expect("archive");
        std::fs::remove_file(&compressed).expect("remove");
        assert_eq!(
            stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"),
            Some(want.clone())
        );
        assert_eq!(stderr_tail(logs, 1, "r1-x-vs-y.b.stderr"), None);
        std::fs::remove_file(league::archive_path(logs, 1)).expect("remove");
        assert_eq!(stderr_tail(logs, 1, "r1-x-vs-y.a.stderr"), Some(want));
    }
}
