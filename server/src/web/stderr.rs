//! A bot's faulted sets on its page and in the API, each fault with the excerpt of the
//! bot's stderr that explains it: the last lines its faulted process wrote.
//!
//! A bot's stderr file holds every process the bot ran in the set, one after another:
//! a fault ends the faulted process (the log's `shutdown` record of that bot follows
//! the `fault`), and a restarted process appends its part after it. The log's
//! `shutdown` records say how many bytes each process wrote (`stderr_bytes`), so the
//! part of each process is found by adding them up, without any marker in the file
//! that a bot could forge: the excerpt of a fault is the end of the part of the process
//! whose `shutdown` follows it, that is what the bot wrote up to the fault (a time-out
//! in game 1 is explained by what it wrote in game 1, not by the end of the set's
//! file). A part is the bot's own bytes until its 1 MiB for the set runs out (LOGS.md);
//! a cut part runs to the end of the file, the referee's notes included.
//!
//! The log and the stderr file are read where they are kept (their own files, plain or
//! compressed, or the archive of the set's number); a finished set never changes, so a
//! set's excerpts are found once and kept (`KEPT_SETS`, the sets read last), and a page
//! that lists archived sets reads each archive twice (its logs, its stderr files) for
//! all its sets at once.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::logs::{confined, logs_dir};
use crate::error::ApiError;
use crate::state::{AppState, SetView};

/// How many of a bot's latest faulted sets its page lists.
const FAULTED_SETS: usize = 20;
/// Lines of a bot's stderr shown for a fault, at most, from the end of its process's
/// part.
const STDERR_LINES: usize = 5;
/// Bytes read from the end of a part for them.
const STDERR_TAIL: u64 = 4096;
/// Faults of one bot in one set given an excerpt (the first ones; a set of many
/// faulted games lists the rest without).
const FAULTS_EXCERPTED: usize = 8;
/// Sets (and bots) whose excerpts are kept: at most `FAULTS_EXCERPTED` excerpts of
/// `STDERR_TAIL` bytes each a set, about 2 MiB in all.
const KEPT_SETS: usize = 64;

/// The excerpt of a bot's stderr for one fault.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Excerpt {
    /// The last lines of the faulted process's part of the file (bot-supplied text,
    /// invalid UTF-8 replaced).
    pub lines: Vec<String>,
    /// The first and last game that process played in (a process lives from the set's
    /// start, or its restart, to its end).
    pub games: [u32; 2],
}

/// A set's excerpts for one bot: by the fault's game and ply.
type SetExcerpts = HashMap<(u32, u32), Excerpt>;

/// A set's stem and the seat of the bot (0: A, 1: B).
type SetSeat = (String, u8);

/// The excerpts found last, by set and seat, newest last.
static KEPT: Mutex<Vec<(SetSeat, Arc<SetExcerpts>)>> = Mutex::new(Vec::new());

fn kept(key: &SetSeat) -> Option<Arc<SetExcerpts>> {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let i = kept.iter().position(|(k, _)| k == key)?;
    let entry = kept.remove(i);
    let found = entry.1.clone();
    kept.push(entry);
    Some(found)
}

fn keep(key: SetSeat, excerpts: Arc<SetExcerpts>) {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.retain(|(k, _)| *k != key);
    if kept.len() >= KEPT_SETS {
        kept.remove(0);
    }
    kept.push((key, excerpts));
}

