//! Built versions kept by hash ([`BuildCache`]): a server builds each version it
//! receives here, and a worker on another machine builds here a version it fetched by
//! its hash from the store, so the same hash plays the same code everywhere. A version
//! is unpacked and built once per machine; a second request for its hash finds the
//! tree built before.
//!
//! Why each machine builds, rather than the server sending its built tree: the archive
//! is what the store keeps and what its hash names; a built tree depends on the
//! machine's toolchain and paths (a build may write its own absolute path into what it
//! builds, and the tree lives at the path it was built at), and it is larger. Building
//! from the same archive with the same manifest is what an author expects of their
//! code on any machine of the league.
//!
//! Layout, in the cache's directory: one directory per version built
//! ([`crate::new_version_dir`], never reused), and beside it `HASH.built`, a small JSON
//! file written (by a rename) only once the build succeeded: the version directory's
//! name and the commands read from its manifest. A failed build's directory is
//! removed at once. A version no longer played is taken out ([`BuildCache::take_out`]:
//! its note removed, its directory renamed `DIR.gone`, then removed): its disk is
//! given back, and it is built again from its archive if it is ever wanted again.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use referee::{BotSpec, Create, Dir, Limits, Sandbox};
use serde::{Deserialize, Serialize};

use crate::bounds::Bounds;
use crate::build::{build, BuildFailure, BuildLimits, BuildReport, Built, TREE};
use crate::manifest::Commands;
use crate::unpack::{unpack_archive, UnpackError, Unpacked};

/// The suffix of a built version's note in the cache's directory.
const BUILT_SUFFIX: &str = ".built";
/// The most bytes a note is read to.
const MAX_NOTE_BYTES: u64 = 64 << 10;
/// The suffix of a version directory taken out of the cache, being removed.
const GONE_SUFFIX: &str = ".gone";

/// What `HASH.built` says.
#[derive(Serialize, Deserialize)]
struct Note {
    /// The version directory's name in the cache.
    dir: String,
    /// The build command, if any.
    build: Option<String>,
    /// The run command.
    run: String,
    /// Entries of the built tree.
    files: u64,
    /// Bytes of the built tree.
    bytes: u64,
}

