//! Files `hus` writes where others may write too (a league's `logs/`, a log directory,
//! a league's directory): no symbolic link is ever followed below the directory the user
//! named, neither at the last component nor at any directory on the way, so a link
//! planted there can never make `hus`, which may run as root, create, change, rename or
//! delete a file elsewhere. The directory named on the command line (`--log-dir`, a
//! league's directory) may itself be a link: the user chose it. What `hus` finds or
//! makes inside it may not be one; a link met is an error naming its path
//! ([`symlink_error`]).
//!
//! [`Dir`] is an open directory (an `O_DIRECTORY` descriptor). Every path given to its
//! methods is relative to it and walked one component at a time with `openat(2)` and
//! `O_NOFOLLOW | O_DIRECTORY`; files are created with `openat` and `O_NOFOLLOW` (and
//! `O_EXCL` where they must be new), directories with `mkdirat`, renamed with
//! `renameat` and removed with `unlinkat`, all relative to the directory found by the
//! walk. A directory held open stays the same directory: one replaced by a link after it
//! was opened is not followed either.
//!
//! The crates looked at: `cap-std` (Bytecode Alliance) confines paths beneath a
//! directory but follows a link that stays beneath it, which is exactly what must not
//! happen here, and brings a large layer of its own; `openat` (unmaintained since 2020)
//! and `openat2` (the syscall alone) do less than `rustix`; `nix` 0.29 (already used)
//! has `openat`, `mkdirat`, `renameat` and `unlinkat` but no `openat2`, and works on raw
//! descriptors; `rustix` (Bytecode Alliance, already in the build through `tempfile`)
//! has them all with owned descriptors, and `openat2`. `openat2` with
//! `RESOLVE_NO_SYMLINKS` would walk a path in one call, but it needs Linux 5.6 and is
//! refused by some container runtimes' seccomp filters, so it would need the walk as a
//! fallback: two code paths for one behaviour. The walk alone costs one `openat` per
//! component, two or three for every path `hus` writes, and works on every kernel.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// How [`Dir::create_file`] opens a file.
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

/// An open directory, and the path it was opened by (for messages). Paths given to its
/// methods are relative to it; none of their components may be a symbolic link, `..`
/// or absolute.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The flags every directory on a walk is opened with.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

impl Dir {
    /// Opens the directory `path` the user named (on the command line, or as a
    /// league's directory): a link there is followed, as the user chose it.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let fd = rustix::fs::openat(
            CWD,
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Creates the directory `path` the user named, and its parents, unless it exists,
    /// and opens it ([`Dir::open`]: links in `path` are followed).
    pub fn create(path: &Path) -> io::Result<Dir> {
        std::fs::create_dir_all(path)?;
        Dir::open(path)
    }

