//! Unpacking an uploaded bot's archive, a stranger's bytes, into a directory of its own.
//!
//! Two passes. The first reads the whole archive and writes nothing: every entry's
//! type and path is checked, and the files, their sizes and the archive's own size are
//! counted against the [`Bounds`]; anything refused is refused there, with an error
//! naming it ([`UnpackError`]). No symbolic link is accepted (one that stays inside the
//! tree is refused too: one rule that needs no resolving), nor hard links, devices,
//! fifos or sparse files: plain files and directories only. The
//! decompressed stream is itself bounded (the files' bound plus 1 KiB of headers per
//! entry), so a small archive that would unpack to a gigabyte is refused at the bound,
//! having decompressed no more than that, and nothing of it written.
//!
//! The second pass writes into a new directory, created for this unpacking alone once
//! the first pass has passed (named by the hash and a unique suffix:
//! [`new_version_dir`]) and never reused, through a
//! `referee::Dir` (no link followed, at any component), every file created new (never
//! an existing one opened), modes 0644 or 0755 only (no set-user-id bit, no owner).

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use referee::{Create, Dir};

use crate::bounds::{check_path, human_bytes, Bounds};
use crate::pack::{describe, sha256_hex, ARCHIVE_WINDOW_LOG};

/// Header bytes allowed per entry on top of the files' bytes, for the bound on the
/// decompressed stream (a tar header is 512 bytes; a long name or PAX record more).
const HEADER_ALLOWANCE: u64 = 1024;

/// Why an archive is refused or could not be unpacked. Every variant of a hostile
/// archive names the path at fault (escaped: a name may hold anything).
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    /// The archive is larger than its bound.
    #[error("the archive has {size} bytes, more than {}, the bound of an upload", human_bytes(*bound))]
    ArchiveTooBig {
        /// Its size.
        size: u64,
        /// The bound.
        bound: u64,
    },
    /// Its files would hold more than the bound.
    #[error("the archive unpacks to more than {}, the bound of an upload (refused at the bound; nothing written)", human_bytes(*bound))]
    UnpackedTooBig {
        /// The bound.
        bound: u64,
    },
    /// More entries than the bound.
    #[error("the archive holds more than {bound} files and directories, the bound of an upload (nothing written)")]
    TooManyFiles {
        /// The bound.
        bound: u64,
    },
    /// A path that leaves the tree, or is too deep or long.
    #[error("{path:?} in the archive: {problem} (nothing written)")]
    Path {
        /// The path as the archive gives it (lossy UTF-8).
        path: String,
        /// What is wrong with it, with its bound.
        problem: String,
    },
    /// A symbolic link.
    #[error("{path:?} in the archive is a symbolic link (to {target:?}); an uploaded bot may hold no link (nothing written)")]
    SymbolicLink {
        /// The link's path.
        path: String,
        /// What it points to.
        target: String,
    },
    /// A hard link.
    #[error("{path:?} in the archive is a hard link (to {target:?}); an uploaded bot may hold no link (nothing written)")]
    HardLink {
        /// The link's path.
        path: String,
        /// What it names.
        target: String,
    },
    /// A character or block device.
    #[error("{path:?} in the archive is a {kind} device; an uploaded bot may hold only files and directories (nothing written)")]
    Device {
        /// Its path.
        path: String,
        /// `character` or `block`.
        kind: &'static str,
    },
    /// A fifo.
    #[error("{path:?} in the archive is a fifo; an uploaded bot may hold only files and directories (nothing written)")]
    Fifo {
        /// Its path.
        path: String,
    },
    /// Any other entry type (sparse files, GNU volume headers, ...).
    #[error("{path:?} in the archive is of tar type {kind:?}; an uploaded bot may hold only files and directories (nothing written)")]
    OtherType {
        /// Its path.
        path: String,
        /// The tar type byte, as a character.
        kind: char,
    },
    /// The same path twice, or a path under a file.
    #[error(
        "{path:?} is in the archive twice, or under a file of the same name (nothing written)"
    )]
    Duplicate {
        /// The path.
        path: String,
    },
    /// Not a zstd-compressed tar, or a damaged one.
    #[error("the archive cannot be read: {0} (nothing written)")]
    Corrupt(String),
    /// Writing the unpacked tree failed.
    #[error("cannot unpack into {path}: {error}")]
    Write {
        /// What was being written.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
}