/// The bot's latest faulted sets: each set's name and number, and the bot's faults in
/// it, each with `stderr` (the last lines of the process that faulted, `null` when
/// there is no file: a quiet bot's, a pruned set's, a set a worker played, a team
/// member's) and `stderr_games` (the games that process played in).
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
        let views: Vec<(SetView, u8)> = sets
            .iter()
            .map(|(number, set)| {
                (
                    SetView::from_finished(*number, set),
                    u8::from(set.key.a != bot),
                )
            })
            .collect();
        let found = excerpts(&logs, &views);
        views
            .iter()
            .zip(found)
            .map(|((view, seat), excerpts)| {
                let faults: Vec<Value> = view
                    .faults
                    .iter()
                    .filter(|f| f.bot == view.bots[usize::from(*seat)])
                    .map(|f| {
                        let excerpt = excerpts.as_ref().and_then(|e| e.get(&(f.game, f.ply)));
                        let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
                        if let Value::Object(fields) = &mut v {
                            fields.insert("stderr".into(), json!(excerpt.map(|e| &e.lines)));
                            fields.insert("stderr_games".into(), json!(excerpt.map(|e| e.games)));
                        }
                        v
                    })
                    .collect();
                json!({ "set": view.set, "number": view.number, "faults": faults })
            })
            .collect::<Vec<Value>>()
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(out)
}

/// Each set's excerpts for its bot at `seat` (0: A, 1: B), `None` where its log or its
/// stderr file is not here: kept ones as they are, the others read from the sets'
/// files, or from each archive once for all its sets.
fn excerpts(logs: &FsPath, sets: &[(SetView, u8)]) -> Vec<Option<Arc<SetExcerpts>>> {
    let mut out: Vec<Option<Arc<SetExcerpts>>> = Vec::with_capacity(sets.len());
    // The archived sets still to read, by archive: (index in `sets`, stem, seat).
    let mut archived: HashMap<PathBuf, Vec<(usize, String, u8)>> = HashMap::new();
    for (i, (view, seat)) in sets.iter().enumerate() {
        let key = (view.set.clone(), *seat);
        if let Some(found) = kept(&key) {
            out.push(Some(found));
            continue;
        }
        out.push(None);
        if view.pruned || matches!(view.log, league::LogPlace::Stored(_)) {
            continue;
        }
        let archive = league::archive_path(logs, view.number);
        if archive.is_file() {
            archived
                .entry(archive)
                .or_default()
                .push((i, view.set.clone(), *seat));
            continue;
        }
        let log = view.log.file_name().unwrap_or_default();
        let log = referee::finished_log_candidates(FsPath::new(&log))
            .iter()
            .find_map(|c| confined(logs, &c.to_string_lossy()))
            .and_then(|path| read_whole(&path));
        let stderr = stderr_file(logs, &stderr_name(&view.set, *seat));
        if let (Some(log), Some(stderr)) = (log, stderr) {
            let found = Arc::new(set_excerpts(&log, *seat, &stderr));
            keep(key, found.clone());
            out[i] = Some(found);
        }
    }
    for (archive, wanted) in archived {
        for (i, found) in from_archive(&archive, &wanted) {
            keep((sets[i].0.set.clone(), sets[i].1), found.clone());
            out[i] = Some(found);
        }
    }
    out
}

/// The stderr file of the bot at `seat` in the set `stem`.
fn stderr_name(stem: &str, seat: u8) -> String {
    format!("{stem}.{}.stderr", if seat == 0 { 'a' } else { 'b' })
}

/// A file's text, unpacked if it is compressed; at most what an archive would take.
fn read_whole(path: &FsPath) -> Option<Vec<u8>> {
    let mut text = Vec::new();
    referee::open_log(path)
        .ok()?
        .take(referee::archive::MAX_ARCHIVED_LOG)
        .read_to_end(&mut text)
        .ok()?;
    Some(text)
}

/// The text of the stderr file `name`: plain while the set plays, compressed once it is
/// finished.
fn stderr_file(logs: &FsPath, name: &str) -> Option<Vec<u8>> {
    ["", referee::COMPRESSED_SUFFIX, referee::GZIP_SUFFIX]
        .iter()
        .find_map(|suffix| confined(logs, &format!("{name}{suffix}")))
        .and_then(|path| read_whole(&path))
}

