//! The bounds of an uploaded bot's archive ([`Bounds`]) and the one check of a path in
//! it ([`check_path`]), shared by the packer (an author learns at once what the server
//! would refuse) and the unpacker (the server refuses it before writing anything).

/// The largest archive accepted by default (compressed, as sent): 16 MiB.
pub const DEFAULT_ARCHIVE_BYTES: u64 = 16 << 20;
/// The most bytes its files may hold once unpacked, by default: 256 MiB.
pub const DEFAULT_UNPACKED_BYTES: u64 = 256 << 20;
/// The most entries (files and directories) by default.
pub const DEFAULT_FILES: u64 = 10_000;
/// The most components a path may have by default (`a/b/c` has 3).
pub const DEFAULT_DEPTH: usize = 32;
/// The longest path by default, in bytes.
pub const DEFAULT_PATH_BYTES: usize = 1024;
/// The longest component of a path, in bytes (Linux's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// What an archive (and what a build leaves) may hold. Each bound has an error of its
/// own ([`crate::UnpackError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// The archive's own size, compressed, in bytes.
    pub archive_bytes: u64,
    /// The sum of its files' sizes, in bytes.
    pub unpacked_bytes: u64,
    /// Its entries, files and directories.
    pub files: u64,
    /// Components of a path.
    pub depth: usize,
    /// Bytes of a path.
    pub path_bytes: usize,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            archive_bytes: DEFAULT_ARCHIVE_BYTES,
            unpacked_bytes: DEFAULT_UNPACKED_BYTES,
            files: DEFAULT_FILES,
            depth: DEFAULT_DEPTH,
            path_bytes: DEFAULT_PATH_BYTES,
        }
    }
}

/// What is wrong with a path of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathProblem {
    /// Empty, or only `.`.
    Empty,
    /// Absolute (starts with `/`).
    Absolute,
    /// Has a `..` component.
    Parent,
    /// Not UTF-8.
    NotUtf8,
    /// More components than the bound.
    TooDeep(usize),
    /// More bytes than the bound.
    TooLong(usize),
    /// A component longer than [`MAX_NAME_BYTES`].
    NameTooLong(usize),
    /// A NUL or control character in a name.
    Control,
}

/// Checks a path of an archive (as its bytes) against `bounds` and returns it in its
/// plain form: components joined by `/`, without `.` components or empty ones.
pub fn check_path(bytes: &[u8], bounds: &Bounds) -> Result<String, PathProblem> {
    let text = std::str::from_utf8(bytes).map_err(|_| PathProblem::NotUtf8)?;
    if text.starts_with('/') {
        return Err(PathProblem::Absolute);
    }
    if text.len() > bounds.path_bytes {
        return Err(PathProblem::TooLong(text.len()));
    }
    let mut parts = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => continue,
            ".." => return Err(PathProblem::Parent),
            _ if part.len() > MAX_NAME_BYTES => return Err(PathProblem::NameTooLong(part.len())),
            _ if part.chars().any(char::is_control) => return Err(PathProblem::Control),
            _ => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(PathProblem::Empty);
    }
    if parts.len() > bounds.depth {
        return Err(PathProblem::TooDeep(parts.len()));
    }
    Ok(parts.join("/"))
}

/// `16 MiB`, `1 GiB`, `100 bytes`: a bound in words.
pub(crate) fn human_bytes(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_plain_relative_and_bounded() {
        let b = Bounds {
            depth: 3,
            path_bytes: 20,
            ..Bounds::default()
        };
        assert_eq!(check_path(b"./a//b/./c", &b), Ok("a/b/c".to_string()));
        assert_eq!(check_path(b"dir/", &b), Ok("dir".to_string()));
        assert_eq!(check_path(b"../x", &b), Err(PathProblem::Parent));
        assert_eq!(check_path(b"a/../../x", &b), Err(PathProblem::Parent));
        assert_eq!(check_path(b"/etc/passwd", &b), Err(PathProblem::Absolute));
        assert_eq!(check_path(b"./.", &b), Err(PathProblem::Empty));
        assert_eq!(check_path(b"a/b/c/d", &b), Err(PathProblem::TooDeep(4)));
        assert_eq!(check_path(&[b'x'; 21], &b), Err(PathProblem::TooLong(21)));
        assert_eq!(check_path(b"a\xff", &b), Err(PathProblem::NotUtf8));
        assert_eq!(check_path(b"a\nb", &b), Err(PathProblem::Control));
        let wide = Bounds::default();
        assert_eq!(
            check_path(&[b'n'; 256], &wide),
            Err(PathProblem::NameTooLong(256))
        );
    }
}