/// One entry of a checked archive.
#[derive(Debug)]
struct Planned {
    path: String,
    dir: bool,
    executable: bool,
}

/// What an unpacking wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unpacked {
    /// The entries written (files and directories).
    pub files: u64,
    /// The bytes of the files written.
    pub bytes: u64,
}

/// A version unpacked by [`unpack_archive`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// Its SHA-256 (the archive's bytes), 64 lowercase hexadecimal digits.
    pub hash: String,
    /// Its own new directory in the store ([`new_version_dir`]).
    pub dir: PathBuf,
    /// Its sources, unpacked: `dir/src` ([`SOURCES`]).
    pub sources: PathBuf,
    /// What was written there.
    pub unpacked: Unpacked,
}

/// The directory of a version's unpacked sources, in its version directory.
pub const SOURCES: &str = "src";

/// Checks the zstd-compressed tar `archive` against `bounds` and, only if the whole
/// archive passes, unpacks it into `src` of a new version directory in `store`
/// ([`new_version_dir`]). A refused archive leaves `store` as it was.
pub fn unpack_archive(
    archive: &[u8],
    store: &Dir,
    bounds: &Bounds,
) -> Result<Version, UnpackError> {
    if archive.len() as u64 > bounds.archive_bytes {
        return Err(UnpackError::ArchiveTooBig {
            size: archive.len() as u64,
            bound: bounds.archive_bytes,
        });
    }
    let plan = scan(decoder(archive)?, bounds)?;
    let hash = sha256_hex(archive);
    let (version, dir) = new_version_dir(store, &hash).map_err(|error| UnpackError::Write {
        path: store.path().to_path_buf(),
        error,
    })?;
    let sources = version
        .create_dir(Path::new(SOURCES))
        .map_err(|error| UnpackError::Write {
            path: dir.join(SOURCES),
            error,
        })?;
    let unpacked = write(decoder(archive)?, &plan, &sources)?;
    Ok(Version {
        hash,
        sources: dir.join(SOURCES),
        dir,
        unpacked,
    })
}

/// Checks the zstd-compressed tar `archive` against `bounds` as [`unpack_archive`]
/// does, writing nothing: what a server does with an upload before it keeps it.
/// Returns how many files and directories it holds.
pub fn check_archive(archive: &[u8], bounds: &Bounds) -> Result<u64, UnpackError> {
    if archive.len() as u64 > bounds.archive_bytes {
        return Err(UnpackError::ArchiveTooBig {
            size: archive.len() as u64,
            bound: bounds.archive_bytes,
        });
    }
    Ok(scan(decoder(archive)?, bounds)?.len() as u64)
}

/// As [`unpack_archive`], for a plain (uncompressed) tar in the file `tar` (what a
/// build leaves, [`crate::build`]); `bounds.archive_bytes` is not used.
pub fn unpack_tar_file(tar: &Path, into: &Dir, bounds: &Bounds) -> Result<Unpacked, UnpackError> {
    let open = || {
        std::fs::File::open(tar).map_err(|error| UnpackError::Write {
            path: tar.to_path_buf(),
            error,
        })
    };
    let plan = scan(io::BufReader::new(open()?), bounds)?;
    write(io::BufReader::new(open()?), &plan, into)
}

fn decoder(archive: &[u8]) -> Result<impl Read + '_, UnpackError> {
    let mut decoder = zstd::stream::read::Decoder::new(archive)
        .map_err(|e| UnpackError::Corrupt(e.to_string()))?;
    decoder
        .window_log_max(ARCHIVE_WINDOW_LOG)
        .map_err(|e| UnpackError::Corrupt(e.to_string()))?;
    Ok(decoder)
}

/// A reader that fails past `left` bytes, with an error that [`scan`] turns into
/// [`UnpackError::UnpackedTooBig`].
struct Bounded<R> {
    inner: R,
    left: u64,
}