    /// The path this directory was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `rel` in this directory, for messages.
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }

    /// Opens the directory `rel`, never following a link.
    pub fn open_dir(&self, rel: &Path) -> io::Result<Dir> {
        self.walk(rel, false)
    }

    /// Creates the directory `rel` and those on its way unless they exist (mode 0755
    /// less the umask), never following a link, and opens it.
    pub fn create_dir(&self, rel: &Path) -> io::Result<Dir> {
        self.walk(rel, true)
    }

    /// Opens the file `rel` for writing as `how` says, never following a link: a link
    /// at its last component, dangling or not, or on its way is refused with
    /// [`symlink_error`], and its target is neither created nor changed. Files are
    /// created with mode 0644 (less the umask) unless `mode` says otherwise.
    pub fn create_file(&self, rel: &Path, how: Create, mode: Option<u32>) -> io::Result<File> {
        let (dir, name) = self.parent(rel)?;
        let mut flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        flags |= match how {
            Create::New => OFlags::CREATE | OFlags::EXCL,
            Create::Append => OFlags::CREATE | OFlags::APPEND,
            Create::Keep => OFlags::CREATE,
            Create::Replace => OFlags::CREATE | OFlags::TRUNC,
        };
        if how == Create::Keep {
            flags = (flags - OFlags::WRONLY) | OFlags::RDWR;
        }
        let mode = Mode::from_bits_truncate(mode.unwrap_or(0o644));
        rustix::fs::openat(dir.fd(), name, flags, mode)
            .map(File::from)
            // O_NOFOLLOW gives ELOOP on a link; O_EXCL gives EEXIST on any existing
            // name, a link included.
            .map_err(|e| dir.refine(name, e, &self.join(rel)))
    }

    /// Opens the file `rel` for reading, never following a link.
    pub fn open_file(&self, rel: &Path) -> io::Result<File> {
        let (dir, name) = self.parent(rel)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(dir.fd(), name, flags, Mode::empty())
            .map(File::from)
            .map_err(|e| dir.refine(name, e, &self.join(rel)))
    }

    /// Renames `from` to `to`, both relative to this directory (the names themselves
    /// are moved: a link at either is neither followed nor made to point elsewhere; a
    /// link on the way to either is refused).
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(from)?;
        let (to_dir, to_name) = self.parent(to)?;
        Ok(rustix::fs::renameat(
            from_dir.fd(),
            from_name,
            to_dir.fd(),
            to_name,
        )?)
    }

    /// Removes the file (or link: the name, never its target) `rel`; a link on its way
    /// is refused.
    pub fn remove_file(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        Ok(rustix::fs::unlinkat(dir.fd(), name, AtFlags::empty())?)
    }

    /// Removes the empty directory `rel`; a link on its way is refused.
    pub fn remove_dir(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        Ok(rustix::fs::unlinkat(dir.fd(), name, AtFlags::REMOVEDIR)?)
    }

    /// Whether `rel` is there (a link counts, not followed; a directory missing on the
    /// way is no error); a link on its way is refused.
    pub fn exists(&self, rel: &Path) -> io::Result<bool> {
        let (dir, name) = match self.parent(rel) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            other => other?,
        };
        match rustix::fs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The names of this directory's entries (`.` and `..` left out), in no order.
    pub fn names(&self) -> io::Result<Vec<std::ffi::OsString>> {
        use std::os::unix::ffi::OsStrExt;
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(names)
    }

    /// What `rel` itself is (a link's own, not followed); a link on its way is refused.
    pub fn entry(&self, rel: &Path) -> io::Result<Entry> {
        let (dir, name) = self.parent(rel)?;
        let st = rustix::fs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW)?;
        let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
        Ok(Entry {
            file: kind.is_file(),
            link: kind.is_symlink(),
            len: u64::try_from(st.st_size).unwrap_or(0),
        })
    }

    /// Writes the directory's entries to disk (after a rename, so that the rename
    /// itself survives a crash).
    pub fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }

    /// The directory that holds `rel` (this one for a plain name, else found by the
    /// walk) and `rel`'s last component.
    fn parent<'a>(&self, rel: &'a Path) -> io::Result<(Parent<'_>, &'a OsStr)> {
        let parts = parts(self, rel)?;
        let Some((name, way)) = parts.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: no file name", self.join(rel).display()),
            ));
        };
        if way.is_empty() {
            return Ok((Parent::This(self), name));
        }
        let mut dir = self.step(way[0], false)?;
        for part in &way[1..] {
            dir = dir.step(part, false)?;
        }
        Ok((Parent::Walked(dir), name))
    }

    /// Opens (and with `create`, makes first) each directory of `rel` in turn.
    fn walk(&self, rel: &Path, create: bool) -> io::Result<Dir> {
        let parts = parts(self, rel)?;
        let Some((first, rest)) = parts.split_first() else {
            return Dir::open_fd(self, Path::new("."));
        };
        let mut dir = self.step(first, create)?;
        for part in rest {
            dir = dir.step(part, create)?;
        }
        Ok(dir)
    }

    /// This directory again, through a new descriptor (for an empty relative path).
    fn open_fd(&self, dot: &Path) -> io::Result<Dir> {
        Ok(Dir {
            fd: rustix::fs::openat(&self.fd, dot, dir_flags(), Mode::empty())?,
            path: self.path.clone(),
        })
    }

    /// Opens the directory `name` in this one, never following a link; with `create`,
    /// makes it first if it is missing.
    fn step(&self, name: &OsStr, create: bool) -> io::Result<Dir> {
        let path = self.path.join(name);
        let open = || rustix::fs::openat(&self.fd, name, dir_flags(), Mode::empty());
        let fd = match open() {
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&self.fd, name, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(named(&path, e.into())),
                }
                open()
            }
            other => other,
        };
        match fd {
            Ok(fd) => Ok(Dir { fd, path }),
            Err(e) => Err(self.refine(name, e, &path)),
        }
    }

    /// The error of an `openat` of `name` here: a link's ([`symlink_error`]) when
    /// `name` is one, else `e` with `path` named.
    fn refine(&self, name: &OsStr, e: Errno, path: &Path) -> io::Error {
        // ELOOP: O_NOFOLLOW met a link; ENOTDIR: O_DIRECTORY met a link (or a file);
        // EEXIST: O_EXCL met any name, a link included.
        let maybe_link = matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::EXIST);
        let is_link = maybe_link
            && rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_symlink());
        if is_link {
            symlink_error(path)
        } else if e == Errno::EXIST || e == Errno::NOENT {
            // Kinds callers match on (a taken name, a missing file) stay as they are,
            // and so does the message, which callers complete with the path.
            e.into()
        } else {
            named(path, e.into())
        }
    }
}

