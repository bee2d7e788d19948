//! Archives of finished logs: many sets' logs in one file, `sets-FROM-TO.tar.zst`, a tar
//! compressed with zstd, so that a server that plays sets without end keeps its logs in
//! a couple of kilobytes a set (one small file per set costs a whole disk block, 4 KiB,
//! however well it compresses).
//!
//! Each log goes in as its **short form** ([`shorten`]), member `STEM.short.jsonl`: the
//! log's own lines, except that a move's `sown`, `events`, `truncated` and `position`
//! (what the engine computes from the position before the move and the pit) are left
//! out. Those are most of a log's bytes and what a general compressor does worst with:
//! 27 KB of a 2-game set becomes about 9 KB of short text and about 0.6 KB compressed.
//! [`lengthen`] puts them back from the game's start position, byte for byte: a log is
//! only shortened when lengthening gives back exactly its bytes (checked as it is
//! archived), and any other log (one the engine disagrees with, a line the records do
//! not write back the same) goes in as it is, member `STEM.jsonl`.
//!
//! The sets' stderr files go in beside their logs, as they are (member `STEM.a.stderr`,
//! its text uncompressed: zstd compresses the whole), so that a set's files leave the
//! logs directory together.
//!
//! tar and zstd are the `tar` and `zstd` crates: any `tar --zstd` lists and unpacks an
//! archive, and `hus replay` and `hus unpack` read it whole.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use engine::{AnyPosition, Board};
use serde::{Deserialize, Serialize};

use crate::files::{Create, Dir};
use crate::records::{MoveRecord, Record};
use crate::Side;

/// The end of an archive's name.
pub const ARCHIVE_SUFFIX: &str = ".tar.zst";

/// The member of a log kept in its short form.
const SHORT_MEMBER: &str = ".short.jsonl";
/// The member of a log kept as it is.
const PLAIN_MEMBER: &str = ".jsonl";
/// The end of a stderr file's member (`STEM.a.stderr`, `STEM.b2.stderr`).
const STDERR_MEMBER: &str = ".stderr";

/// The largest log (its text) that goes into an archive; a larger one stays a file of
/// its own. It bounds what reading one set's log from an archive holds in memory.
pub const MAX_ARCHIVED_LOG: u64 = 16 << 20;

/// zstd's level: short logs compress to about 0.6 KB a set already at level 3; 9 takes
/// a quarter off that for well under a millisecond a set.
const LEVEL: i32 = 9;

/// zstd's window: 1 MiB (2^20 bytes).
const WINDOW_LOG: u32 = 20;

/// Whether the file at `path` is an archive (by its first bytes, not its name): zstd
/// whose text is a tar (`ustar` at byte 257 of its first header). A finished log is
/// zstd too (`STEM.jsonl.zst`), but its text starts with `{`.
pub fn is_archive_file(path: &Path) -> io::Result<bool> {
    let mut head = Vec::with_capacity(4);
    let mut file = File::open(path)?;
    (&mut file).take(4).read_to_end(&mut head)?;
    if !crate::logfile::is_zstd(&head) {
        return Ok(false);
    }
    let input = io::Cursor::new(head).chain(file);
    let mut text = Vec::with_capacity(512);
    // Damaged past its first block, it is still told by that block.
    let _ = zstd::Decoder::new(input)?.take(512).read_to_end(&mut text);
    Ok(text.get(257..262) == Some(b"ustar".as_slice()))
}

/// A move line's short form: the record without what the engine computes again.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShortMove {
    #[serde(rename = "type")]
    kind: MoveTag,
    game: u32,
    ply: u32,
    bot: Side,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mate: Option<usize>,
    player: engine::Player,
    pit: u32,
    ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rtt_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lag_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stall_ms: Option<f64>,
}

#[derive(Serialize, Deserialize)]
enum MoveTag {
    #[serde(rename = "move")]
    Move,
}

impl ShortMove {
    fn of(m: &MoveRecord) -> ShortMove {
        ShortMove {
            kind: MoveTag::Move,
            game: m.game,
            ply: m.ply,
            bot: m.bot,
            mate: m.mate,
            player: m.player,
            pit: m.pit,
            ms: m.ms,
            rtt_ms: m.rtt_ms,
            lag_ms: m.lag_ms,
            stall_ms: m.stall_ms,
        }
    }

