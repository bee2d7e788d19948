//! A log file as its text, whether it is plain JSON Lines (`STEM.jsonl`), zstd
//! (`STEM.jsonl.zst`, as a league and a server keep a finished set's log) or gzip
//! (`STEM.jsonl.gz`, as they kept it before): the form is told by the file's first
//! bytes (zstd's magic `28 b5 2f fd`, gzip's `1f 8b`; a log starts with `{`), never by
//! its name, so a renamed or downloaded log reads the same.
//!
//! A set's log is written plain while the set plays (so it can be followed record by
//! record), and compressed as a whole once the set is finished ([`compress_log`]): the
//! zstd file is written beside it under a temporary name, synced, and renamed over, and
//! only then is the plain file removed, so that a crash leaves one whole log or the
//! other, never half of one. A reader that must find a finished log while its
//! compression may be under way looks for the compressed file, then the plain one, then
//! the compressed one again ([`finished_log_candidates`]): one of them is always there.
//!
//! Why zstd at level [`LOG_LEVEL`]: measured on the logs of a league of random movers
//! (docs/league.md, Speed; `cargo run --release -p referee --example log_compression`),
//! it keeps a set's log a little smaller than gzip at level 9 did (22.8 against 23.2 KB
//! for a 257 KB log of 20 games), in under a third of its CPU time (6.7 against
//! 23.5 ms), and unpacks several times faster. A whole file compresses far better than
//! a stream flushed after every record.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Chain, Cursor, Read};
use std::path::{Path, PathBuf};

use crate::files::{self, Create, Dir};

/// gzip's first two bytes (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// zstd's first four bytes (RFC 8878).
pub(crate) const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The end of a compressed log's name, after the plain log's: `STEM.jsonl.zst`.
pub const COMPRESSED_SUFFIX: &str = ".zst";

/// The end of a log's name compressed by an older version: `STEM.jsonl.gz` (still read).
pub const GZIP_SUFFIX: &str = ".gz";

/// zstd's level for a finished log (and a bot's stderr file): the smallest level whose
/// files are no larger than gzip's at level 9 on a league's logs (8 ties; 10 takes
/// 12% more time for 3% less), at under a third of its CPU (see the module's
/// documentation).
pub const LOG_LEVEL: i32 = 9;

/// zstd's window for a finished log: 1 MiB (2^20), as an archive's. It bounds what
/// unpacking one holds in memory (the server unpacks up to 16 downloads at once: 8 MiB,
/// the level's own window, took its peak from under 100 MB to 110 MB with 50 clients of
/// a 32 MB log); a set's log is mostly far smaller (a 20-game set's, 250 KB), and then
/// the window is no larger than the log.
const WINDOW_LOG: u32 = 20;

/// Whether `bytes`, a file's beginning, are gzip.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// Whether `bytes`, a file's beginning, are zstd.
pub fn is_zstd(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZSTD_MAGIC)
}

/// Whether `bytes`, a log file's beginning, are a compressed log (zstd or gzip).
pub fn is_compressed(bytes: &[u8]) -> bool {
    is_zstd(bytes) || is_gzip(bytes)
}

/// A log's bytes: the ones read to tell its form, then the rest of the input.
type Sniffed<R> = Chain<Cursor<Vec<u8>>, R>;

/// A log file's text, read as a stream: unpacked if the file is zstd or gzip, as it is
/// otherwise. A compressed stream that is cut short or damaged is an error when the
/// reading reaches it (`InvalidInput`, `UnexpectedEof`, `Other`), never a panic.
pub enum LogReader {
    /// A plain log.
    Plain(Sniffed<File>),
    /// A gzip log, unpacked (every member, as `zcat` does).
    Gzip(Box<flate2::read::MultiGzDecoder<BufReader<Sniffed<File>>>>),
    /// A zstd log, unpacked (every frame, as `zstdcat` does).
    Zstd(Box<zstd::Decoder<'static, BufReader<Sniffed<File>>>>),
    /// A log read whole, from an archive ([`crate::archive`]).
    Memory(Cursor<Vec<u8>>),
}

impl Read for LogReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            LogReader::Plain(r) => r.read(buf),
            LogReader::Gzip(r) => r.read(buf),
            LogReader::Zstd(r) => r.read(buf),
            LogReader::Memory(r) => r.read(buf),
        }
    }
}