/// The excerpts of the sets `wanted` (index, stem, seat) from the archive at
/// `archive`: one pass over its logs for the processes' parts, one over its stderr
/// files for their text.
fn from_archive(
    archive: &FsPath,
    wanted: &[(usize, String, u8)],
) -> Vec<(usize, Arc<SetExcerpts>)> {
    let mut parts: HashMap<&str, LogParts> = HashMap::new();
    let _ = referee::archive::each_log(archive, |stem, text| {
        if let Some((_, s, seat)) = wanted.iter().find(|(_, s, _)| s == stem) {
            parts.insert(s.as_str(), LogParts::read(&text, *seat));
        }
        Ok(true)
    });
    let mut out = Vec::new();
    let _ = referee::archive::each_stderr(archive, |member, text| {
        let found = wanted
            .iter()
            .find(|(_, stem, seat)| member == stderr_name(stem, *seat));
        if let Some((i, stem, _)) = found {
            if let Some(p) = parts.get(stem.as_str()) {
                out.push((*i, Arc::new(p.excerpts(&text))));
            }
        }
        Ok(true)
    });
    out
}

/// One set's excerpts for the bot at `seat`, from its log's text and its stderr file's.
fn set_excerpts(log: &[u8], seat: u8, stderr: &[u8]) -> SetExcerpts {
    LogParts::read(log, seat).excerpts(stderr)
}

/// The fields of a log record the parts are found from (the others are skipped).
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    bot: Option<u8>,
    /// A team member: not a bot's own stderr file.
    mate: Option<u32>,
    game: Option<u32>,
    ply: Option<u32>,
    stderr_bytes: Option<u64>,
    stderr_cut: Option<bool>,
}

/// One process of a bot, as the log tells it.
#[derive(Clone, Debug, PartialEq)]
struct Part {
    /// Bytes the process wrote.
    bytes: u64,
    /// Its part was cut (the bot's bytes for the set ran out).
    cut: bool,
    /// The first and last game it played in.
    games: [u32; 2],
}

/// A bot's processes in a set and the process of each of its faults.
#[derive(Debug, Default, PartialEq)]
struct LogParts {
    parts: Vec<Part>,
    /// Each fault (game, ply) with the index of its process in `parts`.
    faults: Vec<((u32, u32), usize)>,
}

impl LogParts {
    /// The processes of the bot at `seat` and its faults, from a log's text.
    fn read(log: &[u8], seat: u8) -> LogParts {
        let mut out = LogParts::default();
        let mut game = 0;
        // The first game of the process running now.
        let mut first: Option<u32> = None;
        for line in log.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(r) = serde_json::from_slice::<Line>(line) else {
                continue;
            };
            if r.mate.is_some() {
                continue;
            }
            match r.kind.as_str() {
                "game-start" | "restart" => {
                    game = r.game.unwrap_or(game);
                    if r.kind == "restart" && r.bot != Some(seat) {
                        continue;
                    }
                    first.get_or_insert(game);
                }
                "fault" if r.bot == Some(seat) => {
                    let at = (r.game.unwrap_or(game), r.ply.unwrap_or(0));
                    out.faults.push((at, out.parts.len()));
                }
                "shutdown" if r.bot == Some(seat) => {
                    out.parts.push(Part {
                        bytes: r.stderr_bytes.unwrap_or(0),
                        cut: r.stderr_cut.unwrap_or(false),
                        games: [first.take().unwrap_or(game).max(1), game.max(1)],
                    });
                }
                _ => {}
            }
        }
        out
    }

    /// Each fault's excerpt of `stderr`, the bot's stderr file: the end of its
    /// process's part (the parts before it added up by their bytes). Once a part was
    /// cut, the parts after it hold only the referee's notes: the cut part and those
    /// after it run to the end of the file.
    fn excerpts(&self, stderr: &[u8]) -> SetExcerpts {
        let mut out = SetExcerpts::new();
        let len = stderr.len() as u64;
        for &(at, k) in self.faults.iter().take(FAULTS_EXCERPTED) {
            let before = &self.parts[..k.min(self.parts.len())];
            let cut_before = before.iter().any(|p| p.cut);
            let start = if cut_before {
                len
            } else {
                before.iter().map(|p| p.bytes).sum::<u64>().min(len)
            };
            let end = match self.parts.get(k) {
                Some(p) if !p.cut && !cut_before => (start + p.bytes).min(len),
                _ => len,
            };
            let from = start.max(end.saturating_sub(STDERR_TAIL));
            let text = &stderr[from as usize..end as usize];
            let games = self.parts.get(k).map(|p| p.games).unwrap_or([at.0, at.0]);
            out.insert(
                at,
                Excerpt {
                    lines: last_lines(text, from > start),
                    games,
                },
            );
        }
        out
    }
}