/// Where a file goes that is opened later (a bot's stderr file, opened as the bot
/// starts): a path whose directory is taken as the user named it, or a name below an
/// open directory (a league's `logs/`), so that no link met on its way between now and
/// then is followed.
#[derive(Clone, Debug)]
pub enum FilePlace {
    /// A path whose directory the user named (`--log-dir D` gives `D/NAME`): opened by
    /// [`create_file`].
    Path(PathBuf),
    /// A name below an open directory: opened by [`Dir::create_file`].
    In(Arc<Dir>, PathBuf),
}

impl FilePlace {
    /// Its path, for messages.
    pub fn path(&self) -> PathBuf {
        match self {
            FilePlace::Path(path) => path.clone(),
            FilePlace::In(dir, name) => dir.join(name),
        }
    }

    /// Opens it for writing as `how` says, never following a link ([`Dir::create_file`]).
    pub fn create(&self, how: Create, mode: Option<u32>) -> io::Result<File> {
        match self {
            FilePlace::Path(path) => create_file(path, how, mode),
            FilePlace::In(dir, name) => dir.create_file(name, how, mode),
        }
    }
}

impl From<PathBuf> for FilePlace {
    fn from(path: PathBuf) -> FilePlace {
        FilePlace::Path(path)
    }
}

/// What a name in a directory is ([`Dir::entry`]), a link not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// A regular file.
    pub file: bool,
    /// A symbolic link.
    pub link: bool,
    /// Its size in bytes.
    pub len: u64,
}

/// The directory that holds a path: the one it is relative to, or one opened on the way.
enum Parent<'a> {
    This(&'a Dir),
    Walked(Dir),
}

impl Parent<'_> {
    fn dir(&self) -> &Dir {
        match self {
            Parent::This(d) => d,
            Parent::Walked(d) => d,
        }
    }

    fn fd(&self) -> impl AsFd + '_ {
        self.dir().fd.as_fd()
    }

    fn refine(&self, name: &OsStr, e: Errno, path: &Path) -> io::Error {
        self.dir().refine(name, e, path)
    }
}

/// The names of `rel`'s components (`.` left out); `..`, a root or a prefix is an
/// error: a path below a directory stays below it.
fn parts<'a>(dir: &Dir, rel: &'a Path) -> io::Result<Vec<&'a OsStr>> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(name) => parts.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is not a path below {}",
                        rel.display(),
                        dir.path.display()
                    ),
                ))
            }
        }
    }
    Ok(parts)
}

/// `e` with the path it is about in its message (its kind kept).
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The directory that holds `path`, opened as the user named it ([`Dir::open`]), and
/// `path`'s last component: for the paths of files named on the command line, or built
/// from a directory named there (`--log-dir D` gives `D/STEM.jsonl`).
pub fn open_parent(path: &Path) -> io::Result<(Dir, &Path)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: no file name", path.display()),
        )
    })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((Dir::open(parent)?, Path::new(name)))
}