    /// The whole record, played from `before`; and the position after it.
    fn lengthen(&self, before: &AnyPosition) -> Option<(MoveRecord, AnyPosition)> {
        let mut after = *before;
        let report = Board::play(&mut after, usize::try_from(self.pit).ok()?).ok()?;
        let record = MoveRecord {
            game: self.game,
            ply: self.ply,
            bot: self.bot,
            mate: self.mate,
            player: self.player,
            pit: self.pit,
            ms: self.ms,
            rtt_ms: self.rtt_ms,
            lag_ms: self.lag_ms,
            stall_ms: self.stall_ms,
            sown: report.summary.sown,
            events: report.events,
            truncated: report.summary.truncated,
            position: after.to_string(),
        };
        Some((record, after))
    }
}

/// The lines of `text` with their ends (`\n`, or nothing for a last line cut short).
fn lines(text: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    text.split_inclusive(|&b| b == b'\n')
        .map(|line| match line {
            [body @ .., b'\n'] => (body, &b"\n"[..]),
            body => (body, &b""[..]),
        })
}

const GAME_START: &[u8] = br#"{"type":"game-start""#;
const MOVE: &[u8] = br#"{"type":"move""#;

/// The position a full line leaves the game in, when it is a game's start or a move
/// (the same rule for both directions, so that they follow the same positions).
fn position_of(line: &[u8]) -> Option<Option<AnyPosition>> {
    if !line.starts_with(GAME_START) && !line.starts_with(MOVE) {
        return None;
    }
    Some(match serde_json::from_slice::<Record>(line) {
        Ok(Record::GameStart(g)) => g.position.parse().ok(),
        Ok(Record::Move(m)) => m.position.parse().ok(),
        _ => None,
    })
}

/// The short form of the log `text`, or `None` when [`lengthen`] would not give back
/// exactly `text` (the log is then archived as it is).
pub fn shorten(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut position: Option<AnyPosition> = None;
    for (line, end) in lines(text) {
        let short = if line.starts_with(MOVE) && !end.is_empty() {
            short_move(line, position.as_ref())
        } else {
            None
        };
        match short {
            Some((short, after)) => {
                out.extend_from_slice(&short);
                position = Some(after);
            }
            None => {
                out.extend_from_slice(line);
                if let Some(p) = position_of(line) {
                    position = p;
                }
            }
        }
        out.extend_from_slice(end);
    }
    (lengthen(&out).ok()? == text).then_some(out)
}

/// A whole move line's short form, when the engine gives back the line exactly.
fn short_move(line: &[u8], before: Option<&AnyPosition>) -> Option<(Vec<u8>, AnyPosition)> {
    let Ok(Record::Move(m)) = serde_json::from_slice::<Record>(line) else {
        return None;
    };
    let short = ShortMove::of(&m);
    let (again, after) = short.lengthen(before?)?;
    let written = serde_json::to_vec(&Record::Move(again)).ok()?;
    (written == line).then_some(())?;
    Some((serde_json::to_vec(&short).ok()?, after))
}

/// The log whose short form is `short`. A short move where no position is known, or
/// whose pit the position does not allow, is an error naming its line: the archive
/// was damaged.
pub fn lengthen(short: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(short.len() * 3);
    let mut position: Option<AnyPosition> = None;
    for (n, (line, end)) in lines(short).enumerate() {
        let is_short = line.starts_with(MOVE)
            && !end.is_empty()
            && !line.windows(11).any(|w| w == br#""position":"#);
        if is_short {
            let m: ShortMove = serde_json::from_slice(line)
                .map_err(|e| format!("line {}: not a short move: {e}", n + 1))?;
            let before = position
                .as_ref()
                .ok_or_else(|| format!("line {}: a move before any position", n + 1))?;
            let (record, after) = m
                .lengthen(before)
                .ok_or_else(|| format!("line {}: pit {} cannot be played", n + 1, m.pit))?;
            serde_json::to_writer(&mut out, &Record::Move(record))
                .map_err(|e| format!("line {}: {e}", n + 1))?;
            position = Some(after);
        } else {
            out.extend_from_slice(line);
            if let Some(p) = position_of(line) {
                position = p;
            }
        }
        out.extend_from_slice(end);
    }
    Ok(out)
}

/// What [`write_archive`] put in an archive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Archived {
    /// The sets (stems) whose logs it holds, in order.
    pub stems: Vec<String>,
    /// Those kept in their short form (the others as they are).
    pub short: usize,
    /// The logs' text, in bytes.
    pub log_bytes: u64,
    /// The archive file's size.
    pub archive_bytes: u64,
    /// The sets whose logs are larger than [`MAX_ARCHIVED_LOG`]: not in the archive,
    /// they stay files of their own.
    pub left_out: Vec<String>,
    /// The stderr files it holds (their members' names, `STEM.a.stderr`); one larger
    /// than [`MAX_ARCHIVED_LOG`] stays a file of its own.
    pub stderr: Vec<String>,
}

