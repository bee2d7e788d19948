//! Packing a bot's directory into an archive: a tar compressed with zstd, as the
//! project's log archives (`referee::archive`), so one format and one pair of crates
//! serve both; a tar keeps what a zip would need extensions for (the executable bit),
//! and is read as a stream, entry by entry, which the unpacker's two passes need.
//!
//! What `.gitignore` (and `.git/info/exclude`) and a `.husignore` leave out is left
//! out (the `ignore` crate, ripgrep's reader of those files; `.husignore` has the same
//! syntax), and so is `.git`. The archive is deterministic: entries sorted by path,
//! every header the same but for its path, size and executable bit (mode 0644 or 0755,
//! directories 0755, owner 0, mtime 0, no user names), zstd at a fixed level on one
//! thread; the same tree gives the same bytes, hence the same SHA-256 ([`Packed::hash`]).

use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::bounds::{check_path, human_bytes, Bounds, PathProblem};
use crate::manifest::{Manifest, ManifestError};

/// The zstd level of an archive: a level that packs a source tree about as small as
/// level 19 would, in a fraction of its time.
pub const ARCHIVE_LEVEL: i32 = 12;
/// zstd's window for an archive, as a power of two: 8 MiB. The unpacker refuses a
/// larger one, so that a stranger's archive cannot make it hold more.
pub const ARCHIVE_WINDOW_LOG: u32 = 23;
/// The ignore file of a bot's directory, beside `.gitignore`.
pub const HUSIGNORE: &str = ".husignore";

/// A packed bot: the archive's bytes, their SHA-256, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    /// The archive (tar + zstd).
    pub bytes: Vec<u8>,
    /// The SHA-256 of `bytes`, 64 lowercase hexadecimal digits: the archive's name in
    /// a store.
    pub hash: String,
    /// Its entries (files and directories).
    pub files: u64,
    /// The sum of its files' sizes.
    pub unpacked_bytes: u64,
}

/// Why a directory cannot be packed.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// A file or directory could not be read.
    #[error("{path}: {error}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why (in the message).
        error: io::Error,
    },
    /// The directory's ignore files could not be read or walked.
    #[error("cannot walk {0}")]
    Walk(String),
    /// The manifest is missing or wrong: the server would refuse the bot.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A symbolic link: the unpacker refuses every link, so it is refused here first.
    #[error("{path}: a symbolic link; an uploaded bot may hold none (copy the file, or leave it out in .husignore)")]
    Link {
        /// The link.
        path: PathBuf,
    },
    /// A device, fifo or socket.
    #[error("{path}: neither a file nor a directory (a device, fifo or socket); leave it out in .husignore")]
    Special {
        /// The path.
        path: PathBuf,
    },
    /// A path the unpacker would refuse.
    #[error("{path}: {problem}")]
    Path {
        /// The path.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// More files than the bound.
    #[error("more than {bound} files and directories, the bound of an upload; leave some out in .husignore")]
    TooManyFiles {
        /// The bound.
        bound: u64,
    },
    /// More bytes than the bound.
    #[error("its files hold more than {}, the bound of an upload; leave some out in .husignore", human_bytes(*bound))]
    TooBig {
        /// The bound.
        bound: u64,
    },
    /// The archive itself is larger than the bound.
    #[error("the archive has {size} bytes, more than {}, the bound of an upload", human_bytes(*bound))]
    ArchiveTooBig {
        /// Its size.
        size: u64,
        /// The bound.
        bound: u64,
    },
}

/// One entry to pack.
struct Item {
    rel: String,
    path: PathBuf,
    dir: bool,
    executable: bool,
    len: u64,
}

