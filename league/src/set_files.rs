//! The names of a set's files in a logs directory, for every runner of sets (`hus
//! league`, `hus worker`, `hus serve`): one [`SetFiles`] per attempt of a set.

use std::path::{Path, PathBuf};

use referee::{Dir, Side};

use crate::error::{Error, Result};
use crate::log_place::{LogForm, LogPlace};

/// The logs' directory in the league's directory.
pub const LOGS_DIR: &str = "logs";

/// Opens the league's logs directory `logs` (`DIR/logs`) from the league's directory
/// without following a link: the league's directory may be a link (the user named it),
/// `logs/` may not, nor anything below it reached through the handle
/// (`referee::files`).
pub fn open_logs(logs: &Path) -> std::io::Result<Dir> {
    let (dir, name) = referee::open_parent(logs)?;
    dir.open_dir(name)
}

/// Deletes the files of a finished set whose log is `log` (`logs/STEM.jsonl.zst`,
/// `logs/STEM.jsonl.gz`, `logs/STEM.jsonl`): its log and its bots' stderr, in `logs`.
/// A log the store keeps (`store:ID`) has no file. Returns the files deleted and their
/// bytes; a file already gone is no error, and a link is never followed (it is removed
/// as a name, like any other).
pub fn delete_set_files(logs: &Path, log: &LogPlace) -> (Vec<PathBuf>, u64) {
    let Some(stem) = log.stem() else {
        return (Vec::new(), 0);
    };
    let mut deleted = Vec::new();
    let mut bytes = 0;
    // Removed through the logs directory, reached without following a link: a link at
    // `logs/` deletes nothing where it points.
    let Ok(dir) = open_logs(logs) else {
        return (deleted, bytes);
    };
    let files = SetFiles::new(logs, stem);
    for suffix in files.present_suffixes() {
        let name = files.name(&suffix);
        let size = dir.entry(&name).map(|e| e.len).unwrap_or(0);
        if dir.remove_file(&name).is_ok() {
            bytes += size;
            deleted.push(logs.join(name));
        }
    }
    (deleted, bytes)
}

/// The endings a compressed file's name adds to its plain name: zstd's, then gzip's
/// (an older version's).
const COMPRESSED: [&str; 2] = [".zst", ".gz"];

/// The files of one attempt of a set, all named after its stem: the log `STEM.jsonl`
/// while the set plays (`STEM.jsonl.zst` once it is finished and compressed), and each
/// seat's stderr, `STEM.a.stderr` and `STEM.b.stderr` for a bot, or
/// `STEM.a1.stderr`, `STEM.a2.stderr`, ... `STEM.b1.stderr`, ... for the members of a
/// team (in the team's list order, from 1). An interrupted attempt's files are set
/// aside under `STEM.partial-N.*` ([`SetFiles::set_aside`]), the same names with
/// `partial-N` inserted, so that the next attempt starts afresh: a bot's stderr is
/// opened for append, and without this a retried set would add its second attempt to
/// the first's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetFiles {
    dir: PathBuf,
    stem: String,
}

impl SetFiles {
    /// The files of the set `stem` in `dir`.
    pub fn new(dir: &Path, stem: &str) -> SetFiles {
        SetFiles {
            dir: dir.to_path_buf(),
            stem: stem.to_string(),
        }
    }

    /// The stem every name starts with.
    pub fn stem(&self) -> &str {
        &self.stem
    }

    /// The log as it is written, `STEM.jsonl`.
    pub fn log(&self) -> PathBuf {
        self.path(LogForm::Plain.suffix())
    }

    /// The finished log, compressed: `STEM.jsonl.zst`.
    pub fn compressed_log(&self) -> PathBuf {
        self.path(LogForm::Zstd.suffix())
    }

    /// The stderr file of side `side`: its bot's, `STEM.a.stderr`, or with `member`
    /// (from 0) its team member's, `STEM.a1.stderr` for the first.
    pub fn stderr(&self, side: Side, member: Option<usize>) -> PathBuf {
        let letter = side.lower();
        match member {
            None => self.path(&format!("{letter}.stderr")),
            Some(i) => self.path(&format!("{letter}{}.stderr", i + 1)),
        }
    }