/// Writes the logs `logs` (each a set's stem and its log file, plain or gzip) and the
/// stderr files `stderr` (each its member's name, `STEM.a.stderr`, and its file, plain
/// or gzip) into a new archive `name` in the directory `dir`: under a temporary name
/// beside it, synced, then renamed, so that the archive is always whole or absent; no
/// link is followed there ([`crate::files`]). A log larger than [`MAX_ARCHIVED_LOG`] is
/// left out (listed in [`Archived::left_out`]), and so is such a stderr file.
pub fn write_archive(
    dir: &Dir,
    name: &str,
    logs: &[(String, &Path)],
    stderr: &[(String, &Path)],
) -> io::Result<Archived> {
    let (dest, tmp) = (Path::new(name), format!("{name}.tmp"));
    let mut archived = crate::logfile::write_by_rename(dir, dest, Path::new(&tmp), |file| {
        write_members(file, logs, stderr)
    })?;
    // The rename itself on disk.
    dir.sync()?;
    archived.archive_bytes = dir.entry(dest)?.len;
    Ok(archived)
}

fn write_members(
    file: File,
    logs: &[(String, &Path)],
    stderr: &[(String, &Path)],
) -> io::Result<Archived> {
    let mut zstd = zstd::Encoder::new(BufWriter::new(file), LEVEL)?;
    // An archive's text is about a megabyte: a window and tables of that size compress
    // it as well as the level's own (4 MiB window, 16 MiB tables), in a twentieth of
    // the memory.
    zstd.window_log(WINDOW_LOG)?;
    zstd.set_parameter(zstd::zstd_safe::CParameter::HashLog(WINDOW_LOG - 2))?;
    zstd.set_parameter(zstd::zstd_safe::CParameter::ChainLog(WINDOW_LOG - 2))?;
    let mut tar = tar::Builder::new(zstd);
    let mut archived = Archived::default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    for (stem, path) in logs {
        check_stem(stem)?;
        let mut text = Vec::new();
        crate::logfile::open_log(path)?
            .take(MAX_ARCHIVED_LOG + 1)
            .read_to_end(&mut text)?;
        if text.len() as u64 > MAX_ARCHIVED_LOG {
            archived.left_out.push(stem.clone());
            continue;
        }
        let mtime = mtime_of(path, now);
        let (name, body) = match shorten(&text) {
            Some(short) => {
                archived.short += 1;
                (format!("{stem}{SHORT_MEMBER}"), short)
            }
            None => (format!("{stem}{PLAIN_MEMBER}"), text.clone()),
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(mtime);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, &name, body.as_slice())?;
        archived.stems.push(stem.clone());
        archived.log_bytes += text.len() as u64;
    }
    for (name, path) in stderr {
        if member_stderr(name).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name:?} is not the name of a set's stderr file"),
            ));
        }
        // Told compressed by its name, never by its first bytes: those are the bot's.
        let file = File::open(path)?;
        let reader: Box<dyn Read> = match path.extension().and_then(|e| e.to_str()) {
            Some("gz") => Box::new(flate2::read::MultiGzDecoder::new(io::BufReader::new(file))),
            Some("zst") => Box::new(zstd::Decoder::new(file)?),
            _ => Box::new(file),
        };
        let mut text = Vec::new();
        reader.take(MAX_ARCHIVED_LOG + 1).read_to_end(&mut text)?;
        if text.len() as u64 > MAX_ARCHIVED_LOG {
            continue;
        }
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(mtime_of(path, now));
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, name, text.as_slice())?;
        archived.stderr.push(name.clone());
    }
    let zstd = tar.into_inner()?;
    let out = zstd.finish()?;
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(archived)
}

