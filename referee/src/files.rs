//! Files `hus` writes where others may write too (a league's `logs/`, a log directory,
//! a league's directory): every one is opened without following a symbolic link, so a
//! link planted there can never make `hus`, which may run as root, create or change a
//! file elsewhere. A directory named on the command line may itself be a link (the user
//! chose it); what `hus` finds or makes inside it may not.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// How [`create_file`] opens a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Create {
    /// A new file: an existing one (or a link of that name) is an error.
    New,
    /// Created if missing, else written at its end.
    Append,
    /// Created if missing, else kept as it is (for a lock file, read and written).
    Keep,
    /// Created if missing, else emptied.
    Replace,
}

/// Opens `path` for writing as `how` says, never following a symbolic link at its last
/// component: a link there, dangling or not, is refused with [`symlink_error`], and its
/// target is neither created nor changed. Files are created with mode 0644 (less the
/// umask) unless `mode` says otherwise.
pub fn create_file(path: &Path, how: Create, mode: Option<u32>) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(mode.unwrap_or(0o644));
    match how {
        Create::New => options.create_new(true),
        Create::Append => options.create(true).append(true),
        Create::Keep => options.read(true).create(true).truncate(false),
        Create::Replace => options.create(true).truncate(true),
    };
    options.open(path).map_err(|e| {
        // O_NOFOLLOW gives ELOOP on a link; O_EXCL gives EEXIST on any existing name,
        // a link included.
        let maybe_link = matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EEXIST));
        if maybe_link && is_symlink(path) {
            symlink_error(path)
        } else {
            e
        }
    })
}

/// Refuses `path` if it is a symbolic link (for a file another library opens, SQLite's,
/// or a directory `hus` makes inside a league's directory). A missing path is fine.
pub fn refuse_symlink(path: &Path) -> io::Result<()> {
    if is_symlink(path) {
        Err(symlink_error(path))
    } else {
        Ok(())
    }
}

/// Creates the directory `path` (and its parents) unless it exists, refusing it if it is
/// a symbolic link (its parents may be links: the caller named them).
pub fn create_dir(path: &Path) -> io::Result<()> {
    refuse_symlink(path)?;
    std::fs::create_dir_all(path)?;
    // A link made between the check and the creation is refused here.
    refuse_symlink(path)
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The error of a refused link: it names the path, says what it is and what to do. Its
/// kind is `Other`, never `AlreadyExists`: a caller that picks another name for a taken
/// one must stop at a link, not step past it.
pub fn symlink_error(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} is a symbolic link: hus never follows a link where it writes files (remove it)",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Every way of opening refuses a dangling link and one to an existing file, and
    /// leaves the target as it was.
    #[test]
    fn links_are_never_followed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let outside = dir.path().join("outside");
        let existing = dir.path().join("existing");
        std::fs::write(&existing, "kept").expect("write");
        let dangling = dir.path().join("dangling.jsonl");
        let pointing = dir.path().join("pointing.jsonl");
        std::os::unix::fs::symlink(&outside, &dangling).expect("symlink");
        std::os::unix::fs::symlink(&existing, &pointing).expect("symlink");
        for how in [Create::New, Create::Append, Create::Keep, Create::Replace] {
            for link in [&dangling, &pointing] {
                let error = create_file(link, how, None).expect_err("refused");
                assert_eq!(
                    error.to_string(),
                    format!(
                        "{} is a symbolic link: hus never follows a link where it writes files (remove it)",
                        link.display()
                    ),
                    "{how:?}"
                );
            }
        }
        assert!(!outside.exists());
        assert_eq!(std::fs::read_to_string(&existing).expect("read"), "kept");
        assert!(refuse_symlink(&dangling).is_err());
        assert!(refuse_symlink(&existing).is_ok());
        assert!(refuse_symlink(&dir.path().join("missing")).is_ok());
        let linked_dir = dir.path().join("logs");
        std::os::unix::fs::symlink(dir.path(), &linked_dir).expect("symlink");
        assert!(create_dir(&linked_dir).is_err());
    }

    #[test]
    fn plain_files_are_created_appended_and_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f");
        create_file(&path, Create::New, None)
            .and_then(|mut f| f.write_all(b"a"))
            .expect("new");
        assert_eq!(
            create_file(&path, Create::New, None)
                .map_err(|e| e.kind())
                .err(),
            Some(io::ErrorKind::AlreadyExists)
        );
        create_file(&path, Create::Append, None)
            .and_then(|mut f| f.write_all(b"b"))
            .expect("append");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "ab");
        create_file(&path, Create::Replace, None)
            .and_then(|mut f| f.write_all(b"c"))
            .expect("replace");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "c");
    }
}