/// Packs the bot in `dir` (which must hold a valid `hus-bot.toml`) into an archive
/// within `bounds`.
pub fn pack(dir: &Path, bounds: &Bounds) -> Result<Packed, PackError> {
    Manifest::read(dir)?;
    let items = walk(dir, bounds)?;
    let mut tar = tar::Builder::new(Vec::new());
    tar.mode(tar::HeaderMode::Deterministic);
    let mut unpacked_bytes = 0;
    for item in &items {
        let io_error = |error| PackError::Io {
            path: item.path.clone(),
            error,
        };
        let mut header = tar::Header::new_gnu();
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        if item.dir {
            header.set_entry_type(tar::EntryType::Directory);
            header.set_mode(0o755);
            header.set_size(0);
            tar.append_data(&mut header, format!("{}/", item.rel), io::empty())
                .map_err(io_error)?;
        } else {
            let file = std::fs::File::open(&item.path).map_err(io_error)?;
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(if item.executable { 0o755 } else { 0o644 });
            header.set_size(item.len);
            // A file that grows while it is packed must not make the header lie.
            tar.append_data(&mut header, &item.rel, file.take(item.len))
                .map_err(io_error)?;
            unpacked_bytes += item.len;
        }
    }
    let tar = tar.into_inner().map_err(|error| PackError::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    let bytes = compress(&tar).map_err(|error| PackError::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    if bytes.len() as u64 > bounds.archive_bytes {
        return Err(PackError::ArchiveTooBig {
            size: bytes.len() as u64,
            bound: bounds.archive_bytes,
        });
    }
    Ok(Packed {
        hash: sha256_hex(&bytes),
        bytes,
        files: items.len() as u64,
        unpacked_bytes,
    })
}

/// zstd at [`ARCHIVE_LEVEL`] with a window of [`ARCHIVE_WINDOW_LOG`], on this thread.
pub(crate) fn compress(tar: &[u8]) -> io::Result<Vec<u8>> {
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), ARCHIVE_LEVEL)?;
    encoder.window_log(ARCHIVE_WINDOW_LOG)?;
    encoder.include_checksum(true)?;
    io::copy(&mut &tar[..], &mut encoder)?;
    encoder.finish()
}

/// The SHA-256 of `bytes` in lowercase hexadecimal.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The entries of `dir` that are packed, sorted by path, checked against `bounds`.
fn walk(dir: &Path, bounds: &Bounds) -> Result<Vec<Item>, PackError> {
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .parents(false)
        .add_custom_ignore_filename(HUSIGNORE)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut items = Vec::new();
    let mut unpacked = 0u64;
    for entry in walker {
        let entry = entry.map_err(|e| PackError::Walk(e.to_string()))?;
        if entry.depth() == 0 {
            continue;
        }
        let path = entry.path().to_path_buf();
        let meta = std::fs::symlink_metadata(&path).map_err(|error| PackError::Io {
            path: path.clone(),
            error,
        })?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(PackError::Link { path });
        }
        if !kind.is_file() && !kind.is_dir() {
            return Err(PackError::Special { path });
        }
        let rel = path.strip_prefix(dir).unwrap_or(&path);
        let rel = check_path(rel.as_os_str().as_encoded_bytes(), bounds).map_err(|problem| {
            PackError::Path {
                path: path.clone(),
                problem: describe(&problem, bounds),
            }
        })?;
        if items.len() as u64 >= bounds.files {
            return Err(PackError::TooManyFiles {
                bound: bounds.files,
            });
        }
        if kind.is_file() {
            unpacked += meta.len();
            if unpacked > bounds.unpacked_bytes {
                return Err(PackError::TooBig {
                    bound: bounds.unpacked_bytes,
                });
            }
        }
        items.push(Item {
            rel,
            path,
            dir: kind.is_dir(),
            executable: meta.permissions().mode() & 0o111 != 0,
            len: meta.len(),
        });
    }
    items.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(items)
}