/// Opens `path` for writing as `how` says ([`Dir::create_file`]), its directory as the
/// user named it (followed if it is a link) and its last component never followed.
/// For a file below a directory the user named, open that directory ([`Dir::open`])
/// and create the file through it.
pub fn create_file(path: &Path, how: Create, mode: Option<u32>) -> io::Result<File> {
    let (dir, name) = open_parent(path)?;
    dir.create_file(name, how, mode)
}

/// Refuses `path` if it is a symbolic link (for a file another library opens, SQLite's).
/// A missing path is fine.
pub fn refuse_symlink(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        Err(symlink_error(path))
    } else {
        Ok(())
    }
}

/// Creates the directory `path` (and its parents) unless it exists, refusing it if it is
/// a symbolic link (its parents may be links: the caller named them), and opens it.
pub fn create_dir(path: &Path) -> io::Result<Dir> {
    let (dir, name) = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => (Dir::create(p)?, path.file_name()),
        _ => (Dir::open(Path::new("."))?, Some(path.as_os_str())),
    };
    let name = name.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: no directory name", path.display()),
        )
    })?;
    let mut made = dir.create_dir(Path::new(name))?;
    made.path = path.to_path_buf();
    Ok(made)
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

    /// The message of a refused link at `path`.
    fn refused(path: &Path) -> String {
        format!(
            "{} is a symbolic link: hus never follows a link where it writes files (remove it)",
            path.display()
        )
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A link as a directory on the way (`logs/archive` to another directory) is refused
    /// by every operation, naming the link, and nothing is made, changed, renamed or
    /// removed where it points.
    #[test]
    fn a_link_in_the_middle_of_a_path_is_never_followed() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).expect("mkdir");
        std::fs::write(outside.join("kept"), "kept").expect("write");
        std::fs::create_dir(tmp.path().join("logs")).expect("mkdir");
        let link = tmp.path().join("logs/archive");
        std::os::unix::fs::symlink(&outside, &link).expect("symlink");
        let msg = |r: io::Result<()>| r.expect_err("refused").to_string();
        let new = Path::new("logs/archive/new");
        let kept = Path::new("logs/archive/kept");
        for how in [Create::New, Create::Append, Create::Keep, Create::Replace] {
            assert_eq!(
                msg(root.create_file(new, how, None).map(drop)),
                refused(&link)
            );
        }
        assert_eq!(msg(root.open_file(kept).map(drop)), refused(&link));
        assert_eq!(
            msg(root.create_dir(Path::new("logs/archive/sub")).map(drop)),
            refused(&link)
        );
        assert_eq!(
            msg(root.create_dir(Path::new("logs/archive")).map(drop)),
            refused(&link)
        );
        assert_eq!(
            msg(root.open_dir(Path::new("logs/archive")).map(drop)),
            refused(&link)
        );
        assert_eq!(
            msg(root.rename(kept, Path::new("logs/moved"))),
            refused(&link)
        );
        assert_eq!(msg(root.rename(Path::new("logs/x"), new)), refused(&link));
        assert_eq!(msg(root.remove_file(kept)), refused(&link));
        assert_eq!(msg(root.exists(kept).map(drop)), refused(&link));
        // Through the directory below the link, from a handle of `logs/`.
        let logs = root.open_dir(Path::new("logs")).expect("logs");
        assert_eq!(
            msg(logs
                .create_file(Path::new("archive/new"), Create::New, None)
                .map(drop)),
            refused(&link)
        );
        assert_eq!(names(&outside), ["kept"]);
        assert_eq!(
            std::fs::read_to_string(outside.join("kept")).expect("read"),
            "kept"
        );
        // `..` and absolute paths are refused too.
        for rel in ["../outside/new", "/tmp/new", "logs/../../new"] {
            assert_eq!(
                root.create_file(Path::new(rel), Create::New, None)
                    .map(drop)
                    .map_err(|e| e.kind())
                    .err(),
                Some(io::ErrorKind::InvalidInput),
                "{rel}"
            );
        }
    }

    /// A link as the last component of a directory's path, dangling or not, is refused
    /// by `create_dir` and `open_dir`; the removal of a link removes the link only.
    #[test]
    fn a_link_at_the_end_or_dangling_is_never_followed() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).expect("mkdir");
        let pointing = tmp.path().join("pointing");
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink(&outside, &pointing).expect("symlink");
        std::os::unix::fs::symlink(outside.join("missing"), &dangling).expect("symlink");
        for link in [&pointing, &dangling] {
            let rel = Path::new(link.file_name().expect("name"));
            let e = root.create_dir(rel).expect_err("refused");
            assert_eq!(e.to_string(), refused(link));
            let e = root.open_dir(rel).expect_err("refused");
            assert_eq!(e.to_string(), refused(link));
            let e = root.create_dir(&rel.join("sub")).expect_err("refused");
            assert_eq!(e.to_string(), refused(link));
            let e = root
                .create_file(&rel.join("file"), Create::New, None)
                .expect_err("refused");
            assert_eq!(e.to_string(), refused(link));
        }
        assert!(!outside.join("missing").exists());
        assert_eq!(names(&outside), Vec::<String>::new());
        root.remove_file(Path::new("pointing"))
            .expect("remove the link");
        assert!(outside.is_dir());
        assert_eq!(names(tmp.path()), ["dangling", "outside"]);
    }

    /// A directory held open is the directory it was: replaced by a link after it was
    /// opened, what is made through the handle (an archive, a bot's stderr file placed
    /// before the swap) goes to the directory (moved away), never where the link points;
    /// walked again from the root, the link is refused.
    #[test]
    fn a_directory_replaced_by_a_link_after_it_was_opened_is_not_followed() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let logs = root.create_dir(Path::new("logs/archive")).expect("made");
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).expect("mkdir");
        std::fs::rename(tmp.path().join("logs"), tmp.path().join("moved")).expect("rename");
        std::os::unix::fs::symlink(&outside, tmp.path().join("logs")).expect("symlink");
        logs.create_file(Path::new("a.tmp"), Create::New, None)
            .and_then(|mut f| f.write_all(b"archive"))
            .expect("create");
        logs.rename(Path::new("a.tmp"), Path::new("a.tar.zst"))
            .expect("rename");
        logs.sync().expect("sync");
        // A bot's stderr file, placed before the swap and opened after it.
        let place = FilePlace::In(Arc::new(logs), PathBuf::from("r1.a.stderr"));
        assert_eq!(place.path(), tmp.path().join("logs/archive/r1.a.stderr"));
        place.create(Create::Append, None).expect("stderr");
        assert_eq!(names(&outside), Vec::<String>::new());
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("moved/archive/a.tar.zst")).expect("read"),
            "archive"
        );
        assert_eq!(
            names(&tmp.path().join("moved/archive")),
            ["a.tar.zst", "r1.a.stderr"]
        );
        let e = root
            .create_file(Path::new("logs/archive/b"), Create::New, None)
            .expect_err("refused");
        assert_eq!(e.to_string(), refused(&tmp.path().join("logs")));
        // The root the user named may be a link.
        let named = Dir::open(&tmp.path().join("logs")).expect("a named link is followed");
        named
            .create_file(Path::new("chosen"), Create::New, None)
            .expect("create");
        assert_eq!(names(&outside), ["chosen"]);
    }

    /// Directories are made on the way, files opened, renamed, found and removed.
    #[test]
    fn directories_and_files_are_made_renamed_and_removed_below_a_directory() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let dir = root.create_dir(Path::new("a/b/c")).expect("made");
        assert_eq!(dir.path(), tmp.path().join("a/b/c"));
        root.create_file(Path::new("a/b/c/f"), Create::New, None)
            .and_then(|mut f| f.write_all(b"x"))
            .expect("create");
        assert!(root.exists(Path::new("a/b/c/f")).expect("exists"));
        assert!(!root.exists(Path::new("a/missing/f")).expect("exists"));
        root.rename(Path::new("a/b/c/f"), Path::new("a/g"))
            .expect("rename");
        assert!(!root.exists(Path::new("a/b/c/f")).expect("exists"));
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut root.open_file(Path::new("a/g")).expect("open"),
            &mut text,
        )
        .expect("read");
        assert_eq!(text, "x");
        root.remove_file(Path::new("a/g")).expect("remove");
        root.remove_dir(Path::new("a/b/c")).expect("remove dir");
        assert_eq!(names(&tmp.path().join("a")), ["b"]);
        assert_eq!(
            root.remove_file(Path::new("a/g")).map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound)
        );
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
