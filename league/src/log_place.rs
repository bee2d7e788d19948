//! Where a finished set's log is, as the store names it: [`LogPlace`], parsed once
//! when a row is read and written back as the same text. The stored forms are
//! `logs/STEM.jsonl` (being written, or a log whose compression was not done),
//! `logs/STEM.jsonl.zst` (compressed), `logs/STEM.jsonl.gz` (compressed by an older
//! version) and `store:ID` (a worker's log, kept in a PostgreSQL store). An archived
//! log keeps the name of its file: a reader finds it in the archive of its set's
//! number (`archive::archive_path`) once its file is gone.

use std::fmt;
use std::path::PathBuf;

use serde::{Serialize, Serializer};

use crate::set_files::LOGS_DIR;
use crate::store::SetId;

/// The form of a log file in `logs/`: the ending after its stem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogForm {
    /// `STEM.jsonl`: as written (a running set's, or a finished one whose compression
    /// was not done).
    Plain,
    /// `STEM.jsonl.zst`: compressed with zstd once finished.
    Zstd,
    /// `STEM.jsonl.gz`: compressed with gzip by an older version.
    Gzip,
}

impl LogForm {
    /// Every form, the compressed ones first (a name is matched against the longest
    /// ending first).
    const ALL: [LogForm; 3] = [LogForm::Zstd, LogForm::Gzip, LogForm::Plain];

    /// The ending after `STEM.`: `jsonl`, `jsonl.zst`, `jsonl.gz`.
    pub fn suffix(self) -> &'static str {
        match self {
            LogForm::Plain => "jsonl",
            LogForm::Zstd => "jsonl.zst",
            LogForm::Gzip => "jsonl.gz",
        }
    }
}

/// Where a set's log is: a file of the league's `logs/` directory, or kept in the
/// store. Written and read as one string (`logs/STEM.jsonl.zst`, `store:ID`); any
/// other string is refused ([`LogPlace::parse`]), so a store's row that holds one is
/// invalid rather than read as a file it never named.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LogPlace {
    /// `logs/STEM.jsonl`, `logs/STEM.jsonl.zst` or `logs/STEM.jsonl.gz`, relative to
    /// the league's directory.
    File {
        /// The set's stem (`r1-alpha-vs-greedy`): one file name's worth, no `/`.
        stem: String,
        /// Its ending.
        form: LogForm,
    },
    /// `store:ID`: kept by the store (PostgreSQL) as the result of the set numbered
    /// `ID` there, sent by a worker.
    Stored(SetId),
}

/// The prefix of a log the store keeps.
const STORED_PREFIX: &str = "store:";

impl LogPlace {
    /// The log of the set `stem` in `logs/`, in `form`.
    pub fn file(stem: &str, form: LogForm) -> LogPlace {
        LogPlace::File {
            stem: stem.to_string(),
            form,
        }
    }

    /// The place this string names, as [`fmt::Display`] writes it; `None` for any
    /// other string (an empty stem, a stem with `/`, an unknown ending, a number not
    /// written as the store writes it).
    pub fn parse(text: &str) -> Option<LogPlace> {
        if let Some(digits) = text.strip_prefix(STORED_PREFIX) {
            let id: SetId = digits.parse().ok().filter(|&n| n > 0)?;
            // Only the form this code writes: `store:7`, never `store:07` or `store:+7`.
            return (digits == id.to_string()).then_some(LogPlace::Stored(id));
        }
        let name = text.strip_prefix(LOGS_DIR)?.strip_prefix('/')?;
        LogForm::ALL.into_iter().find_map(|form| {
            let stem = name.strip_suffix(form.suffix())?.strip_suffix('.')?;
            let fits = !stem.is_empty() && !stem.contains(['/', '\0']);
            fits.then(|| LogPlace::file(stem, form))
        })
    }

    /// The set's stem, for a log file; `None` for a log the store keeps.
    pub fn stem(&self) -> Option<&str> {
        match self {
            LogPlace::File { stem, .. } => Some(stem),
            LogPlace::Stored(_) => None,
        }
    }

    /// The file's name in `logs/` (`STEM.jsonl.zst`); `None` for a log the store keeps.
    pub fn file_name(&self) -> Option<String> {
        match self {
            LogPlace::File { stem, form } => Some(format!("{stem}.{}", form.suffix())),
            LogPlace::Stored(_) => None,
        }
    }

    /// The file relative to the league's directory (`logs/STEM.jsonl.zst`); `None` for
    /// a log the store keeps.
    pub fn path(&self) -> Option<PathBuf> {
        self.file_name()
            .map(|name| PathBuf::from(LOGS_DIR).join(name))
    }
}

/// As the store keeps it: `logs/STEM.jsonl.zst`, `store:ID`.
impl fmt::Display for LogPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogPlace::File { stem, form } => write!(f, "{LOGS_DIR}/{stem}.{}", form.suffix()),
            LogPlace::Stored(id) => write!(f, "{STORED_PREFIX}{id}"),
        }
    }
}

/// As the store keeps it (the API's `log`).
impl Serialize for LogPlace {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_round_trips() {
        for (text, place) in [
            (
                "logs/r1-a-vs-b.jsonl",
                LogPlace::file("r1-a-vs-b", LogForm::Plain),
            ),
            (
                "logs/r1-a-vs-b.jsonl.zst",
                LogPlace::file("r1-a-vs-b", LogForm::Zstd),
            ),
            (
                "logs/r1-a-vs-b.jsonl.gz",
                LogPlace::file("r1-a-vs-b", LogForm::Gzip),
            ),
            // A stem that ends like a log keeps its ending.
            (
                "logs/x.jsonl.jsonl",
                LogPlace::file("x.jsonl", LogForm::Plain),
            ),
            (
                "logs/x.jsonl.zst.jsonl.gz",
                LogPlace::file("x.jsonl.zst", LogForm::Gzip),
            ),
            ("store:1", LogPlace::Stored(1)),
            ("store:9223372036854775807", LogPlace::Stored(i64::MAX)),
        ] {
            assert_eq!(LogPlace::parse(text), Some(place.clone()), "{text}");
            assert_eq!(place.to_string(), text);
            assert_eq!(
                serde_json::to_string(&place).expect("json"),
                format!("\"{text}\"")
            );
        }
    }

    #[test]
    fn names_it_never_writes_are_refused() {
        for text in [
            "",
            "l",
            "logs/",
            "logs/.jsonl",
            "logs/x",
            "logs/x.txt",
            "logs/x.jsonl.bz2",
            "logs/a/b.jsonl",
            "/logs/x.jsonl",
            "logsx.jsonl",
            "x.jsonl",
            "logs/x\0.jsonl",
            "store:",
            "store:0",
            "store:-3",
            "store:07",
            "store:+7",
            "store:x",
            "store:99999999999999999999",
        ] {
            assert_eq!(LogPlace::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_file_has_its_name_and_path_and_a_stored_log_none() {
        let place = LogPlace::file("r2-b-vs-a", LogForm::Zstd);
        assert_eq!(place.stem(), Some("r2-b-vs-a"));
        assert_eq!(place.file_name().as_deref(), Some("r2-b-vs-a.jsonl.zst"));
        assert_eq!(
            place.path(),
            Some(PathBuf::from("logs/r2-b-vs-a.jsonl.zst"))
        );
        let stored = LogPlace::Stored(12);
        assert_eq!(
            (stored.stem(), stored.file_name(), stored.path()),
            (None, None, None)
        );
    }
}
