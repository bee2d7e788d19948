//! Uploaded versions made playable on this machine (docs/upload.md, "Across
//! machines"): from a version's row in the store to the [`BotConfig`] that plays it,
//! one code path for the match server (a version entered again at its restart, or made
//! active again) and for every worker (a set that names a version it has not built).
//!
//! The way is always the same ([`prepare`]): only a version that passed its checks
//! (`active` or `retired`) is run; this machine's [`upload::BuildCache`] is looked in
//! first, by the archive's hash ([`built`]); else the archive is fetched from the store
//! by its hash, its SHA-256 checked against the row's (a store that gives other bytes
//! than the hash names is refused, so the same hash plays the same code everywhere),
//! and it is unpacked and built in this machine's own sandbox, into the cache. The bot
//! then plays in the sandbox ([`bot_config`], [`upload::sandboxed`]).
//!
//! Why each machine builds from the archive rather than receiving the server's built
//! tree: see the module comment of `upload/src/cache.rs` (the archive is what the
//! store keeps and what the hash names; a built tree depends on the machine's
//! toolchain and paths, and is larger).
//!
//! [`LocalBuilds`] is a worker's: one cache, its settings, and one build at a time per
//! hash, so that sets claimed at once of the same version build it once, and workers
//! sharing a machine's cache too (a lock file per hash, `HASH.lock`, beside its note).

use std::collections::HashMap;
use std::fs::File;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use nix::fcntl::{Flock, FlockArg};

use crate::file::{BotConfig, Transport};
use crate::store::{StoreError, VersionRow, VersionState};

/// The suffix of a hash's lock file in the cache's directory.
const LOCK_SUFFIX: &str = ".lock";

/// Why a version cannot be played on this machine: one variant per cause.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The version never passed its checks (or is still on its way): it is never run.
    #[error(
        "{name} is {state}: only a version that passed its checks (active or retired) is played"
    )]
    NotPlayable {
        /// The version's league name (`NAME.vN`).
        name: String,
        /// Its state.
        state: VersionState,
    },
    /// The store has no such version.
    #[error("the store has no version {name}")]
    NoVersion {
        /// The league name asked for.
        name: String,
    },
    /// The store could not be read (out of reach, or another error): try again later.
    #[error("cannot read {what} from the store: {error}")]
    Store {
        /// What was being read.
        what: String,
        /// The store's error.
        error: StoreError,
    },
    /// The store has no archive of the version's hash.
    #[error("the store has no archive {hash}")]
    NoArchive {
        /// The row's hash.
        hash: String,
    },
    /// The bytes the store gave are not the archive the row's hash names.
    #[error("the archive the store gave for {hash} has the SHA-256 {got}: refused, not built")]
    WrongHash {
        /// The row's hash.
        hash: String,
        /// The SHA-256 of the bytes received.
        got: String,
    },
    /// This machine's build cache cannot be opened.
    #[error("cannot open the uploads' directory {path}: {error}")]
    Cache {
        /// The cache's directory.
        path: PathBuf,
        /// The error.
        error: String,
    },
    /// The archive was refused by its bounds (nothing written).
    #[error("the archive was refused: {0}")]
    Refused(upload::UnpackError),
    /// Its build failed here, or was stopped at a bound.
    #[error("its build failed on this machine: {failure}")]
    BuildFailed {
        /// The cause.
        failure: upload::BuildFailure,
        /// The build's output.
        output: String,
    },
    /// The built version's run command cannot be made into a sandboxed bot.
    #[error("the built version cannot be run: {0}")]
    CannotRun(upload::BuildFailure),
}

impl PrepareError {
    /// Whether the cause may pass (the store could not be read): the version is to be
    /// tried again later, not left for good.
    pub fn may_pass(&self) -> bool {
        matches!(self, PrepareError::Store { .. })
    }
}

/// How versions are built and played on this machine.
#[derive(Clone, Debug, Default)]
pub struct BuildSettings {
    /// The bounds of an archive.
    pub bounds: upload::Bounds,
    /// The bounds of a build (its `user` the sandbox's user of the build).
    pub limits: upload::BuildLimits,
    /// The sandbox's user of the bots when `hus` is root (`None`: the sandbox's
    /// default, `nobody`).
    pub user: Option<String>,
}

impl BuildSettings {
    /// The defaults of `hus serve`'s builds, with `user` as the sandbox's user of the
    /// builds and of the bots.
    pub fn with_user(user: Option<String>) -> BuildSettings {
        BuildSettings {
            bounds: upload::Bounds::default(),
            limits: upload::BuildLimits {
                user: user.clone(),
                ..upload::BuildLimits::default()
            },
            user,
        }
    }
}

/// How the built version `row` plays: its run command in the sandbox (as `user` when
/// `hus` is root), its tree its directory, read-only, under its league name, its sets'
/// logs naming the version and its archive's hash.
pub fn bot_config(
    row: &VersionRow,
    built: &upload::Built,
    user: Option<&str>,
) -> Result<BotConfig, PrepareError> {
    let (spec, limits) = upload::sandboxed(built, user).map_err(PrepareError::CannotRun)?;
    Ok(BotConfig {
        name: row.league_name(),
        transport: Transport::Process { spec, limits },
        version: Some(referee::UploadedVersion {
            bot: row.bot.clone(),
            number: row.number,
            sha256: row.hash.clone(),
        }),
    })
}

