//! `upload`: bots by upload. An author's directory is packed into an archive
//! ([`pack`]), a tar compressed with zstd whose SHA-256 names it; a server unpacks a
//! stranger's archive with every bound checked before anything is written
//! ([`unpack_archive`] into a [`new_version_dir`]); its manifest `hus-bot.toml`
//! ([`Manifest`]) says how to build and run it; [`build`] builds it in the sandbox.
//! docs/upload.md is the authors' and organisers' guide; docs/security.md lists the
//! threats and their tests.
//!
//! ```
//! use upload::{check_path, Bounds, Manifest, PathProblem};
//! let manifest = Manifest::parse("language = \"python\"\nmain = \"my_bot.py\"\n").unwrap();
//! assert_eq!(manifest.main.as_deref(), Some("my_bot.py"));
//! // A path that would leave the bot's directory is refused before anything is written.
//! assert_eq!(check_path(b"../../etc/cron.d/x", &Bounds::default()), Err(PathProblem::Parent));
//! ```

#![deny(missing_docs)]

mod bounds;
mod build;
mod cache;
mod manifest;
mod pack;
mod submit;
mod unpack;

pub use bounds::{
    check_path, Bounds, PathProblem, DEFAULT_ARCHIVE_BYTES, DEFAULT_DEPTH, DEFAULT_FILES,
    DEFAULT_PATH_BYTES, DEFAULT_UNPACKED_BYTES, MAX_NAME_BYTES,
};
pub use build::{
    build, BuildFailure, BuildLimits, BuildReport, Built, DEFAULT_BUILD_DISK, DEFAULT_BUILD_MEMORY,
    DEFAULT_BUILD_OUTPUT, DEFAULT_BUILD_PROCESSES, DEFAULT_BUILD_TIME, SCRIPT, TREE,
};
pub use cache::{is_sha256, sandboxed, BuildCache, SYSTEM_PATH};
pub use manifest::{
    Commands, Language, Manifest, ManifestError, MANIFEST_NAME, MAX_MANIFEST_BYTES,
};
pub use pack::{pack, sha256_hex, PackError, Packed, ARCHIVE_LEVEL, ARCHIVE_WINDOW_LOG, HUSIGNORE};
pub use submit::{run_submit, SubmitArgs, TOKEN_ENV};
pub use unpack::{
    check_archive, new_version_dir, unpack_archive, unpack_tar_file, UnpackError, Unpacked,
    Version, SOURCES,
};
