//! A log file as its text, whether it is plain JSON Lines (`STEM.jsonl`) or gzip
//! (`STEM.jsonl.gz`, as a league, a server and a worker keep a finished set's log):
//! the form is told by the file's first two bytes (gzip's magic `1f 8b`; a log starts
//! with `{`), never by its name, so a renamed or downloaded log reads the same.
//!
//! A set's log is written plain while the set plays (so it can be followed record by
//! record), and compressed as a whole once the set is finished ([`compress_log`]): the
//! gzip file is written beside it under a temporary name, synced, and renamed over, and
//! only then is the plain file removed, so that a crash leaves one whole log or the
//! other, never half of one. A whole file compresses far better than a stream flushed
//! after every record (30 KB of a 2-game set: 3.7 KB against 5.2 KB).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Chain, Cursor, Read};
use std::path::{Path, PathBuf};

use crate::files::{self, Create, Dir};

/// gzip's first two bytes (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The end of a compressed log's name, after the plain log's: `STEM.jsonl.gz`.
pub const GZIP_SUFFIX: &str = ".gz";

/// Whether `bytes`, a log file's beginning, are gzip.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// A log's bytes: the ones read to tell its form, then the rest of the file.
type Sniffed = Chain<Cursor<Vec<u8>>, File>;

/// A log file's text, read as a stream: unpacked if the file is gzip, as it is
/// otherwise. A gzip stream that is cut short or damaged is an error when the reading
/// reaches it (`InvalidInput`, `UnexpectedEof`), never a panic.
pub enum LogReader {
    /// A plain log.
    Plain(Sniffed),
    /// A gzip log, unpacked (every member, as `zcat` does).
    Gzip(Box<flate2::read::MultiGzDecoder<BufReader<Sniffed>>>),
    /// A log read whole, from an archive ([`crate::archive`]).
    Memory(Cursor<Vec<u8>>),
}

impl Read for LogReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            LogReader::Plain(r) => r.read(buf),
            LogReader::Gzip(r) => r.read(buf),
            LogReader::Memory(r) => r.read(buf),
        }
    }
}

/// Opens the log at `path`, plain or gzip.
pub fn open_log(path: &Path) -> io::Result<LogReader> {
    let mut file = File::open(path)?;
    let mut head = Vec::with_capacity(2);
    (&mut file).take(2).read_to_end(&mut head)?;
    let gzip = is_gzip(&head);
    let bytes = Cursor::new(head).chain(file);
    Ok(if gzip {
        LogReader::Gzip(Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(
            bytes,
        ))))
    } else {
        LogReader::Plain(bytes)
    })
}

/// The compressed name of the plain log `plain`: `STEM.jsonl.gz`.
pub fn gzip_path(plain: &Path) -> PathBuf {
    let mut name = plain.as_os_str().to_owned();
    name.push(GZIP_SUFFIX);
    PathBuf::from(name)
}

/// Compresses the finished plain log `plain` to `STEM.jsonl.gz` beside it (written under
/// a temporary name, synced, renamed), then removes the plain file; returns the gzip
/// file's path. On an error (a full disk) the plain log is left as it was, whole.
/// `plain`'s directory is taken as named ([`files::open_parent`]); below a directory the
/// user named, use [`compress_log_in`].
pub fn compress_log(plain: &Path) -> io::Result<PathBuf> {
    let (dir, name) = files::open_parent(plain)?;
    compress_log_in(&dir, name)
}

/// [`compress_log`] of the log `plain` below the open directory `dir`: no link is
/// followed on the way to it, nor at its name, its gzip's or its temporary file's.
pub fn compress_log_in(dir: &Dir, plain: &Path) -> io::Result<PathBuf> {
    let gz = gzip_path(plain);
    let mut tmp = plain.as_os_str().to_owned();
    tmp.push(".gz.tmp");
    let input = dir.open_file(plain)?;
    write_by_rename(dir, &gz, Path::new(&tmp), |out| write_gzip(input, out))?;
    dir.remove_file(plain)?;
    Ok(dir.join(gz))
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

fn write_gzip(mut input: File, out: File) -> io::Result<()> {
    let mut gz = flate2::write::GzEncoder::new(BufWriter::new(out), flate2::Compression::best());
    io::copy(&mut input, &mut gz)?;
    let out = gz.finish()?.into_inner().map_err(|e| e.into_error())?;
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
        let gz = compress_log(&plain).expect("compress");
        assert_eq!(gz, dir.path().join("r1-a-vs-b.jsonl.gz"));
        assert!(!plain.exists());
        assert!(is_gzip(&fs::read(&gz).expect("bytes")));
        assert_eq!(read(&gz).expect("gzip"), TEXT);
        // Told by its bytes, not its name.
        let renamed = dir.path().join("renamed.jsonl");
        fs::rename(&gz, &renamed).expect("rename");
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
        let gz = compress_log(&plain).expect("compress");
        let bytes = fs::read(&gz).expect("bytes");
        // Cut short: an error at the cut.
        let cut = dir.path().join("cut.jsonl.gz");
        fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
        let err = read(&cut).expect_err("cut short");
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
        // A changed byte in its checksum.
        let mut bad = bytes.clone();
        let at = bad.len() - 6;
        bad[at] ^= 0xff;
        let damaged = dir.path().join("bad.jsonl.gz");
        fs::write(&damaged, &bad).expect("write");
        assert!(read(&damaged).is_err());
        // The magic alone, and an empty file.
        let magic = dir.path().join("magic.jsonl.gz");
        fs::write(&magic, GZIP_MAGIC).expect("write");
        assert!(read(&magic).is_err());
        let empty = dir.path().join("empty.jsonl");
        fs::write(&empty, "").expect("write");
        assert_eq!(read(&empty).expect("empty"), "");
        let one = dir.path().join("one.jsonl");
        fs::write(&one, "{").expect("write");
        assert_eq!(read(&one).expect("one byte"), "{");
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