/// The file's modification time in seconds since the epoch, or `now`.
fn mtime_of(path: &Path, now: u64) -> u64 {
    fs::metadata(path)
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(now, |d| d.as_secs())
}

/// The set (stem) whose stderr file the member `name` is (`STEM.a.stderr`,
/// `STEM.b2.stderr`); `None` for any other member.
fn member_stderr(name: &str) -> Option<&str> {
    let (stem, seat) = name.strip_suffix(STDERR_MEMBER)?.rsplit_once('.')?;
    let mut chars = seat.chars();
    let side_ok = matches!(chars.next(), Some('a' | 'b'));
    let member_ok = chars.all(|c| c.is_ascii_digit());
    (side_ok && member_ok && check_stem(stem).is_ok()).then_some(stem)
}

/// A stem fit to be a file name of its own in a logs directory.
fn check_stem(stem: &str) -> io::Result<()> {
    if stem.is_empty() || stem.starts_with('.') || stem.contains(['/', '\\', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{stem:?} is not the name of a set's log"),
        ));
    }
    Ok(())
}

fn invalid(archive: &Path, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {what}", archive.display()),
    )
}

/// The set (stem) whose log the member `name` is, and whether in its short form; `None`
/// for a member that is not a log.
fn member_log(name: &str) -> Option<(&str, bool)> {
    name.strip_suffix(SHORT_MEMBER)
        .map(|stem| (stem, true))
        .or_else(|| name.strip_suffix(PLAIN_MEMBER).map(|stem| (stem, false)))
}

/// Calls `each` with every member of the archive at `archive` that `keep` takes (by
/// name; an error stops the reading), in order: its name and its bytes. A damaged
/// archive is an error when the reading reaches the damage (after the members before it
/// were handed over), never a panic; so is a member larger than a log can be.
fn each_member(
    archive: &Path,
    keep: impl Fn(&str) -> io::Result<bool>,
    mut each: impl FnMut(&str, Vec<u8>) -> io::Result<bool>,
) -> io::Result<()> {
    let decoder = zstd::Decoder::new(File::open(archive)?)?;
    let mut tar = tar::Archive::new(decoder);
    for entry in tar.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.to_string_lossy().into_owned();
        if !keep(&name)? {
            continue;
        }
        if entry.size() > MAX_ARCHIVED_LOG {
            return Err(invalid(
                archive,
                format!("{name} is over {MAX_ARCHIVED_LOG} bytes"),
            ));
        }
        let mut body = Vec::new();
        entry.read_to_end(&mut body)?;
        if !each(&name, body)? {
            break;
        }
    }
    Ok(())
}