/// The message of the error [`Bounded`] gives, told apart by [`is_past_bound`].
const PAST_BOUND: &str = "hus-upload: past the bound on the unpacked stream";

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One byte more than allowed is there only if the stream goes on.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(PAST_BOUND)),
            };
        }
        let want = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Whether `e` is, or was caused by, [`Bounded`]'s error (the tar reader may wrap it in
/// an error of its own).
fn is_past_bound(e: &io::Error) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|inner| inner as _);
    while let Some(error) = next {
        if error.to_string() == PAST_BOUND {
            return true;
        }
        if let Some(io) = error.downcast_ref::<io::Error>() {
            if is_past_bound(io) {
                return true;
            }
        }
        next = error.source();
    }
    false
}

/// The first pass: checks every entry, writes nothing.
fn scan(reader: impl Read, bounds: &Bounds) -> Result<Vec<Planned>, UnpackError> {
    let too_big = || UnpackError::UnpackedTooBig {
        bound: bounds.unpacked_bytes,
    };
    let stream_bound = bounds.unpacked_bytes.saturating_add(
        bounds
            .files
            .saturating_add(2)
            .saturating_mul(HEADER_ALLOWANCE),
    );
    let bounded = Bounded {
        inner: reader,
        left: stream_bound,
    };
    let corrupt = |e: io::Error| {
        if is_past_bound(&e) {
            too_big()
        } else {
            UnpackError::Corrupt(e.to_string())
        }
    };
    let mut archive = tar::Archive::new(bounded);
    let mut plan: Vec<Planned> = Vec::new();
    let mut seen: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
    let mut total = 0u64;
    for entry in archive.entries().map_err(corrupt)? {
        let entry = entry.map_err(corrupt)?;
        let raw_path = entry.path_bytes();
        let shown = String::from_utf8_lossy(&raw_path).into_owned();
        let header = entry.header();
        let kind = header.entry_type();
        let link = || {
            entry
                .link_name_bytes()
                .map(|l| String::from_utf8_lossy(&l).into_owned())
                .unwrap_or_default()
        };
        let dir = match kind {
            tar::EntryType::Regular | tar::EntryType::Continuous => false,
            tar::EntryType::Directory => true,
            tar::EntryType::Symlink => {
                return Err(UnpackError::SymbolicLink {
                    path: shown,
                    target: link(),
                })
            }
            tar::EntryType::Link => {
                return Err(UnpackError::HardLink {
                    path: shown,
                    target: link(),
                })
            }
            tar::EntryType::Char => {
                return Err(UnpackError::Device {
                    path: shown,
                    kind: "character",
                })
            }
            tar::EntryType::Block => {
                return Err(UnpackError::Device {
                    path: shown,
                    kind: "block",
                })
            }
            tar::EntryType::Fifo => return Err(UnpackError::Fifo { path: shown }),
            other => {
                return Err(UnpackError::OtherType {
                    path: shown,
                    kind: char::from(other.as_byte()),
                })
            }
        };
        if dir && is_root(&raw_path) {
            // `./`, the tree itself (GNU tar writes it first): nothing to make.
            continue;
        }
        let path = check_path(&raw_path, bounds).map_err(|problem| UnpackError::Path {
            path: shown.clone(),
            problem: describe(&problem, bounds),
        })?;
        if plan.len() as u64 >= bounds.files {
            return Err(UnpackError::TooManyFiles {
                bound: bounds.files,
            });
        }
        // The size the header declares is the size of the data that follows it: the
        // bound is checked before a byte of it is read.
        let size = entry.size();
        total = total.saturating_add(size);
        if total > bounds.unpacked_bytes {
            return Err(too_big());
        }
        if dir && size != 0 {
            return Err(UnpackError::Corrupt(format!(
                "directory {shown:?} has data"
            )));
        }
        // Every directory above it must be a directory (or not yet said), and the path
        // itself new, but for a directory said again.
        let mut above = String::new();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            if !above.is_empty() {
                above.push('/');
            }
            above.push_str(part);
            if seen.get(&above) == Some(&false) {
                return Err(UnpackError::Duplicate { path: shown });
            }
        }
        match seen.get(&path) {
            // A directory said again: made again, which changes nothing.
            Some(true) if dir => {}
            Some(_) => return Err(UnpackError::Duplicate { path: shown }),
            None => {}
        }
        seen.insert(path.clone(), dir);
        let executable = header.mode().map(|m| m & 0o111 != 0).unwrap_or(false);
        plan.push(Planned {
            path,
            dir,
            executable,
        });
    }
    Ok(plan)
}