/// How a log's bytes are packed.
enum Form {
    Plain,
    Gzip,
    Zstd,
}

/// Reads the first bytes of `input` to tell its form; returns the form and the whole
/// input again (those bytes, then the rest).
fn sniff<R: Read>(mut input: R) -> io::Result<(Form, Sniffed<R>)> {
    let mut head = Vec::with_capacity(ZSTD_MAGIC.len());
    (&mut input)
        .take(ZSTD_MAGIC.len() as u64)
        .read_to_end(&mut head)?;
    let form = if is_zstd(&head) {
        Form::Zstd
    } else if is_gzip(&head) {
        Form::Gzip
    } else {
        Form::Plain
    };
    Ok((form, Cursor::new(head).chain(input)))
}

/// A zstd decoder of every frame of `input`, its window bounded by what
/// [`compress_log`] writes (a larger one, not ours, is refused when reached).
fn zstd_decoder<'a, R: io::BufRead>(input: R) -> io::Result<zstd::Decoder<'a, R>> {
    let mut decoder = zstd::Decoder::with_buffer(input)?;
    decoder.window_log_max(WINDOW_LOG)?;
    Ok(decoder)
}

/// Opens the log at `path`, plain, zstd or gzip.
pub fn open_log(path: &Path) -> io::Result<LogReader> {
    Ok(match sniff(File::open(path)?)? {
        (Form::Zstd, bytes) => LogReader::Zstd(Box::new(zstd_decoder(BufReader::new(bytes))?)),
        (Form::Gzip, bytes) => LogReader::Gzip(Box::new(flate2::read::MultiGzDecoder::new(
            BufReader::new(bytes),
        ))),
        (Form::Plain, bytes) => LogReader::Plain(bytes),
    })
}

/// The text of a log read from `input` (a file being sent, say): unpacked if it is zstd
/// or gzip, as it is otherwise; as [`open_log`] reads a file.
pub fn unpacked<R: Read + Send + 'static>(input: R) -> io::Result<Box<dyn Read + Send>> {
    Ok(match sniff(input)? {
        (Form::Zstd, bytes) => Box::new(zstd_decoder(BufReader::new(bytes))?),
        (Form::Gzip, bytes) => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(bytes))),
        (Form::Plain, bytes) => Box::new(bytes),
    })
}

/// The compressed name of the plain log `plain`: `STEM.jsonl.zst`.
pub fn compressed_path(plain: &Path) -> PathBuf {
    let mut name = plain.as_os_str().to_owned();
    name.push(COMPRESSED_SUFFIX);
    PathBuf::from(name)
}

/// The files to try, in this order, for a finished log whose compressed name is
/// `compressed` (`STEM.jsonl.zst`): the compressed file, the plain one (its compression
/// is under way, or was cut off by the end of its process), then the compressed one
/// again ([`compress_log`] puts it in place before it removes the plain one, so a
/// reader that finds neither of the first two finds the third). A name that is not a
/// compressed one is its own only candidate.
pub fn finished_log_candidates(compressed: &Path) -> Vec<PathBuf> {
    let name = compressed.as_os_str().to_string_lossy();
    match name.strip_suffix(COMPRESSED_SUFFIX) {
        Some(plain) => vec![
            compressed.to_path_buf(),
            PathBuf::from(plain),
            compressed.to_path_buf(),
        ],
        None => vec![compressed.to_path_buf()],
    }
}