/// The version `row` built on this machine: from `cache`, else its archive fetched by
/// its hash (`fetch`), its SHA-256 checked, and built into `cache` within `settings`.
/// The caller judges the version's state (see [`prepare`]).
pub async fn built<F, Fut>(
    cache: &upload::BuildCache,
    settings: &BuildSettings,
    row: &VersionRow,
    fetch: F,
) -> Result<upload::Built, PrepareError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<Option<Vec<u8>>, StoreError>>,
{
    if let Some(built) = cache.find(&row.hash) {
        return Ok(built);
    }
    let archive = fetch(row.hash.clone())
        .await
        .map_err(|error| PrepareError::Store {
            what: format!("the archive {}", row.hash),
            error,
        })?
        .ok_or_else(|| PrepareError::NoArchive {
            hash: row.hash.clone(),
        })?;
    let got = upload::sha256_hex(&archive);
    if got != row.hash {
        return Err(PrepareError::WrongHash {
            hash: row.hash.clone(),
            got,
        });
    }
    let report = cache
        .build(&archive, &settings.bounds, &settings.limits)
        .await
        .map_err(PrepareError::Refused)?;
    let output = report.output;
    report
        .result
        .map_err(|failure| PrepareError::BuildFailed { failure, output })
}

/// The one way from a version's row to the bot that plays it on this machine: a
/// version that passed its checks (active or retired), built here ([`built`]: from
/// the cache, else fetched by hash, checked and built in the sandbox) and played in
/// the sandbox ([`bot_config`]).
pub async fn prepare<F, Fut>(
    cache: &upload::BuildCache,
    settings: &BuildSettings,
    row: &VersionRow,
    fetch: F,
) -> Result<BotConfig, PrepareError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<Option<Vec<u8>>, StoreError>>,
{
    if !row.state.has_played() {
        return Err(PrepareError::NotPlayable {
            name: row.league_name(),
            state: row.state,
        });
    }
    let built = built(cache, settings, row, fetch).await?;
    bot_config(row, &built, settings.user.as_deref())
}

/// The default directory of a machine's built versions: `$XDG_CACHE_HOME/hus/uploads`,
/// else `~/.cache/hus/uploads`; `None` when neither variable is set.
pub fn default_uploads_dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| {
        let p = PathBuf::from(v);
        p.is_absolute().then_some(p)
    };
    std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".cache"))
        })
        .map(|c| c.join("hus").join("uploads"))
}

/// A worker's builds: its cache (opened at the first version it needs, so that a
/// worker of a league without uploads makes no directory), its settings, and one
/// build at a time per hash.
pub struct LocalBuilds {
    path: PathBuf,
    settings: BuildSettings,
    cache: OnceLock<Result<upload::BuildCache, String>>,
    /// A lock per hash being prepared: a second version of the same hash waits for the
    /// first, then finds it in the cache.
    hashes: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl LocalBuilds {
    /// The builds of a machine whose cache is at `path`.
    pub fn new(path: PathBuf, settings: BuildSettings) -> LocalBuilds {
        LocalBuilds {
            path,
            settings,
            cache: OnceLock::new(),
            hashes: Mutex::new(HashMap::new()),
        }
    }

    /// The cache's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn cache(&self) -> Result<&upload::BuildCache, PrepareError> {
        self.cache
            .get_or_init(|| upload::BuildCache::open(&self.path).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|error| PrepareError::Cache {
                path: self.path.clone(),
                error: error.clone(),
            })
    }

    /// [`prepare`] on this machine's cache; two calls for the same hash at once build
    /// it once (the second waits, then finds it built), in this process or in another
    /// sharing the cache (`HASH.lock`, an advisory lock the kernel drops with its
    /// process, however it ends).
    pub async fn prepare<F, Fut>(
        &self,
        row: &VersionRow,
        fetch: F,
    ) -> Result<BotConfig, PrepareError>
    where
        F: FnOnce(String) -> Fut,
        Fut: Future<Output = Result<Option<Vec<u8>>, StoreError>>,
    {
        let cache = self.cache()?;
        let lock = {
            let mut hashes = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
            hashes.entry(row.hash.clone()).or_default().clone()
        };
        let result = {
            let _one = lock.lock().await;
            let _machine = if row.state.has_played()
                && upload::is_sha256(&row.hash)
                && cache.find(&row.hash).is_none()
            {
                Some(self.machine_lock(&row.hash).await?)
            } else {
                None
            };
            prepare(cache, &self.settings, row, fetch).await
        };
        let mut hashes = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
        if hashes
            .get(&row.hash)
            .is_some_and(|l| Arc::strong_count(l) <= 2)
        {
            // No one else waits on it (the map's and ours are the only holders).
            hashes.remove(&row.hash);
        }
        result
    }

    /// The lock of `hash` among the processes sharing this cache, waited for off the
    /// runtime (another process's build may take minutes). `hash` is a SHA-256: a
    /// plain file name.
    async fn machine_lock(&self, hash: &str) -> Result<Flock<File>, PrepareError> {
        let path = self.path.join(format!("{hash}{LOCK_SUFFIX}"));
        let failed = |error: String| PrepareError::Cache {
            path: path.clone(),
            error,
        };
        let file = referee::create_file(&path, referee::Create::Keep, Some(0o600))
            .map_err(|e| failed(e.to_string()))?;
        tokio::task::spawn_blocking(move || Flock::lock(file, FlockArg::LockExclusive))
            .await
            .map_err(|e| failed(e.to_string()))?
            .map_err(|(_, errno)| failed(format!("cannot lock it: {errno}")))
    }
}