/// The names of the members of the archive at `archive` that `keep` takes, in order,
/// without reading the members themselves.
fn member_names(archive: &Path, keep: impl Fn(&str) -> bool) -> io::Result<Vec<String>> {
    let decoder = zstd::Decoder::new(File::open(archive)?)?;
    let mut tar = tar::Archive::new(decoder);
    let mut names = Vec::new();
    for entry in tar.entries()? {
        let name = entry?.path()?.to_string_lossy().into_owned();
        if keep(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Calls `each` with every log in the archive at `archive`, in order: its stem and its
/// text (lengthened if it was short). Members that are not logs are passed over. A
/// damaged archive is an error when the reading reaches the damage (after the logs
/// before it were handed over), never a panic; so is a member larger than a log can be.
pub fn each_log(
    archive: &Path,
    mut each: impl FnMut(&str, Vec<u8>) -> io::Result<bool>,
) -> io::Result<()> {
    let keep = |name: &str| match member_log(name) {
        None => Ok(false),
        Some((stem, _)) if check_stem(stem).is_err() => {
            Err(invalid(archive, format!("a member named {name:?}")))
        }
        Some(_) => Ok(true),
    };
    each_member(archive, keep, |name, body| {
        let Some((stem, short)) = member_log(name) else {
            return Ok(true);
        };
        let text = if short {
            lengthen(&body).map_err(|e| invalid(archive, format!("{name}: {e}")))?
        } else {
            body
        };
        each(stem, text)
    })
}

/// The sets (stems) whose logs the archive at `archive` holds, in order, without
/// reading the logs themselves.
pub fn stems(archive: &Path) -> io::Result<Vec<String>> {
    Ok(member_names(archive, |name| member_log(name).is_some())?
        .iter()
        .filter_map(|name| member_log(name).map(|(stem, _)| stem.to_string()))
        .collect())
}

/// The text of set `stem`'s log in the archive at `archive`, or `None` if it holds no
/// log of that set.
pub fn read_log(archive: &Path, stem: &str) -> io::Result<Option<Vec<u8>>> {
    let mut found = None;
    each_log(archive, |s, text| {
        if s == stem {
            found = Some(text);
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(found)
}

/// Calls `each` with every stderr file in the archive at `archive`, in order: its
/// member's name (`STEM.a.stderr`) and its text. Other members are passed over.
pub fn each_stderr(
    archive: &Path,
    each: impl FnMut(&str, Vec<u8>) -> io::Result<bool>,
) -> io::Result<()> {
    each_member(archive, |name| Ok(member_stderr(name).is_some()), each)
}

/// The text of the stderr file `name` (`STEM.a.stderr`) in the archive at `archive`,
/// or `None` if it holds no such file.
pub fn read_stderr(archive: &Path, name: &str) -> io::Result<Option<Vec<u8>>> {
    let mut found = None;
    each_stderr(archive, |n, text| {
        if n == name {
            found = Some(text);
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(found)
}

/// The names of the stderr files (`STEM.a.stderr`) the archive at `archive` holds.
pub fn stderr_names(archive: &Path) -> io::Result<Vec<String>> {
    member_names(archive, |name| member_stderr(name).is_some())
}

/// Writes every log of the archive at `archive` into `dir` as `STEM.jsonl`, exactly as
/// it was before it was archived, and every stderr file as `STEM.a.stderr`; a file
/// already there is not overwritten (an error). Returns the stems of the logs written.
pub fn unpack(archive: &Path, dir: &Path) -> io::Result<Vec<String>> {
    let mut written = Vec::new();
    let open = Dir::open(dir)?;
    each_log(archive, |stem, text| {
        write_new(&open, &format!("{stem}{PLAIN_MEMBER}"), &text)?;
        written.push(stem.to_string());
        Ok(true)
    })?;
    each_stderr(archive, |name, text| {
        write_new(&open, name, &text)?;
        Ok(true)
    })?;
    Ok(written)
}

/// Writes the log `text` of set `stem` into `dir` as `STEM.jsonl`; a file already
/// there is not overwritten (an error naming it).
pub fn write_log(dir: &Path, stem: &str, text: &[u8]) -> io::Result<()> {
    write_new(&Dir::open(dir)?, &format!("{stem}{PLAIN_MEMBER}"), text)
}

/// Writes `text` into a new file `name` in `dir`; a file already there is not
/// overwritten, and no link is followed (an error naming it).
fn write_new(dir: &Dir, name: &str, text: &[u8]) -> io::Result<()> {
    let path = dir.join(name);
    let mut file = dir
        .create_file(Path::new(name), Create::New, None)
        .map_err(|e| match e.kind() {
            // The only errors `Dir` leaves without the path (a link's names it).
            io::ErrorKind::AlreadyExists | io::ErrorKind::NotFound => {
                io::Error::new(e.kind(), format!("{}: {e}", path.display()))
            }
            _ => e,
        })?;
    file.write_all(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0";

    /// A log of one game's first moves, written by the records as the referee writes them.
    fn log(moves: &[u32]) -> Vec<u8> {
        let mut text = br#"{"type":"header","log_version":1}"#.to_vec();
        text.push(b'\n');
        text.extend_from_slice(
            format!(r#"{{"type":"game-start","game":1,"first":0,"position":"{START}"}}"#)
                .as_bytes(),
        );
        text.push(b'\n');
        let mut position: AnyPosition = START.parse().unwrap();
        for (ply, &pit) in moves.iter().enumerate() {
            let short = ShortMove {
                kind: MoveTag::Move,
                game: 1,
                ply: ply as u32,
                bot: if ply % 2 == 0 { Side::A } else { Side::B },
                mate: None,
                player: position.to_move(),
                pit,
                ms: 0.125 + ply as f64,
                rtt_ms: None,
                lag_ms: None,
                stall_ms: None,
            };
            let (record, after) = short.lengthen(&position).unwrap();
            text.extend_from_slice(&serde_json::to_vec(&Record::Move(record)).unwrap());
            text.push(b'\n');
            position = after;
        }
        text.extend_from_slice(b"{\"type\":\"set-end\"}\n");
        text
    }

    #[test]
    fn a_log_comes_back_byte_for_byte_from_its_short_form() {
        let text = log(&[11, 12, 6, 4, 7]);
        let short = shorten(&text).expect("shortened");
        assert!(
            short.len() < text.len() / 2,
            "{} of {}",
            short.len(),
            text.len()
        );
        let short_text = String::from_utf8(short.clone()).unwrap();
        assert_eq!(short_text.matches(r#""type":"move""#).count(), 5);
        assert!(!short_text.contains("sown"), "{short_text}");
        assert_eq!(lengthen(&short).unwrap(), text);
    }

    #[test]
    fn a_move_the_engine_disagrees_with_stays_as_it_is() {
        let text = String::from_utf8(log(&[11, 12, 6])).unwrap();
        // The second move's position is not the one its pit makes.
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines[3] = lines[3].replace(r#""sown":5"#, r#""sown":6"#);
        let changed = lines.join("\n") + "\n";
        assert_ne!(changed, text);
        let short = shorten(changed.as_bytes()).expect("shortened");
        let short_text = String::from_utf8(short.clone()).unwrap();
        assert!(short_text.contains(r#""sown":6"#), "{short_text}");
        assert_eq!(short_text.matches("sown").count(), 1, "{short_text}");
        assert_eq!(lengthen(&short).unwrap(), changed.as_bytes());
    }

    #[test]
    fn what_cannot_come_back_exactly_is_not_shortened() {
        // A move line without its derived fields in the original: lengthening would add
        // them, so the log is kept as it is.
        let text = format!(
            "{{\"type\":\"game-start\",\"game\":1,\"first\":0,\"position\":\"{START}\"}}\n\
             {{\"type\":\"move\",\"game\":1,\"ply\":0,\"bot\":0,\"player\":0,\"pit\":11,\"ms\":1.0}}\n"
        );
        assert_eq!(shorten(text.as_bytes()), None);
        // A line cut short, other spacing, and bytes that are not JSON are kept.
        let mut cut = log(&[11, 12]);
        cut.extend_from_slice(br#"{"type":"move","game":1,"ply":2"#);
        let short = shorten(&cut).unwrap();
        assert_eq!(lengthen(&short).unwrap(), cut);
        let odd = b"{ \"type\": \"move\" }\n\xff\xfe\n\n".to_vec();
        assert_eq!(lengthen(&shorten(&odd).unwrap()).unwrap(), odd);
    }

    proptest::proptest! {
        /// Random games under every preset and several widths, with a team's `mate`,
        /// a remote bot's `rtt_ms` and `lag_ms`, a stall's `stall_ms`, faults between
        /// moves, several games, and a last line cut short or not: shortened, every
        /// move written by the records is left out, and lengthened, the log comes back
        /// byte for byte.
        #[test]
        fn random_games_come_back_byte_for_byte(
            seed: u64,
            games in 1u32..4,
            preset in 0usize..3,
            width in proptest::sample::select(vec![8usize, 9, 12, 32]),
            extras: bool,
            cut: bool,
        ) {
            use rand::{Rng, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let preset = [engine::Preset::Hus, engine::Preset::Rulebook, engine::Preset::MancalaWorld][preset];
            let rules = engine::Rules::new(preset, width).unwrap();
            let mut text = br#"{"type":"header","log_version":1}"#.to_vec();
            text.push(b'\n');
            let mut moves = 0;
            for game in 1..=games {
                let mut position = AnyPosition::start(rules);
                let start = crate::records::GameStart {
                    game,
                    first: Side::A,
                    position: position.to_string(),
                    order: None,
                };
                text.extend_from_slice(&serde_json::to_vec(&Record::GameStart(start)).unwrap());
                text.push(b'\n');
                for ply in 0..rng.gen_range(0..80u32) {
                    let legal: Vec<usize> = Board::legal_moves(&position).collect();
                    if legal.is_empty() {
                        break;
                    }
                    if extras && rng.gen_bool(0.05) {
                        text.extend_from_slice(
                            format!(
                                r#"{{"type":"fault","game":{game},"ply":{ply},"bot":0,"kind":"time-out","detail":"","line":null,"position":"{position}","ms":null}}"#
                            )
                            .as_bytes(),
                        );
                        text.push(b'\n');
                    }
                    let short = ShortMove {
                        kind: MoveTag::Move,
                        game,
                        ply,
                        bot: if ply % 2 == 0 { Side::A } else { Side::B },
                        mate: extras.then(|| rng.gen_range(0..3)),
                        player: position.to_move(),
                        pit: legal[rng.gen_range(0..legal.len())] as u32,
                        ms: f64::from(rng.gen_range(0..2_000_000u32)) / 1000.0,
                        rtt_ms: extras.then(|| f64::from(rng.gen_range(0..100_000u32)) / 1000.0),
                        lag_ms: extras.then(|| f64::from(rng.gen_range(0..100_000u32)) / 1000.0),
                        stall_ms: extras.then(|| f64::from(rng.gen_range(0..100_000u32)) / 1000.0),
                    };
                    let (record, after) = short.lengthen(&position).unwrap();
                    text.extend_from_slice(&serde_json::to_vec(&Record::Move(record)).unwrap());
                    text.push(b'\n');
                    position = after;
                    moves += 1;
                }
            }
            if cut {
                text.truncate(text.len() - 1 - rng.gen_range(0..20usize).min(text.len() / 2));
            }
            let short = shorten(&text).expect("shortened");
            proptest::prop_assert_eq!(&lengthen(&short).unwrap(), &text);
            let short_text = String::from_utf8(short).unwrap();
            let full = short_text
                .lines()
                .filter(|l| l.starts_with(r#"{"type":"move""#) && l.contains(r#""position":"#))
                .count();
            // Every move but a last one cut short is left short.
            proptest::prop_assert!(full <= usize::from(cut), "{} of {} moves kept whole", full, moves);
        }
    }

    #[test]
    fn a_damaged_short_form_is_an_error_naming_its_line() {
        let short = shorten(&log(&[11, 12])).unwrap();
        let text = String::from_utf8(short).unwrap();
        let damaged = text.replace(r#""pit":12"#, r#""pit":3"#);
        let e = lengthen(damaged.as_bytes()).unwrap_err();
        assert_eq!(e, "line 4: pit 3 cannot be played");
        let no_start = text.replace("game-start", "game-begin");
        assert_eq!(
            lengthen(no_start.as_bytes()).unwrap_err(),
            "line 3: a move before any position"
        );
    }

    #[test]
    fn an_archive_gives_back_every_log_and_unpacks() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.jsonl");
        let b = dir.path().join("b.jsonl");
        let c = dir.path().join("c.jsonl.gz");
        fs::write(&a, log(&[11, 12, 6])).unwrap();
        // A log lengthening would not give back: kept as it is.
        let odd = format!(
            "{{\"type\":\"game-start\",\"game\":1,\"first\":0,\"position\":\"{START}\"}}\n\
             {{\"type\":\"move\",\"game\":1,\"ply\":0,\"bot\":0,\"player\":0,\"pit\":11,\"ms\":1.0}}\n"
        );
        fs::write(&b, &odd).unwrap();
        fs::write(&c, log(&[11])).unwrap();
        let c = crate::compress_log(&c).unwrap_or(c);
        let dest = dir.path().join(format!("sets-1-3{ARCHIVE_SUFFIX}"));
        // Stderr files beside them: one plain, one compressed; a name that is not a
        // set's stderr file is refused.
        let err_a = dir.path().join("set-a.a.stderr");
        fs::write(&err_a, "Traceback...\nValueError: x\n").unwrap();
        let err_c = dir.path().join("set-c.b2.stderr");
        fs::write(&err_c, "warming up\n").unwrap();
        let err_c = crate::compress_log(&err_c).unwrap();
        // A bot's plain stderr that starts as gzip does: kept as it is.
        let err_b = dir.path().join("set-b.a.stderr");
        fs::write(&err_b, b"\x1f\x8b not gzip at all\n").unwrap();
        let bad = write_archive(
            &Dir::open(dir.path()).unwrap(),
            &format!("bad{ARCHIVE_SUFFIX}"),
            &[],
            &[("set-a.c.stderr".to_string(), err_a.as_path())],
        );
        assert_eq!(bad.unwrap_err().kind(), io::ErrorKind::InvalidInput);
        let archived = write_archive(
            &Dir::open(dir.path()).unwrap(),
            &format!("sets-1-3{ARCHIVE_SUFFIX}"),
            &[
                ("set-a".to_string(), a.as_path()),
                ("set-b".to_string(), b.as_path()),
                ("set-c".to_string(), c.as_path()),
            ],
            &[
                ("set-a.a.stderr".to_string(), err_a.as_path()),
                ("set-b.a.stderr".to_string(), err_b.as_path()),
                ("set-c.b2.stderr".to_string(), err_c.as_path()),
            ],
        )
        .unwrap();
        assert_eq!(
            archived.stderr,
            ["set-a.a.stderr", "set-b.a.stderr", "set-c.b2.stderr"]
        );
        assert_eq!(
            stderr_names(&dest).unwrap(),
            ["set-a.a.stderr", "set-b.a.stderr", "set-c.b2.stderr"]
        );
        assert_eq!(
            read_stderr(&dest, "set-b.a.stderr").unwrap().unwrap(),
            b"\x1f\x8b not gzip at all\n"
        );
        assert_eq!(
            read_stderr(&dest, "set-c.b2.stderr").unwrap().unwrap(),
            b"warming up\n"
        );
        assert_eq!(read_stderr(&dest, "set-b.b.stderr").unwrap(), None);
        assert_eq!(archived.stems, ["set-a", "set-b", "set-c"]);
        assert_eq!(stems(&dest).unwrap(), ["set-a", "set-b", "set-c"]);
        assert_eq!(archived.short, 2);
        assert!(is_archive_file(&dest).unwrap());
        assert!(!is_archive_file(&a).unwrap());
        // A compressed log is zstd too, and no archive.
        assert!(crate::logfile::is_zstd(&fs::read(&c).unwrap()));
        assert!(!is_archive_file(&c).unwrap());
        assert_eq!(
            read_log(&dest, "set-a").unwrap().unwrap(),
            log(&[11, 12, 6])
        );
        assert_eq!(read_log(&dest, "set-b").unwrap().unwrap(), odd.as_bytes());
        assert_eq!(read_log(&dest, "set-c").unwrap().unwrap(), log(&[11]));
        assert_eq!(read_log(&dest, "set-d").unwrap(), None);
        let out = dir.path().join("out");
        fs::create_dir(&out).unwrap();
        assert_eq!(unpack(&dest, &out).unwrap(), ["set-a", "set-b", "set-c"]);
        assert_eq!(
            fs::read(out.join("set-a.jsonl")).unwrap(),
            log(&[11, 12, 6])
        );
        assert_eq!(
            fs::read(out.join("set-a.a.stderr")).unwrap(),
            b"Traceback...\nValueError: x\n"
        );
        assert_eq!(
            fs::read(out.join("set-c.b2.stderr")).unwrap(),
            b"warming up\n"
        );
        // Never over a file that is there.
        assert_eq!(
            unpack(&dest, &out).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        // Cut short: an error, never a panic.
        let bytes = fs::read(&dest).unwrap();
        let cut = dir.path().join("cut.tar.zst");
        fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        assert!(read_log(&cut, "set-c").is_err());
    }
}
