//! A server's finished logs, archived 64 sets to a file (`logs/archive/sets-FROM-TO.tar.zst`,
//! `referee::archive`): one file per set costs at least a disk block, 4 KiB, and an
//! archive of short logs costs about 0.5 KB a set.
//!
//! Sets are archived by their numbers (the order results were recorded, `done_seq`):
//! the archive of sets `FROM` to `TO` is written once all of them are finished, which
//! numbers given in order make a simple test (the last number read is at least `TO`).
//! Its name follows from a set's number alone ([`archive_path`]), so a reader finds a
//! set's log without asking anyone: the file `logs/STEM.jsonl.zst` while it is there,
//! else the archive of its number.
//!
//! The steps, each safe to be cut off: the archive is written under a temporary name,
//! synced and renamed; then the logs it holds are deleted; then the store's setting
//! `logs_archived_up_to` says so. Cut off before the rename: nothing changed. After it:
//! the next run finds the archive, deletes the logs it holds (and only those) and sets
//! the mark. What is not archived (a log the store keeps, a pruned one, one over
//! `referee::archive::MAX_ARCHIVED_LOG`) stays as it is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use referee::archive::{self, ARCHIVE_SUFFIX};

use crate::error::{Error, Result};
use crate::set_files::{open_logs, SetFiles};
use crate::store::{FinishedQuery, Store};

/// The archives' directory in the logs directory.
pub const ARCHIVE_DIR: &str = "archive";

/// Sets per archive.
pub const ARCHIVE_SETS: u64 = 64;

/// The store's setting: the number of the last set whose log was archived (or passed
/// over).
const ARCHIVED_SETTING: &str = "logs_archived_up_to";

/// The first and last numbers of the archive that holds set `number` (from 1).
pub fn archive_range(number: u64) -> (u64, u64) {
    let first = number.saturating_sub(1) / ARCHIVE_SETS * ARCHIVE_SETS + 1;
    (first, first + ARCHIVE_SETS - 1)
}

/// The archive in the logs directory `logs` that holds (or would hold) the log of the
/// set numbered `number`: `archive/sets-000000001-000000064.tar.zst`.
pub fn archive_path(logs: &Path, number: u64) -> PathBuf {
    logs.join(ARCHIVE_DIR).join(archive_name(number))
}

/// The file name of the archive that holds set `number`: `sets-000000001-000000064.tar.zst`.
fn archive_name(number: u64) -> String {
    let (first, last) = archive_range(number);
    format!("sets-{first:09}-{last:09}{ARCHIVE_SUFFIX}")
}

/// The last set number of an archive named `name`, if it is an archive's name.
fn archive_last(name: &str) -> Option<u64> {
    let range = name.strip_prefix("sets-")?.strip_suffix(ARCHIVE_SUFFIX)?;
    let (first, last) = range.split_once('-')?;
    let (first, last) = (first.parse::<u64>().ok()?, last.parse::<u64>().ok()?);
    (archive_range(first) == (first, last)).then_some(last)
}

/// What [`archive_logs`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchiveReport {
    /// Archives written.
    pub archives: usize,
    /// Logs put in them.
    pub logs: usize,
    /// Log files deleted once archived.
    pub deleted: usize,
    /// The sets numbered up to this one have been through archiving (the store's mark).
    pub up_to: u64,
}