/// Whether `hash` is a SHA-256 as the store writes it: 64 lowercase hexadecimal digits.
pub fn is_sha256(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A directory of built versions, by hash.
pub struct BuildCache {
    dir: Dir,
}

impl BuildCache {
    /// Opens (or makes) the cache at `path`. The sandbox's user must be able to pass
    /// through it to the trees (mode 0755; every directory above it lets it through:
    /// the build checks that and says which one does not).
    pub fn open(path: &Path) -> io::Result<BuildCache> {
        let dir = referee::create_dir(path)?;
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
        Ok(BuildCache { dir })
    }

    /// The cache's directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The version whose archive's SHA-256 is `hash`, if this cache built it and its
    /// tree is still there.
    pub fn find(&self, hash: &str) -> Option<Built> {
        if !is_sha256(hash) {
            return None;
        }
        let mut text = String::new();
        self.dir
            .open_file(Path::new(&format!("{hash}{BUILT_SUFFIX}")))
            .ok()?
            .take(MAX_NOTE_BYTES)
            .read_to_string(&mut text)
            .ok()?;
        let note: Note = serde_json::from_str(&text).ok()?;
        if note.dir.contains('/') || note.dir.starts_with('.') {
            return None;
        }
        let tree = self.dir.join(&note.dir).join(TREE);
        if !tree.is_dir() {
            return None;
        }
        Some(Built {
            tree,
            commands: Commands {
                build: note.build,
                run: note.run,
            },
            unpacked: Unpacked {
                files: note.files,
                bytes: note.bytes,
            },
        })
    }

    /// Unpacks `archive` (every bound of `bounds` checked before anything is written)
    /// into a new version directory and builds it there within `limits`. A built
    /// version is noted under its hash ([`BuildCache::find`]); a failed build's
    /// directory is removed. An archive refused by its bounds is the error; a build
    /// that failed is a report whose `result` says why.
    pub async fn build(
        &self,
        archive: &[u8],
        bounds: &Bounds,
        limits: &BuildLimits,
    ) -> Result<BuildReport, UnpackError> {
        let version = unpack_archive(archive, &self.dir, bounds)?;
        let report = build(&version.dir, limits).await;
        let name = version
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match &report.result {
            Ok(built) => {
                let note = Note {
                    dir: name,
                    build: built.commands.build.clone(),
                    run: built.commands.run.clone(),
                    files: built.unpacked.files,
                    bytes: built.unpacked.bytes,
                };
                if let Err(error) = self.note(&version.hash, &note) {
                    // The version is built and plays; only a later `find` misses it.
                    tracing::warn!("cannot note the built version {}: {error}", version.hash);
                }
            }
            Err(_) => {
                let _ = std::fs::remove_dir_all(&version.dir);
            }
        }
        Ok(report)
    }

    /// Removes a version built here that will never play (its check refused it): its
    /// directory, and its note if the note names that directory. Its disk is given back.
    pub fn forget(&self, hash: &str, built: &Built) -> io::Result<()> {
        let Some(version_dir) = built.tree.parent() else {
            return Ok(());
        };
        if self.find(hash).is_some_and(|b| b.tree == built.tree) {
            self.dir
                .remove_file(Path::new(&format!("{hash}{BUILT_SUFFIX}")))?;
        }
        if version_dir.parent() == Some(self.dir.path()) {
            std::fs::remove_dir_all(version_dir)?;
        }
        Ok(())
    }

    /// The hashes of the versions built here (each with its note), in no order.
    pub fn built_hashes(&self) -> io::Result<Vec<String>> {
        let mut hashes = Vec::new();
        for entry in std::fs::read_dir(self.dir.path())? {
            let name = entry?.file_name();
            if let Some(hash) = name.to_str().and_then(|n| n.strip_suffix(BUILT_SUFFIX)) {
                if is_sha256(hash) {
                    hashes.push(hash.to_string());
                }
            }
        }
        Ok(hashes)
    }

    /// Takes the version built from `hash` out of the cache, in two quick steps: its
    /// note goes (a later [`BuildCache::find`] misses it, and the version is built
    /// again when it is wanted again), then its directory is renamed aside
    /// (`DIR.gone`). The directory set aside is returned, for the caller to remove
    /// with [`BuildCache::remove_gone`] at leisure; `None` when nothing was built
    /// from `hash` here.
    pub fn take_out(&self, hash: &str) -> io::Result<Option<PathBuf>> {
        let Some(built) = self.find(hash) else {
            return Ok(None);
        };
        self.dir
            .remove_file(Path::new(&format!("{hash}{BUILT_SUFFIX}")))?;
        let Some(version_dir) = built.tree.parent() else {
            return Ok(None);
        };
        let Some(name) = version_dir.file_name().and_then(|n| n.to_str()) else {
            return Ok(None);
        };
        let gone = format!("{name}{GONE_SUFFIX}");
        self.dir.rename(Path::new(name), Path::new(&gone))?;
        Ok(Some(self.dir.join(&gone)))
    }

    /// Removes the directories set aside by [`BuildCache::take_out`], those of this
    /// call's caller and any an earlier process left (cut off mid-removal). Returns
    /// how many went.
    pub fn remove_gone(&self) -> io::Result<usize> {
        let mut removed = 0;
        for entry in std::fs::read_dir(self.dir.path())? {
            let entry = entry?;
            let name = entry.file_name();
            if name.to_str().is_some_and(|n| n.ends_with(GONE_SUFFIX))
                && entry.file_type()?.is_dir()
            {
                std::fs::remove_dir_all(entry.path())?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn note(&self, hash: &str, note: &Note) -> io::Result<()> {
        let text = serde_json::to_string(note).map_err(io::Error::other)?;
        let tmp = format!("{hash}{BUILT_SUFFIX}.{}.new", std::process::id());
        let mut file = self
            .dir
            .create_file(Path::new(&tmp), Create::Replace, Some(0o644))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        self.dir
            .rename(Path::new(&tmp), Path::new(&format!("{hash}{BUILT_SUFFIX}")))
    }
}

/// Where an uploaded bot's program named without a path is looked for, in order: the
/// system's directories, which the sandbox shows.
pub const SYSTEM_PATH: [&str; 3] = ["/usr/local/bin", "/usr/bin", "/bin"];

/// How a built version plays: its run command in the sandbox, as the sandbox's
/// unprivileged user when `hus` is root, its tree its working directory, read-only.
/// An uploaded bot always plays in the sandbox, whatever the league file says of its
/// own bots.
pub fn sandboxed(built: &Built, user: Option<&str>) -> Result<(BotSpec, Limits), BuildFailure> {
    let mut spec = built.run_spec()?;
    // A program named without a path is the system's, as the sandbox's user sees it:
    // found in SYSTEM_PATH, whatever the server's own PATH holds (a toolchain in
    // root's home would not be there inside).
    if !spec.argv[0].contains('/') {
        if let Some(found) = SYSTEM_PATH
            .iter()
            .map(|dir| Path::new(dir).join(&spec.argv[0]))
            .find(|p| p.is_file())
        {
            spec.argv[0] = found.display().to_string();
        }
    }
    let mut sandbox = Sandbox::new(&built.tree)?;
    if let Some(user) = user {
        sandbox = sandbox.user(user)?;
    }
    let limits = Limits {
        cwd: Some(built.tree.clone()),
        sandbox: Some(sandbox),
        ..Limits::default()
    };
    Ok((spec, limits))
}
