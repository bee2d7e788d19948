//! One runner per league directory: an advisory lock (`flock`) on `league.lock`, which
//! also describes its holder (pid, host, start, command) for the message a second
//! runner gets. The kernel drops the lock when its process dies, however it dies, so a
//! lock file left by a killed runner is not a lock.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::error::{Error, Result};

/// The lock file's name in the league's directory.
pub const LOCK_FILE: &str = "league.lock";

/// Held while a league runs; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DirLock {
    _lock: Flock<File>,
}

impl DirLock {
    /// Takes the lock of `dir`, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let path = dir.join(LOCK_FILE);
        let io = |what: &'static str, path: &Path| {
            let path: PathBuf = path.to_path_buf();
            move |error: std::io::Error| Error::Io { what, path, error }
        };
        // Not truncated on open: if another runner holds it, its description must stay.
        let file = referee::create_file(&path, referee::Create::Keep, None)
            .map_err(io("cannot open the lock file", &path))?;
        let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => lock,
            Err((mut file, Errno::EWOULDBLOCK)) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(Error::Locked {
                    dir: dir.to_path_buf(),
                    holder: if holder.is_empty() {
                        "it has not described itself yet".to_string()
                    } else {
                        holder.to_string()
                    },
                });
            }
            Err((_, errno)) => {
                return Err(Error::Io {
                    what: "cannot lock",
                    path,
                    error: errno.into(),
                })
            }
        };
        let description = describe_self();
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(description.as_bytes())?;
            file.flush()
        };
        write(&mut lock).map_err(io("cannot write the lock file", &path))?;
        Ok(DirLock { _lock: lock })
    }
}

/// `pid 1234 on host box, started 2026-01-01T10:00:00Z: hus league leagues/sample.toml`.
fn describe_self() -> String {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "unknown".to_string());
    let command: Vec<String> = std::env::args().collect();
    let command = command
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                Path::new(a)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| a.clone())
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "pid {} on host {host}, started {}: {command}\n",
        std::process::id(),
        referee::now_rfc3339()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_first_and_a_dropped_one_is_free() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = DirLock::acquire(dir.path()).expect("first lock");
        // flock locks belong to the open file description, so a second open in the
        // same process conflicts just as another process would.
        let second = DirLock::acquire(dir.path());
        let message = second.map(|_| ()).map_err(|e| e.to_string()).err();
        let expected_start = format!(
            "{} is in use by another hus league (pid {} on host ",
            dir.path().display(),
            std::process::id()
        );
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.starts_with(&expected_start)),
            "{message:?}"
        );
        drop(first);
        assert!(DirLock::acquire(dir.path()).is_ok());
    }

    #[test]
    fn a_stale_lock_file_is_not_a_lock() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join(LOCK_FILE),
            "pid 1 on host gone, started long ago: hus league x.toml\n",
        )
        .expect("write");
        let lock = DirLock::acquire(dir.path());
        assert!(lock.is_ok());
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).expect("read");
        assert!(
            text.starts_with(&format!("pid {} on host", std::process::id())),
            "{text}"
        );
    }
}