/// Archives the logs of the whole ranges of [`ARCHIVE_SETS`] finished sets numbered up
/// to `done` that are not archived yet, in the logs directory `logs`: at most `ranges`
/// of them, oldest first (a server does a few after each result, so that a long
/// history, a store filled before archives existed, is caught up bit by bit instead of
/// holding the store for minutes).
pub fn archive_logs(
    store: &mut dyn Store,
    logs: &Path,
    done: u64,
    ranges: usize,
) -> Result<ArchiveReport> {
    // The files of the sets just finished are in their last form (the archive's
    // deletions never race their compression).
    crate::after_set::wait_for_compressions();
    let mut report = ArchiveReport::default();
    let mut after: u64 = store
        .settings()?
        .get(ARCHIVED_SETTING)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // Every file below the logs directory is reached through it, never through a link
    // (`referee::files`): `logs/archive` a link to elsewhere is refused, naming it.
    let dir = open_logs(logs).map_err(|e| archive_error(logs, e))?;
    for _ in 0..ranges {
        if after + ARCHIVE_SETS > done {
            break;
        }
        let (first, last) = archive_range(after + 1);
        let sets = store.finished_sets(&FinishedQuery::After {
            after: first - 1,
            limit: ARCHIVE_SETS as usize,
        })?;
        // The sets whose log is a file here (a link is not one): (stem, name, path). The
        // file is the one the store names (`STEM.jsonl.zst`, `STEM.jsonl.gz`,
        // `STEM.jsonl`), or the plain log if its compression could not be done (a full
        // disk).
        let files: Vec<(String, PathBuf, PathBuf)> = sets
            .iter()
            .filter(|(n, set)| *n <= last && !set.pruned)
            .filter_map(|(_, set)| {
                let (stem, name) = (set.outcome.log.stem()?, set.outcome.log.file_name()?);
                referee::finished_log_candidates(Path::new(&name))
                    .into_iter()
                    .find(|name| dir.entry(name).is_ok_and(|entry| entry.file && !entry.link))
                    .map(|name| (stem.to_string(), name.clone(), logs.join(&name)))
            })
            .collect();
        // Their bots' stderr files, plain or compressed: (member name, file).
        let stderr: Vec<(String, PathBuf)> = files
            .iter()
            .flat_map(|(stem, _, _)| SetFiles::new(logs, stem).stderr_files())
            // A link is not a file of the set's (the archive is served to anyone).
            .filter(|(_, path)| {
                path.file_name()
                    .and_then(|f| dir.entry(Path::new(f)).ok())
                    .is_some_and(|e| e.file && !e.link)
            })
            .collect();
        let dest = archive_path(logs, first);
        let name = archive_name(first);
        let rel = Path::new(ARCHIVE_DIR).join(&name);
        let there = dir.exists(&rel).map_err(|e| archive_error(&dest, e))?;
        let (held, held_stderr) = if there {
            // Written by a run cut off before it could delete the logs.
            let stems = archive::stems(&dest).map_err(|e| archive_error(&dest, e))?;
            let names = archive::stderr_names(&dest).map_err(|e| archive_error(&dest, e))?;
            (stems, names)
        } else if files.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let archives = dir
                .create_dir(Path::new(ARCHIVE_DIR))
                .map_err(|e| archive_error(&logs.join(ARCHIVE_DIR), e))?;
            let members: Vec<(String, &Path)> = files
                .iter()
                .map(|(stem, _, path)| (stem.clone(), path.as_path()))
                .collect();
            // One member a file: where a compression was cut off between its rename and
            // the plain file's removal, both forms are there (the same text); the
            // compressed one, listed first, goes in, and both are deleted below.
            let mut named = std::collections::HashSet::new();
            let stderr_members: Vec<(String, &Path)> = stderr
                .iter()
                .filter(|(name, _)| named.insert(name.clone()))
                .map(|(name, path)| (name.clone(), path.as_path()))
                .collect();
            let archived = archive::write_archive(&archives, &name, &members, &stderr_members)
                .map_err(|e| archive_error(&dest, e))?;
            report.archives += 1;
            report.logs += archived.stems.len();
            (archived.stems, archived.stderr)
        };
        for (stem, name, _) in &files {
            if held.contains(stem) && dir.remove_file(name).is_ok() {
                report.deleted += 1;
            }
        }
        for (name, path) in &stderr {
            let Some(file) = path.file_name() else {
                continue;
            };
            if held_stderr.contains(name) && dir.remove_file(Path::new(file)).is_ok() {
                report.deleted += 1;
            }
        }
        store.save_settings(&BTreeMap::from([(
            ARCHIVED_SETTING.to_string(),
            last.to_string(),
        )]))?;
        after = last;
    }
    report.up_to = after;
    Ok(report)
}