    /// After a finished set: removes each side's stderr files when every one of them is
    /// empty (a bot's `STEM.a.stderr`, or all of a team's `STEM.a1.stderr`...), so that
    /// a set of quiet bots leaves its log alone; a side that wrote anything keeps all
    /// its files (a team's are found from the first member on, so none is removed from
    /// the middle of the list). Files it cannot read or remove are left as they are.
    /// Returns the files removed.
    pub fn remove_empty_stderr(&self) -> Vec<PathBuf> {
        let mut removed = Vec::new();
        let Ok(dir) = open_logs(&self.dir) else {
            return removed;
        };
        for side in Side::BOTH {
            let mut files = vec![self.stderr(side, None)];
            files.extend(
                (0..)
                    .map(|i| self.stderr(side, Some(i)))
                    .take_while(|p| p.symlink_metadata().is_ok()),
            );
            let present: Vec<PathBuf> = files
                .into_iter()
                .filter(|p| p.symlink_metadata().is_ok())
                .collect();
            let all_empty = present.iter().all(|p| {
                p.symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_file() && m.len() == 0)
            });
            if all_empty {
                for p in present {
                    let Some(name) = p.file_name() else { continue };
                    if dir.remove_file(Path::new(name)).is_ok() {
                        removed.push(p);
                    }
                }
            }
        }
        removed
    }

    /// The names the `n`th set-aside attempt has (`STEM.partial-N.*`).
    pub fn partial(&self, n: u32) -> SetFiles {
        SetFiles::new(&self.dir, &format!("{}.partial-{n}", self.stem))
    }

    fn path(&self, suffix: &str) -> PathBuf {
        self.dir.join(self.name(suffix))
    }

    /// The name in the logs directory of the file with `suffix`: `STEM.suffix`.
    fn name(&self, suffix: &str) -> PathBuf {
        PathBuf::from(format!("{}.{suffix}", self.stem))
    }

    /// The suffixes (after `STEM.`) of the attempt's files that are there, links
    /// included, the log first: the log, the bots' stderr, and the team members'
    /// stderr from the first member on to the first one missing (a team's members are
    /// started in their order, each opening its file as it starts).
    fn present_suffixes(&self) -> Vec<String> {
        let there = |suffix: &str| self.path(suffix).symlink_metadata().is_ok();
        let mut present = Vec::new();
        for suffix in [LogForm::Plain, LogForm::Zstd, LogForm::Gzip].map(LogForm::suffix) {
            if there(suffix) {
                present.push(suffix.to_string());
            }
        }
        present.extend(self.stderr_suffixes());
        present
    }

    /// The suffixes of the stderr files that are there: each seat's `a.stderr`, or once
    /// compressed `a.stderr.zst` (or `a.stderr.gz`, by an older version; both forms, if
    /// a compression was cut off), then the team members' from the first on to the
    /// first one missing.
    fn stderr_suffixes(&self) -> Vec<String> {
        let there = |suffix: &str| self.path(suffix).symlink_metadata().is_ok();
        let forms = |base: String| {
            COMPRESSED
                .map(|c| format!("{base}{c}"))
                .into_iter()
                .chain([base])
        };
        let mut present = Vec::new();
        for base in ["a.stderr", "b.stderr"] {
            present.extend(forms(base.to_string()).filter(|s| there(s)));
        }
        for side in Side::BOTH {
            let letter = side.lower();
            for i in 1.. {
                let found: Vec<String> = forms(format!("{letter}{i}.stderr"))
                    .filter(|s| there(s))
                    .collect();
                if found.is_empty() {
                    break;
                }
                present.extend(found);
            }
        }
        present
    }

    /// The set's stderr files that are there, plain or compressed: each with the name
    /// of its plain form (`STEM.a.stderr`), as an archive keeps it.
    pub fn stderr_files(&self) -> Vec<(String, PathBuf)> {
        self.stderr_suffixes()
            .into_iter()
            .map(|suffix| {
                let plain = COMPRESSED
                    .iter()
                    .find_map(|c| suffix.strip_suffix(c))
                    .unwrap_or(&suffix);
                (format!("{}.{plain}", self.stem), self.path(&suffix))
            })
            .collect()
    }

    /// After a finished set: compresses each of its plain stderr files with zstd
    /// (`STEM.a.stderr.zst`: written under a temporary name, synced and renamed, then
    /// the plain file removed), as its log is. A file that cannot be compressed (a full
    /// disk) stays plain. Returns the compressed files.
    pub fn compress_stderr(&self) -> Vec<PathBuf> {
        // Through the logs directory, reached without following a link.
        let Ok(dir) = open_logs(&self.dir) else {
            return Vec::new();
        };
        self.stderr_suffixes()
            .iter()
            .filter(|s| !COMPRESSED.iter().any(|c| s.ends_with(c)))
            .filter_map(|s| referee::compress_log_in(&dir, &self.name(s)).ok())
            .collect()
    }

    /// The attempt's files that are there, the log first.
    pub fn existing(&self) -> Vec<PathBuf> {
        self.present_suffixes()
            .iter()
            .map(|s| self.path(s))
            .collect()
    }

    /// Renames the files an interrupted attempt left (its log and every seat's
    /// stderr) to the first `STEM.partial-N.*` none of whose names is taken, so the next
    /// attempt starts afresh and nothing is deleted. Returns the new names, the log
    /// first; none when the attempt left nothing.
    pub fn set_aside(&self) -> Result<Vec<PathBuf>> {
        let present = self.present_suffixes();
        if present.is_empty() {
            return Ok(Vec::new());
        }
        // Renamed through the logs directory, reached without following a link.
        let dir = open_logs(&self.dir).map_err(|error| Error::Io {
            what: "cannot open the logs directory",
            path: self.dir.clone(),
            error,
        })?;
        // A link among them is refused before anything moves: the set's files are
        // opened without following links, and the link itself is the user's to look at.
        for s in &present {
            let path = self.path(s);
            if dir.entry(&self.name(s)).is_ok_and(|e| e.link) {
                return Err(Error::Io {
                    what: "cannot use the set's file",
                    error: referee::symlink_error(&path),
                    path,
                });
            }
        }
        let taken = |n: u32| {
            let partial = self.partial(n);
            [
                LogForm::Plain.suffix(),
                LogForm::Gzip.suffix(),
                "a.stderr",
                "b.stderr",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain(present.iter().cloned())
            .any(|s| partial.path(&s).symlink_metadata().is_ok())
        };
        let n = (1..).find(|&n| !taken(n)).unwrap_or(1);
        let partial = self.partial(n);
        let mut kept = Vec::new();
        for s in &present {
            let (from, to) = (self.name(s), partial.name(s));
            dir.rename(&from, &to).map_err(|error| Error::Io {
                what: "cannot keep a partial log",
                path: self.path(s),
                error,
            })?;
            kept.push(partial.path(s));
        }
        Ok(kept)
    }
}