/// The last `STDERR_LINES` lines of `bytes`, the end of a part of a stderr file (`cut`:
/// not its start, so its first line is not shown whole); invalid UTF-8 replaced:
/// bot-supplied text, for pages to show as text.
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

    /// A set of four games in which bot A timed out in game 1 and crashed in game 3,
    /// restarted after each: three processes, their parts one after another in its
    /// stderr file.
    fn set_with_two_faults() -> (String, String) {
        let parts = [
            "g1 hello\ng1 thinking\ng1 still thinking\n",
            "g2 hello\ng2 move\ng3 move\ng3 a\ng3 b\ng3 c\nTraceback: ZeroDivisionError\n",
            "g4 hello\ng4 the end\n",
        ];
        let lines = [
            r#"{"type":"header","log_version":1}"#.to_string(),
            r#"{"type":"ready","bot":0,"name":"x","ms":1.0}"#.to_string(),
            r#"{"type":"game-start","game":1,"first":0}"#.to_string(),
            r#"{"type":"fault","game":1,"ply":0,"bot":0,"kind":"time-out"}"#.to_string(),
            format!(
                r#"{{"type":"shutdown","bot":0,"stderr_bytes":{},"stderr_cut":false}}"#,
                parts[0].len()
            ),
            r#"{"type":"game-end","game":1}"#.to_string(),
            r#"{"type":"restart","bot":0,"game":2}"#.to_string(),
            r#"{"type":"game-start","game":2,"first":1}"#.to_string(),
            r#"{"type":"move","game":2,"ply":0,"bot":1,"player":0,"pit":3,"ms":1.0}"#.to_string(),
            r#"{"type":"game-start","game":3,"first":0}"#.to_string(),
            r#"{"type":"fault","game":3,"ply":4,"bot":0,"kind":"crash"}"#.to_string(),
            format!(
                r#"{{"type":"shutdown","bot":0,"stderr_bytes":{},"stderr_cut":false}}"#,
                parts[1].len()
            ),
            r#"{"type":"restart","bot":0,"game":4}"#.to_string(),
            r#"{"type":"game-start","game":4,"first":1}"#.to_string(),
            r#"{"type":"shutdown","bot":1,"stderr_bytes":99,"stderr_cut":false}"#.to_string(),
            format!(
                r#"{{"type":"shutdown","bot":0,"stderr_bytes":{},"stderr_cut":false}}"#,
                parts[2].len()
            ),
        ];
        (lines.join("\n") + "\n", parts.concat())
    }

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|l| l.to_string()).collect()
    }

    /// A time-out in game 1 is explained by what the bot wrote in game 1, a crash in
    /// game 3 by the end of the process that played games 2 and 3: not by the end of
    /// the set's file (game 4's).
    #[test]
    fn a_faults_excerpt_is_the_end_of_the_process_that_faulted_not_of_the_file() {
        let (log, stderr) = set_with_two_faults();
        let found = set_excerpts(log.as_bytes(), 0, stderr.as_bytes());
        assert_eq!(found.len(), 2);
        assert_eq!(
            found.get(&(1, 0)),
            Some(&Excerpt {
                lines: lines(&["g1 hello", "g1 thinking", "g1 still thinking"]),
                games: [1, 1],
            })
        );
        assert_eq!(
            found.get(&(3, 4)),
            Some(&Excerpt {
                lines: lines(&[
                    "g3 move",
                    "g3 a",
                    "g3 b",
                    "g3 c",
                    "Traceback: ZeroDivisionError"
                ]),
                games: [2, 3],
            })
        );
        // Bot B never faulted: no excerpt.
        assert!(set_excerpts(log.as_bytes(), 1, stderr.as_bytes()).is_empty());
        // Once a part was cut, the parts after it are the referee's notes: the cut part
        // and those after run to the end of the file.
        let cut = LogParts {
            parts: vec![
                Part {
                    bytes: 3,
                    cut: false,
                    games: [1, 1],
                },
                Part {
                    bytes: 50,
                    cut: true,
                    games: [2, 2],
                },
                Part {
                    bytes: 7,
                    cut: false,
                    games: [3, 3],
                },
            ],
            faults: vec![((2, 1), 1), ((3, 0), 2)],
        };
        let text = b"g1\ng2 a\ng2 b\n[hus: stderr cut here]\n[hus: 50 bytes of stderr in all]\n";
        let found = cut.excerpts(text);
        assert_eq!(
            found.get(&(2, 1)).map(|e| e.lines.clone()),
            Some(lines(&[
                "g2 a",
                "g2 b",
                "[hus: stderr cut here]",
                "[hus: 50 bytes of stderr in all]"
            ]))
        );
        assert_eq!(found.get(&(3, 0)).map(|e| e.lines.len()), Some(0));
    }

    /// The log and the stderr file are read as they are kept: compressed files, then
    /// the archive of the set's number; found once, then kept.
    #[test]
    fn excerpts_come_from_compressed_files_or_the_archive() {
        let dir = tempfile::tempdir().expect("tmp");
        let logs = dir.path();
        let (log, stderr) = set_with_two_faults();
        let want = set_excerpts(log.as_bytes(), 0, stderr.as_bytes());
        let mut view = crate::html::test_data::set_view(1);
        view.set = "r1-excerpt-vs-files".into();
        view.log = league::LogPlace::file(&view.set, league::LogForm::Zstd);
        let log_path = logs.join(format!("{}.jsonl", view.set));
        let err_path = logs.join(format!("{}.a.stderr", view.set));
        std::fs::write(&log_path, &log).expect("write");
        std::fs::write(&err_path, &stderr).expect("write");
        let log_zst = referee::compress_log(&log_path).expect("compress");
        let err_zst = referee::compress_log(&err_path).expect("compress");
        // The plain files are gone: the compressed ones are read.
        assert!(!log_path.exists() && !err_path.exists());
        let found = excerpts(logs, &[(view.clone(), 0)]);
        assert_eq!(found[0].as_deref(), Some(&want));

        // Archived: the set of number 2 in the archive of sets 1 to 64.
        let mut archived = view.clone();
        archived.set = "r2-excerpt-vs-archive".into();
        archived.number = 2;
        let archives = logs.join(league::ARCHIVE_DIR);
        std::fs::create_dir(&archives).expect("mkdir");
        referee::archive::write_archive(
            &referee::Dir::open(&archives).expect("dir"),
            "sets-000000001-000000064.tar.zst",
            &[(archived.set.clone(), log_zst.as_path())],
            &[(format!("{}.a.stderr", archived.set), err_zst.as_path())],
        )
        .expect("archive");
        let found = excerpts(logs, &[(archived.clone(), 0), (view.clone(), 1)]);
        assert_eq!(found[0].as_deref(), Some(&want));
        // Bot B's stderr file is not there: none.
        assert_eq!(found[1], None);
        // Kept: found again with the archive gone.
        std::fs::remove_file(league::archive_path(logs, 2)).expect("remove");
        assert_eq!(excerpts(logs, &[(archived, 0)])[0].as_deref(), Some(&want));
        // A pruned set's, or a worker's (its log in the store): none.
        let mut pruned = view.clone();
        pruned.set = "r3-excerpt-vs-pruned".into();
        pruned.pruned = true;
        let mut stored = view;
        stored.set = "r4-excerpt-vs-store".into();
        stored.log = league::LogPlace::Stored(4);
        assert_eq!(
            excerpts(logs, &[(pruned, 0), (stored, 0)]),
            vec![None, None]
        );
    }
}