fn archive_error(path: &Path, e: std::io::Error) -> Error {
    Error::Runtime(format!("cannot archive logs in {}: {e}", path.display()))
}

/// Deletes the archives of the logs directory `logs` whose every set is numbered up to
/// `up_to` (their sets' logs were pruned). Returns the files deleted and their bytes.
/// `logs/archive` is reached without following a link: a link there is an error naming
/// it, and nothing is deleted.
pub fn delete_archives_up_to(logs: &Path, up_to: u64) -> std::io::Result<(Vec<PathBuf>, u64)> {
    let mut deleted = Vec::new();
    let mut bytes = 0;
    let archives = match open_logs(logs).and_then(|d| d.open_dir(Path::new(ARCHIVE_DIR))) {
        Ok(archives) => archives,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((deleted, bytes)),
        Err(e) => return Err(e),
    };
    for name in archives.names()? {
        let name = PathBuf::from(name);
        let last = name.to_str().and_then(archive_last);
        if last.is_some_and(|last| last <= up_to) {
            let size = archives.entry(&name).map(|e| e.len).unwrap_or(0);
            if archives.remove_file(&name).is_ok() {
                bytes += size;
                deleted.push(archives.join(&name));
            }
        }
    }
    Ok((deleted, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::Format;
    use crate::log_place::LogPlace;
    use crate::schedule::schedule;
    use crate::set_files::LOGS_DIR;
    use crate::store::{BotEntry, Claims, Reads, Schedule, SetOutcome, SqliteStore};

    /// A store of three bots with `n` finished sets, each with its log file in `logs`
    /// (`logs/STEM.jsonl.gz`, whose text names its set): returns the stems in the order
    /// they were numbered.
    fn finished(n: usize, logs: &Path) -> (SqliteStore, Vec<String>) {
        finished_as(n, logs, "jsonl.gz", "jsonl.gz")
    }

    /// As [`finished`], the store naming each log `logs/STEM.{named}` and its file
    /// `STEM.{kept}`.
    fn finished_as(n: usize, logs: &Path, named: &str, kept: &str) -> (SqliteStore, Vec<String>) {
        let mut store = SqliteStore::in_memory().expect("store");
        let bots: Vec<BotEntry> = ["x", "y", "z"]
            .iter()
            .map(|b| BotEntry {
                name: b.to_string(),
                command: b.to_string(),
            })
            .collect();
        let names: Vec<String> = bots.iter().map(|b| b.name.clone()).collect();
        let rounds = u32::try_from(n.div_ceil(3)).expect("rounds");
        store
            .sync(&bots, &schedule(&names, &Format::RoundRobin, rounds, 1))
            .expect("sync");
        let mut stems = Vec::new();
        for _ in 0..n {
            let set = store.claim_next().expect("claim").expect("a set");
            let stem = set.key.stem();
            let file = logs.join(format!("{stem}.{kept}"));
            std::fs::write(&file, format!("the log of {stem}\n")).expect("write");
            let log = LogPlace::parse(&format!("{LOGS_DIR}/{stem}.{named}")).expect("a log");
            let outcome = SetOutcome::new(log);
            store.record(set.claim(), &outcome).expect("record");
            stems.push(stem);
        }
        (store, stems)
    }

    /// A log the store names compressed (`STEM.jsonl.zst`) whose compression never
    /// finished (the process stopped, the disk was full) is archived from its plain
    /// file, and that file deleted; a log in neither form is left out.
    #[test]
    fn a_log_whose_compression_never_finished_is_archived_from_its_plain_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let logs = dir.path();
        let (mut store, stems) = finished_as(64, logs, "jsonl.zst", "jsonl");
        std::fs::remove_file(logs.join(format!("{}.jsonl", stems[5]))).expect("remove");
        let report = archive_logs(&mut store, logs, 64, 1).expect("archive");
        assert_eq!(
            (report.archives, report.logs, report.deleted, report.up_to),
            (1, 63, 63, 64)
        );
        let archive = archive_path(logs, 1);
        assert_eq!(
            referee::archive::read_log(&archive, &stems[0]).expect("read"),
            Some(format!("the log of {}\n", stems[0]).into_bytes())
        );
        assert_eq!(
            referee::archive::read_log(&archive, &stems[5]).expect("read"),
            None
        );
        assert!(!logs.join(format!("{}.jsonl", stems[0])).exists());
    }

    #[test]
    fn whole_ranges_are_archived_a_few_at_a_time_and_a_cut_off_run_is_finished() {
        let dir = tempfile::tempdir().expect("tmp");
        let logs = dir.path();
        let (mut store, stems) = finished(140, logs);
        // The bots of set 2 wrote on stderr (one file compressed, as a finished set
        // leaves it), and so did set 130's.
        std::fs::write(logs.join(format!("{}.a.stderr", stems[1])), "oops\n").expect("write");
        std::fs::write(logs.join(format!("{}.b.stderr", stems[1])), "b said\n").expect("write");
        referee::compress_log(&logs.join(format!("{}.b.stderr", stems[1]))).expect("gzip");
        std::fs::write(logs.join(format!("{}.a.stderr", stems[129])), "later\n").expect("write");
        // One range a call: 1 to 64, then 65 to 128; 129 to 140 wait for a whole 64.
        let first = archive_logs(&mut store, logs, 140, 1).expect("archive");
        assert_eq!(
            (first.archives, first.logs, first.deleted, first.up_to),
            (1, 64, 66, 64)
        );
        // Set 2's stderr files went into the archive, plain, and left the directory.
        let archive = archive_path(logs, 1);
        assert_eq!(
            referee::archive::stderr_names(&archive).expect("names"),
            [
                format!("{}.a.stderr", stems[1]),
                format!("{}.b.stderr", stems[1])
            ]
        );
        assert_eq!(
            referee::archive::read_stderr(&archive, &format!("{}.b.stderr", stems[1]))
                .expect("read"),
            Some(b"b said\n".to_vec())
        );
        assert!(!logs.join(format!("{}.a.stderr", stems[1])).exists());
        assert!(!logs.join(format!("{}.b.stderr.zst", stems[1])).exists());
        assert!(logs.join(format!("{}.a.stderr", stems[129])).exists());
        let second = archive_logs(&mut store, logs, 140, 1).expect("archive");
        assert_eq!(second.up_to, 128);
        let third = archive_logs(&mut store, logs, 140, 8).expect("archive");
        assert_eq!(
            third,
            ArchiveReport {
                up_to: 128,
                ..Default::default()
            }
        );
        for (i, stem) in stems.iter().enumerate() {
            let number = i as u64 + 1;
            let own = logs.join(format!("{stem}.jsonl.gz"));
            assert_eq!(own.exists(), number > 128, "{stem}");
            if number <= 128 {
                let text = referee::archive::read_log(&archive_path(logs, number), stem)
                    .expect("read")
                    .expect("held");
                assert_eq!(text, format!("the log of {stem}\n").into_bytes());
            }
        }
        assert_eq!(
            referee::archive::stems(&archive_path(logs, 65)).expect("stems"),
            stems[64..128]
        );
        // Cut off after the rename, before the logs went and the mark was set: the next
        // run deletes what the archive holds (and only that), rewriting nothing.
        let archive = archive_path(logs, 1);
        let written = std::fs::metadata(&archive)
            .expect("archive")
            .modified()
            .ok();
        std::fs::write(logs.join(format!("{}.jsonl.gz", stems[0])), "again").expect("write");
        store
            .save_settings(&BTreeMap::from([(
                ARCHIVED_SETTING.to_string(),
                "0".to_string(),
            )]))
            .expect("settings");
        let again = archive_logs(&mut store, logs, 140, 1).expect("archive");
        assert_eq!((again.archives, again.deleted, again.up_to), (0, 1, 64));
        assert!(!logs.join(format!("{}.jsonl.gz", stems[0])).exists());
        assert_eq!(
            std::fs::metadata(&archive)
                .expect("archive")
                .modified()
                .ok(),
            written
        );
        // Pruned past the first archive's last set: it goes, the second stays.
        let (deleted, bytes) = delete_archives_up_to(logs, 100).expect("delete");
        assert_eq!(deleted, std::slice::from_ref(&archive));
        assert!(bytes > 0);
        assert!(archive_path(logs, 65).is_file());
    }

    /// `logs/archive` a link to another directory: no archive is written there (nor a
    /// temporary file), no log is deleted, the mark stays, and the error names the
    /// link; pruning deletes nothing there either. Once the link is gone, the range is
    /// archived.
    #[test]
    fn no_archive_is_written_through_a_linked_directory() {
        let tmp = tempfile::tempdir().expect("tmp");
        let logs = tmp.path().join(LOGS_DIR);
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&logs).expect("mkdir");
        std::fs::create_dir(&outside).expect("mkdir");
        let link = logs.join(ARCHIVE_DIR);
        std::os::unix::fs::symlink(&outside, &link).expect("symlink");
        let (mut store, stems) = finished(64, &logs);
        let refused = format!(
            "{} is a symbolic link: hus never follows a link where it writes files (remove it)",
            link.display()
        );
        for _ in 0..2 {
            let error = archive_logs(&mut store, &logs, 64, 1).expect_err("refused");
            assert_eq!(
                error.to_string(),
                format!(
                    "cannot archive logs in {}: {refused}",
                    archive_path(&logs, 1).display()
                )
            );
        }
        // An archive-named file where the link points is not pruned either.
        let planted = outside.join(archive_name(1));
        std::fs::write(&planted, "not hus's").expect("write");
        let error = delete_archives_up_to(&logs, 64).expect_err("refused");
        assert_eq!(error.to_string(), refused);
        let there: Vec<_> = std::fs::read_dir(&outside)
            .expect("read")
            .flatten()
            .collect();
        assert_eq!(there.len(), 1);
        assert_eq!(
            std::fs::read_to_string(&planted).expect("read"),
            "not hus's"
        );
        for stem in &stems {
            assert!(logs.join(format!("{stem}.jsonl.gz")).is_file(), "{stem}");
        }
        assert_eq!(
            store.settings().expect("settings").get(ARCHIVED_SETTING),
            None
        );
        std::fs::remove_file(&link).expect("remove the link");
        let report = archive_logs(&mut store, &logs, 64, 1).expect("archive");
        assert_eq!((report.archives, report.logs, report.deleted), (1, 64, 64));
        assert!(archive_path(&logs, 1).is_file());
    }

    #[test]
    fn a_set_number_names_its_archive() {
        assert_eq!(archive_range(1), (1, 64));
        assert_eq!(archive_range(64), (1, 64));
        assert_eq!(archive_range(65), (65, 128));
        assert_eq!(
            archive_path(Path::new("logs"), 130),
            Path::new("logs/archive/sets-000000129-000000192.tar.zst")
        );
        assert_eq!(archive_last("sets-000000129-000000192.tar.zst"), Some(192));
        assert_eq!(archive_last("sets-000000129-000000191.tar.zst"), None);
        assert_eq!(archive_last("sets-000000129-000000192.tar.zst.tmp"), None);
        assert_eq!(archive_last("notes.txt"), None);
    }
}