/// A path problem in words, with its bound.
pub(crate) fn describe(problem: &PathProblem, bounds: &Bounds) -> String {
    match problem {
        PathProblem::Empty => "an empty path".to_string(),
        PathProblem::Absolute => {
            "an absolute path (it would be written outside the bot's directory)".to_string()
        }
        PathProblem::Parent => {
            "a path with `..` (it would be written outside the bot's directory)".to_string()
        }
        PathProblem::NotUtf8 => "a path that is not UTF-8".to_string(),
        PathProblem::TooDeep(n) => format!(
            "a path of {n} components, deeper than the bound of {}",
            bounds.depth
        ),
        PathProblem::TooLong(n) => format!(
            "a path of {n} bytes, longer than the bound of {}",
            bounds.path_bytes
        ),
        PathProblem::NameTooLong(n) => format!(
            "a name of {n} bytes in the path, longer than the {} a name may have",
            crate::bounds::MAX_NAME_BYTES
        ),
        PathProblem::Control => "a path with a control character".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        dir
    }

    fn names(packed: &Packed) -> Vec<String> {
        let decoder = zstd::stream::read::Decoder::new(&packed.bytes[..]).unwrap();
        let mut archive = tar::Archive::new(decoder);
        archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                format!(
                    "{} {:o} {} {}",
                    String::from_utf8_lossy(&e.path_bytes()),
                    h.mode().unwrap(),
                    h.mtime().unwrap(),
                    h.uid().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn ignored_files_are_left_out_and_the_rest_is_sorted_with_fixed_headers() {
        let dir = tree(&[
            ("hus-bot.toml", "language = \"python\"\n"),
            ("bot.py", "print()\n"),
            (".gitignore", "*.pyc\nbuild/\n"),
            (".husignore", "secret.txt\n"),
            ("secret.txt", "key\n"),
            ("a.pyc", "x"),
            ("build/out", "x"),
            ("lib/z.py", "z"),
            ("lib/a.py", "a"),
            (".git/config", "x"),
        ]);
        std::fs::set_permissions(
            dir.path().join("bot.py"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let packed = pack(dir.path(), &Bounds::default()).unwrap();
        assert_eq!(
            names(&packed),
            [
                ".gitignore 644 0 0",
                ".husignore 644 0 0",
                "bot.py 755 0 0",
                "hus-bot.toml 644 0 0",
                "lib/ 755 0 0",
                "lib/a.py 644 0 0",
                "lib/z.py 644 0 0",
            ]
        );
        assert_eq!(packed.files, 7);
        assert_eq!(packed.unpacked_bytes, 13 + 11 + 8 + 20 + 2);
        assert_eq!(packed.hash.len(), 64);
    }

    #[test]
    fn the_same_tree_gives_the_same_hash_whenever_and_wherever_it_is_packed() {
        let files = [
            ("hus-bot.toml", "run = \"./bot\"\n"),
            ("bot", "#!/bin/sh\n"),
            ("d/e/f", "x"),
        ];
        let one = tree(&files);
        let two = tree(&files);
        // Other times and another creation order.
        std::fs::File::open(two.path().join("bot"))
            .unwrap()
            .set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(12345))
            .unwrap();
        let a = pack(one.path(), &Bounds::default()).unwrap();
        let b = pack(two.path(), &Bounds::default()).unwrap();
        assert_eq!(a.hash, b.hash);
        assert_eq!(a.hash, sha256_hex(&a.bytes));
        std::fs::write(two.path().join("d/e/f"), "y").unwrap();
        assert_ne!(pack(two.path(), &Bounds::default()).unwrap().hash, a.hash);
    }

    #[test]
    fn what_the_server_would_refuse_is_refused_when_packing() {
        let dir = tree(&[
            ("hus-bot.toml", "run = \"./bot\"\n"),
            ("a", "1234"),
            ("b", "5678"),
        ]);
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let e = pack(dir.path(), &Bounds::default()).unwrap_err();
        assert!(
            matches!(&e, PackError::Link { path } if path.ends_with("link")),
            "{e}"
        );
        std::fs::remove_file(dir.path().join("link")).unwrap();
        let small = Bounds {
            unpacked_bytes: 20,
            ..Bounds::default()
        };
        assert!(matches!(
            pack(dir.path(), &small),
            Err(PackError::TooBig { bound: 20 })
        ));
        let few = Bounds {
            files: 2,
            ..Bounds::default()
        };
        assert!(matches!(
            pack(dir.path(), &few),
            Err(PackError::TooManyFiles { bound: 2 })
        ));
        let none = tree(&[("bot.py", "")]);
        assert!(matches!(
            pack(none.path(), &Bounds::default()),
            Err(PackError::Manifest(ManifestError::Missing))
        ));
    }
}