/// Whether a path names the tree itself (`.`, `./`).
fn is_root(path: &[u8]) -> bool {
    path.split(|&b| b == b'/')
        .all(|part| part.is_empty() || part == b".")
}

/// The second pass: writes what [`scan`] planned, in the same order.
fn write(reader: impl Read, plan: &[Planned], into: &Dir) -> Result<Unpacked, UnpackError> {
    let fail = |path: &str| {
        let path = into.join(path);
        move |error| UnpackError::Write { path, error }
    };
    let mut archive = tar::Archive::new(reader);
    let entries = archive
        .entries()
        .map_err(|e| UnpackError::Corrupt(e.to_string()))?;
    let mut planned = plan.iter();
    let mut written = Unpacked { files: 0, bytes: 0 };
    for entry in entries {
        let mut entry = entry.map_err(|e| UnpackError::Corrupt(e.to_string()))?;
        if entry.header().entry_type() == tar::EntryType::Directory && is_root(&entry.path_bytes())
        {
            continue;
        }
        let same = planned.next().filter(|item| {
            let bytes = entry.path_bytes();
            let unbounded = Bounds {
                depth: usize::MAX,
                path_bytes: usize::MAX,
                ..Bounds::default()
            };
            check_path(&bytes, &unbounded).ok().as_deref() == Some(item.path.as_str())
        });
        let Some(item) = same else {
            return Err(UnpackError::Corrupt(
                "the archive changed between reads".into(),
            ));
        };
        let rel = Path::new(&item.path);
        if item.dir {
            into.create_dir(rel).map_err(fail(&item.path))?;
        } else {
            if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                into.create_dir(parent).map_err(fail(&item.path))?;
            }
            let mode = if item.executable { 0o755 } else { 0o644 };
            let mut file = into
                .create_file(rel, Create::New, Some(mode))
                .map_err(fail(&item.path))?;
            written.bytes += io::copy(&mut entry, &mut file).map_err(fail(&item.path))?;
        }
        written.files += 1;
    }
    Ok(written)
}

/// A new directory for one version in `store`: named by `hash` (its first 16 digits)
/// and a suffix unique on this machine (the process id, a counter and the time), made
/// with `mkdir` (which fails on any existing name, a link included) and opened without
/// following a link. Never an existing directory: a version is never unpacked over
/// another's files.
pub fn new_version_dir(store: &Dir, hash: &str) -> io::Result<(Dir, PathBuf)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let short: String = hash
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "{short}-{}-{}-{nanos:08x}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path = store.join(&name);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok((store.open_dir(Path::new(&name))?, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create {}: {e}", path.display()),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streams_bound_is_told_even_when_wrapped() {
        let past = io::Error::other(PAST_BOUND);
        assert!(is_past_bound(&past));
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("failed to read an entry")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let wrapped = io::Error::other(Wrapper(io::Error::other(PAST_BOUND)));
        assert!(is_past_bound(&wrapped));
        assert!(!is_past_bound(&io::Error::other("unexpected end of file")));
        let mut bounded = Bounded {
            inner: &[1u8, 2, 3, 4][..],
            left: 3,
        };
        let mut buf = [0u8; 8];
        assert_eq!(bounded.read(&mut buf).unwrap(), 3);
        assert!(is_past_bound(&bounded.read(&mut buf).unwrap_err()));
        let mut exact = Bounded {
            inner: &[1u8, 2, 3][..],
            left: 3,
        };
        assert_eq!(exact.read(&mut buf).unwrap(), 3);
        assert_eq!(exact.read(&mut buf).unwrap(), 0);
    }
}