/// Sets aside the files an interrupted attempt of the set `stem` left in `logs`
/// ([`SetFiles::set_aside`]). Returns the new names, the log first.
pub fn set_aside(logs: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    SetFiles::new(logs, stem).set_aside()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn a_finished_set_keeps_only_the_stderr_files_of_sides_that_wrote() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let logs = tmp.path();
        // Side A a bot that wrote nothing; side B a team whose second member wrote.
        let files = SetFiles::new(logs, "r1-x-vs-y");
        for (name, text) in [
            ("r1-x-vs-y.jsonl", "{}"),
            ("r1-x-vs-y.a.stderr", ""),
            ("r1-x-vs-y.b1.stderr", ""),
            ("r1-x-vs-y.b2.stderr", "oops"),
            ("r1-x-vs-y.b3.stderr", ""),
            ("r1-x-vs-y.partial-1.a.stderr", ""),
        ] {
            std::fs::write(logs.join(name), text).expect("write");
        }
        assert_eq!(
            files.remove_empty_stderr(),
            [logs.join("r1-x-vs-y.a.stderr")]
        );
        let mut left: Vec<String> = std::fs::read_dir(logs)
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "r1-x-vs-y.b1.stderr",
                "r1-x-vs-y.b2.stderr",
                "r1-x-vs-y.b3.stderr",
                "r1-x-vs-y.jsonl",
                "r1-x-vs-y.partial-1.a.stderr"
            ]
        );
        // A team all quiet: every member's file goes.
        std::fs::write(logs.join("r1-x-vs-y.b2.stderr"), "").expect("write");
        assert_eq!(
            files.remove_empty_stderr(),
            [1, 2, 3].map(|i| logs.join(format!("r1-x-vs-y.b{i}.stderr")))
        );
    }

    /// A finished set's stderr files are compressed, still found (under their plain
    /// names, as an archive keeps them), and deleted with the set's log.
    #[test]
    fn a_finished_sets_stderr_is_compressed_found_and_deleted_with_its_log() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path();
        let files = SetFiles::new(logs, "r1-x-vs-y");
        std::fs::write(files.log(), "log").expect("write");
        std::fs::write(files.stderr(Side::A, None), "a said\n").expect("write");
        std::fs::write(files.stderr(Side::B, Some(0)), "b1 said\n").expect("write");
        let compressed = files.compress_stderr();
        assert_eq!(
            compressed,
            [
                logs.join("r1-x-vs-y.a.stderr.zst"),
                logs.join("r1-x-vs-y.b1.stderr.zst")
            ]
        );
        assert_eq!(
            names(logs),
            [
                "r1-x-vs-y.a.stderr.zst",
                "r1-x-vs-y.b1.stderr.zst",
                "r1-x-vs-y.jsonl"
            ]
        );
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut referee::open_log(&compressed[0]).expect("open"),
            &mut text,
        )
        .expect("read");
        assert_eq!(text, "a said\n");
        assert_eq!(
            files.stderr_files(),
            [
                ("r1-x-vs-y.a.stderr".to_string(), compressed[0].clone()),
                ("r1-x-vs-y.b1.stderr".to_string(), compressed[1].clone())
            ]
        );
        let (deleted, _) = delete_set_files(logs, &LogPlace::file("r1-x-vs-y", LogForm::Plain));
        assert_eq!(deleted.len(), 3);
        assert!(names(logs).is_empty());
    }

    /// An older version's gzip files (`STEM.jsonl.gz`, `STEM.a.stderr.gz`) are still a
    /// set's files: found under their plain names, never compressed again, deleted
    /// with the set (named as the store of that version named them).
    #[test]
    fn an_older_versions_gzip_files_are_still_the_sets() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path();
        let files = SetFiles::new(logs, "r1-x-vs-y");
        for name in [
            "r1-x-vs-y.jsonl.gz",
            "r1-x-vs-y.a.stderr.gz",
            "r1-x-vs-y.b.stderr",
        ] {
            std::fs::write(logs.join(name), "x").expect("write");
        }
        assert_eq!(
            files.stderr_files(),
            [
                (
                    "r1-x-vs-y.a.stderr".to_string(),
                    logs.join("r1-x-vs-y.a.stderr.gz")
                ),
                (
                    "r1-x-vs-y.b.stderr".to_string(),
                    logs.join("r1-x-vs-y.b.stderr")
                )
            ]
        );
        assert_eq!(
            files.compress_stderr(),
            [logs.join("r1-x-vs-y.b.stderr.zst")]
        );
        let old = LogPlace::parse("logs/r1-x-vs-y.jsonl.gz").expect("an older version's log");
        assert_eq!(old, LogPlace::file("r1-x-vs-y", LogForm::Gzip));
        let (deleted, _) = delete_set_files(logs, &old);
        assert_eq!(
            deleted,
            [
                logs.join("r1-x-vs-y.jsonl.gz"),
                logs.join("r1-x-vs-y.a.stderr.gz"),
                logs.join("r1-x-vs-y.b.stderr.zst")
            ]
        );
        assert!(names(logs).is_empty());
    }

    #[test]
    fn a_sets_files_are_named_after_its_stem() {
        let files = SetFiles::new(Path::new("logs"), "r1-x-vs-y");
        assert_eq!(files.log(), Path::new("logs/r1-x-vs-y.jsonl"));
        assert_eq!(
            files.stderr(Side::A, None),
            Path::new("logs/r1-x-vs-y.a.stderr")
        );
        assert_eq!(
            files.stderr(Side::B, None),
            Path::new("logs/r1-x-vs-y.b.stderr")
        );
        assert_eq!(
            files.stderr(Side::A, Some(0)),
            Path::new("logs/r1-x-vs-y.a1.stderr")
        );
        assert_eq!(
            files.stderr(Side::B, Some(2)),
            Path::new("logs/r1-x-vs-y.b3.stderr")
        );
        assert_eq!(
            files.partial(2).stderr(Side::B, Some(0)),
            Path::new("logs/r1-x-vs-y.partial-2.b1.stderr")
        );
    }

    #[test]
    fn partial_logs_are_renamed_never_overwritten() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path();
        assert_eq!(
            set_aside(logs, "r1-a-vs-b").expect("nothing to do"),
            Vec::<PathBuf>::new()
        );
        for attempt in 1..=2 {
            for s in ["jsonl", "a.stderr", "b.stderr"] {
                std::fs::write(
                    logs.join(format!("r1-a-vs-b.{s}")),
                    format!("attempt {attempt}"),
                )
                .expect("write");
            }
            let kept = set_aside(logs, "r1-a-vs-b").expect("set aside");
            assert_eq!(
                kept[0],
                logs.join(format!("r1-a-vs-b.partial-{attempt}.jsonl"))
            );
        }
        // Only a log (the bots never started): it is kept alone.
        std::fs::write(logs.join("r1-a-vs-b.jsonl"), "attempt 3").expect("write");
        set_aside(logs, "r1-a-vs-b").expect("set aside");
        assert_eq!(
            names(logs),
            [
                "r1-a-vs-b.partial-1.a.stderr",
                "r1-a-vs-b.partial-1.b.stderr",
                "r1-a-vs-b.partial-1.jsonl",
                "r1-a-vs-b.partial-2.a.stderr",
                "r1-a-vs-b.partial-2.b.stderr",
                "r1-a-vs-b.partial-2.jsonl",
                "r1-a-vs-b.partial-3.jsonl",
            ]
        );
        let first = std::fs::read_to_string(logs.join("r1-a-vs-b.partial-1.jsonl")).expect("read");
        assert_eq!(first, "attempt 1");
    }

    #[test]
    fn a_team_sets_member_files_are_set_aside_with_its_log() {
        let dir = tempfile::tempdir().expect("temp dir");
        let files = SetFiles::new(dir.path(), "r1-reds-vs-blues");
        for attempt in 1..=2 {
            std::fs::write(files.log(), format!("log {attempt}")).expect("write");
            for (side, member) in [
                (Side::A, 0),
                (Side::A, 1),
                (Side::B, 0),
                (Side::B, 1),
                (Side::B, 2),
            ] {
                std::fs::write(
                    files.stderr(side, Some(member)),
                    format!("attempt {attempt} side {side} member {member}"),
                )
                .expect("write");
            }
            let kept = files.set_aside().expect("set aside");
            assert_eq!(kept.len(), 6);
            assert_eq!(kept[0], files.partial(attempt).log());
        }
        assert_eq!(files.existing(), Vec::<PathBuf>::new());
        let mut expected = Vec::new();
        for n in 1..=2 {
            for s in ["a1", "a2", "b1", "b2", "b3"] {
                expected.push(format!("r1-reds-vs-blues.partial-{n}.{s}.stderr"));
            }
            expected.push(format!("r1-reds-vs-blues.partial-{n}.jsonl"));
        }
        expected.sort();
        assert_eq!(names(dir.path()), expected);
        let second =
            std::fs::read_to_string(files.partial(2).stderr(Side::B, Some(2))).expect("read");
        assert_eq!(second, "attempt 2 side 1 member 2");
    }

    #[test]
    fn a_link_among_a_sets_files_is_refused_and_nothing_moves() {
        let dir = tempfile::tempdir().expect("temp dir");
        let files = SetFiles::new(dir.path(), "r1-a-vs-b");
        std::fs::write(files.log(), "log").expect("write");
        std::os::unix::fs::symlink("/etc/hostname", files.stderr(Side::A, Some(0))).expect("link");
        assert!(files.set_aside().is_err());
        assert_eq!(
            names(dir.path()),
            ["r1-a-vs-b.a1.stderr", "r1-a-vs-b.jsonl"]
        );
    }
}