/// Opens the finished log named `compressed` (see [`finished_log_candidates`]): the
/// first candidate there, else the error of the last.
pub fn open_finished_log(compressed: &Path) -> io::Result<LogReader> {
    let mut last = None;
    for path in finished_log_candidates(compressed) {
        match open_log(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => last = Some(e),
            opened => return opened,
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
}

/// Compresses the finished plain log `plain` to `STEM.jsonl.zst` beside it (written
/// under a temporary name, synced, renamed), then removes the plain file; returns the
/// compressed file's path. On an error (a full disk) the plain log is left as it was,
/// whole. `plain`'s directory is taken as named ([`files::open_parent`]); below a
/// directory the user named, use [`compress_log_in`].
pub fn compress_log(plain: &Path) -> io::Result<PathBuf> {
    let (dir, name) = files::open_parent(plain)?;
    compress_log_in(&dir, name)
}

/// [`compress_log`] of the log `plain` below the open directory `dir`: no link is
/// followed on the way to it, nor at its name, its compressed file's or its temporary
/// file's.
pub fn compress_log_in(dir: &Dir, plain: &Path) -> io::Result<PathBuf> {
    let zst = compressed_path(plain);
    let mut tmp = zst.as_os_str().to_owned();
    tmp.push(".tmp");
    let input = dir.open_file(plain)?;
    write_by_rename(dir, &zst, Path::new(&tmp), |out| write_zstd(input, out))?;
    dir.remove_file(plain)?;
    Ok(dir.join(zst))
}

/// Writes `dest` whole or not at all: `write` fills the new file `tmp` (and syncs it),
/// which is then renamed over `dest`, both below `dir`; on an error `tmp` is removed and
/// `dest` is as it was. A leftover `tmp` of a crash is replaced; no link is followed,
/// there or on the way (`create_new` refuses any existing name once it is gone).
pub(crate) fn write_by_rename<T>(
    dir: &Dir,
    dest: &Path,
    tmp: &Path,
    write: impl FnOnce(File) -> io::Result<T>,
) -> io::Result<T> {
    match dir.remove_file(tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let written = dir
        .create_file(tmp, Create::New, None)
        .and_then(write)
        .and_then(|value| dir.rename(tmp, dest).map(|()| value));
    if written.is_err() {
        let _ = dir.remove_file(tmp);
    }
    written
}

fn write_zstd(mut input: File, out: File) -> io::Result<()> {
    let mut zstd = zstd::Encoder::new(BufWriter::new(out), LOG_LEVEL)?;
    zstd.window_log(WINDOW_LOG)?;
    // A damaged byte is an error when read, as gzip's CRC makes it.
    zstd.include_checksum(true)?;
    // The frame says how long its text is: `zstd -l` shows it.
    if let Ok(meta) = input.metadata() {
        zstd.set_pledged_src_size(Some(meta.len()))?;
    }
    io::copy(&mut input, &mut zstd)?;
    let out = zstd.finish()?.into_inner().map_err(|e| e.into_error())?;
    out.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const TEXT: &str = "{\"type\":\"header\"}\n{\"type\":\"set-end\"}\n";

    fn read(path: &Path) -> io::Result<String> {
        let mut text = String::new();
        open_log(path)?.read_to_string(&mut text)?;
        Ok(text)
    }

    #[test]
    fn a_compressed_log_reads_as_its_plain_text_and_the_plain_file_goes() {
        let dir = tempfile::tempdir().expect("dir");
        let plain = dir.path().join("r1-a-vs-b.jsonl");
        fs::write(&plain, TEXT).expect("write");
        assert_eq!(read(&plain).expect("plain"), TEXT);
        let zst = compress_log(&plain).expect("compress");
        assert_eq!(zst, dir.path().join("r1-a-vs-b.jsonl.zst"));
        assert!(!plain.exists());
        assert!(is_zstd(&fs::read(&zst).expect("bytes")));
        assert_eq!(read(&zst).expect("zstd"), TEXT);
        // Told by its bytes, not its name.
        let renamed = dir.path().join("renamed.jsonl");
        fs::rename(&zst, &renamed).expect("rename");
        assert_eq!(read(&renamed).expect("renamed"), TEXT);
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["renamed.jsonl"]);
    }

    #[test]
    fn short_damaged_and_empty_files_are_errors_or_empty_never_a_panic() {
        let dir = tempfile::tempdir().expect("dir");
        let plain = dir.path().join("x.jsonl");
        fs::write(&plain, TEXT.repeat(50)).expect("write");
        let zst = compress_log(&plain).expect("compress");
        let bytes = fs::read(&zst).expect("bytes");
        // Cut short: an error at the cut.
        let cut = dir.path().join("cut.jsonl.zst");
        fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
        let err = read(&cut).expect_err("cut short");
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
        // A changed byte in its checksum (the frame's last four bytes).
        let mut bad = bytes.clone();
        let at = bad.len() - 2;
        bad[at] ^= 0xff;
        let damaged = dir.path().join("bad.jsonl.zst");
        fs::write(&damaged, &bad).expect("write");
        assert!(read(&damaged).is_err());
        // The magic alone, and an empty file.
        for (name, magic) in [
            ("magic.jsonl.zst", &ZSTD_MAGIC[..]),
            ("magic.jsonl.gz", &GZIP_MAGIC[..]),
        ] {
            let magic_only = dir.path().join(name);
            fs::write(&magic_only, magic).expect("write");
            assert!(read(&magic_only).is_err(), "{name}");
        }
        let empty = dir.path().join("empty.jsonl");
        fs::write(&empty, "").expect("write");
        assert_eq!(read(&empty).expect("empty"), "");
        let one = dir.path().join("one.jsonl");
        fs::write(&one, "{").expect("write");
        assert_eq!(read(&one).expect("one byte"), "{");
    }

    #[test]
    fn an_older_gzip_log_still_reads_as_its_text() {
        use std::io::Write;
        let dir = tempfile::tempdir().expect("dir");
        let gz = dir.path().join("old.jsonl.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(TEXT.as_bytes()).expect("gzip");
        let bytes = enc.finish().expect("gzip");
        fs::write(&gz, &bytes).expect("write");
        assert_eq!(read(&gz).expect("gzip"), TEXT);
        let mut text = String::new();
        unpacked(Cursor::new(bytes))
            .expect("sniff")
            .read_to_string(&mut text)
            .expect("gzip");
        assert_eq!(text, TEXT);
        // Cut short: an error, never a panic.
        let cut = dir.path().join("cut.jsonl.gz");
        fs::write(&cut, &fs::read(&gz).expect("bytes")[..10]).expect("write");
        assert_eq!(
            read(&cut).expect_err("cut").kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn a_stream_reads_as_a_file_does_in_every_form() {
        let dir = tempfile::tempdir().expect("dir");
        let plain = dir.path().join("s.jsonl");
        fs::write(&plain, TEXT).expect("write");
        let unpack = |bytes: Vec<u8>| {
            let mut text = String::new();
            unpacked(Cursor::new(bytes))
                .expect("sniff")
                .read_to_string(&mut text)
                .map(|_| text)
        };
        assert_eq!(unpack(TEXT.as_bytes().to_vec()).expect("plain"), TEXT);
        let zst = compress_log(&plain).expect("compress");
        assert_eq!(unpack(fs::read(&zst).expect("bytes")).expect("zstd"), TEXT);
        assert_eq!(unpack(Vec::new()).expect("empty"), "");
        assert_eq!(unpack(b"{".to_vec()).expect("one byte"), "{");
    }

    #[test]
    fn a_finished_log_is_found_before_during_and_after_its_compression() {
        let dir = tempfile::tempdir().expect("dir");
        let plain = dir.path().join("f.jsonl");
        let zst = compressed_path(&plain);
        assert_eq!(zst, dir.path().join("f.jsonl.zst"));
        assert_eq!(
            finished_log_candidates(&zst),
            [zst.clone(), plain.clone(), zst.clone()]
        );
        let old = dir.path().join("f.jsonl.gz");
        assert_eq!(finished_log_candidates(&old), std::slice::from_ref(&old));
        // Not there at all: not found.
        let err = open_finished_log(&zst).err().expect("missing");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        // Before (or cut off by the end of its process): the plain file.
        fs::write(&plain, TEXT).expect("write");
        let mut text = String::new();
        open_finished_log(&zst)
            .expect("plain")
            .read_to_string(&mut text)
            .expect("read");
        assert_eq!(text, TEXT);
        // After: the compressed file.
        compress_log(&plain).expect("compress");
        let mut text = String::new();
        let mut reader = open_finished_log(&zst).expect("compressed");
        assert!(matches!(reader, LogReader::Zstd(_)));
        reader.read_to_string(&mut text).expect("read");
        assert_eq!(text, TEXT);
    }

    #[test]
    fn a_failed_compression_leaves_the_plain_log() {
        let dir = tempfile::tempdir().expect("dir");
        let missing = dir.path().join("none.jsonl");
        assert!(compress_log(&missing).is_err());
        let names: Vec<_> = fs::read_dir(dir.path()).expect("list").collect();
        assert!(names.is_empty());
    }
}
