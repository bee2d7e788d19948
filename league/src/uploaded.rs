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
//!
//! A cache does not grow with the league's history: [`Pruner`] takes out the trees no
//! version needs any more (a retired version whose sets have ended, a version the gate
//! refused), on the server and on every worker, the same way. A tree is needed while a
//! version of its hash is on its way or active, while a running set (anyone's) plays
//! a version of its hash, and while this process holds a [`Pin`] on it (a test asked
//! for); it goes at the second look that finds it unneeded, a period apart.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use nix::fcntl::{Flock, FlockArg};

use crate::file::{BotConfig, Transport};
use crate::store::{parse_version_name, Reads, StoreError, VersionRow, VersionState, Versions};

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
    /// The versions being prepared: not pruned meanwhile.
    pins: Pins,
}

impl LocalBuilds {
    /// The builds of a machine whose cache is at `path`.
    pub fn new(path: PathBuf, settings: BuildSettings) -> LocalBuilds {
        LocalBuilds {
            path,
            settings,
            cache: OnceLock::new(),
            hashes: Mutex::new(HashMap::new()),
            pins: Pins::default(),
        }
    }

    /// The cache's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Pins the tree of `hash` in this machine's cache until the pin is dropped (a
    /// gate batch in play: no prune takes it out meanwhile).
    pub fn pin(&self, hash: &str) -> Pin {
        self.pins.pin(hash)
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
            let _pin = self.pins.pin(&row.hash);
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

    /// The hashes built in this machine's cache; none if this worker never opened it
    /// (it built nothing). Blocks.
    pub fn built_hashes(&self) -> Result<Vec<String>, String> {
        match self.cache.get() {
            Some(Ok(cache)) => cache
                .built_hashes()
                .map_err(|e| format!("cannot list {}: {e}", self.path.display())),
            _ => Ok(Vec::new()),
        }
    }

    /// One round of `pruner` on this machine's cache ([`Pruner::round`]): `listed`
    /// from [`LocalBuilds::built_hashes`], `needed` read after it. Blocks.
    pub fn prune(
        &self,
        pruner: &mut Pruner,
        listed: &[String],
        needed: &HashSet<String>,
    ) -> Pruned {
        match self.cache.get() {
            Some(Ok(cache)) => pruner.round(cache, listed, needed, &self.pins),
            _ => Pruned::default(),
        }
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

/// The states whose versions' trees are kept: on their way, or playing.
const KEPT_STATES: [VersionState; 4] = [
    VersionState::Queued,
    VersionState::Building,
    VersionState::Checking,
    VersionState::Active,
];

/// The most running sets read to learn which versions they play: more than any league
/// runs at once.
const RUNNING_READ: usize = 100_000;

/// The hashes whose built trees are needed anywhere: those of the versions on their way
/// or active, and of every version a running set plays (a retired version's last sets
/// still run from its tree). Read from the store after the cache was listed, so that a
/// tree noted by then belongs to a row this read sees.
pub fn needed_hashes<S: Reads + Versions + ?Sized>(
    store: &S,
) -> Result<HashSet<String>, StoreError> {
    let mut needed: HashSet<String> = store
        .versions_in(&KEPT_STATES)?
        .into_iter()
        .map(|v| v.hash)
        .collect();
    let mut asked = HashSet::new();
    for set in store.running_sets(RUNNING_READ)? {
        for name in [&set.key.a, &set.key.b] {
            if let Some((bot, number)) = parse_version_name(name) {
                if asked.insert((bot.to_string(), number)) {
                    if let Some(row) = store.version(bot, number)? {
                        needed.insert(row.hash);
                    }
                }
            }
        }
    }
    Ok(needed)
}

/// The trees this process is using outside the league's sets (a test asked for, a
/// version being made active again): never taken out while pinned.
#[derive(Clone, Debug, Default)]
pub struct Pins(Arc<Mutex<HashMap<String, usize>>>);

/// A tree pinned by [`Pins::pin`], until this is dropped.
#[derive(Debug)]
pub struct Pin {
    pins: Pins,
    hash: String,
}

impl Pins {
    /// Pins the tree of `hash`: from now until the pin is dropped, no prune takes it
    /// out. A tree taken out just before is built again by whoever wants it.
    pub fn pin(&self, hash: &str) -> Pin {
        *self.lock().entry(hash.to_string()).or_insert(0) += 1;
        Pin {
            pins: self.clone(),
            hash: hash.to_string(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        let mut pins = self.pins.lock();
        if let Some(n) = pins.get_mut(&self.hash) {
            *n -= 1;
            if *n == 0 {
                pins.remove(&self.hash);
            }
        }
    }
}

/// What one round of a [`Pruner`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The hashes whose trees were taken out.
    pub removed: Vec<String>,
    /// What could not be done (said, not fatal: the next round tries again).
    pub errors: Vec<String>,
}

/// One round of pruning, the same on the server and on a worker: the cache listed
/// (`list`, off the runtime), then which hashes are needed read from the store
/// (`needed`, started only then: a tree noted by the listing has a row the read sees),
/// then `round` (off the runtime). What failed is in the round's `errors`. The pruner
/// comes back with the round.
pub async fn prune_once<L, N, Fut, R>(
    mut pruner: Pruner,
    list: L,
    needed: N,
    round: R,
) -> (Pruner, Pruned)
where
    L: FnOnce() -> Result<Vec<String>, String> + Send + 'static,
    N: FnOnce() -> Fut,
    Fut: Future<Output = Result<HashSet<String>, StoreError>>,
    R: FnOnce(&mut Pruner, &[String], &HashSet<String>) -> Pruned + Send + 'static,
{
    let failed = |error: String| Pruned {
        removed: Vec::new(),
        errors: vec![error],
    };
    let listed = match tokio::task::spawn_blocking(list).await {
        Ok(Ok(listed)) => listed,
        Ok(Err(e)) => return (pruner, failed(e)),
        Err(e) => return (pruner, failed(e.to_string())),
    };
    if listed.is_empty() {
        return (pruner, Pruned::default());
    }
    let needed = match needed().await {
        Ok(needed) => needed,
        Err(e) => {
            let error = format!("cannot read which versions are needed: {e}");
            return (pruner, failed(error));
        }
    };
    let done = tokio::task::spawn_blocking(move || {
        let pruned = round(&mut pruner, &listed, &needed);
        (pruner, pruned)
    })
    .await;
    done.unwrap_or_else(|e| (Pruner::default(), failed(e.to_string())))
}

/// Takes out of a cache the trees no version needs any more, at the second round that
/// finds one unneeded (a round's period apart: a version made active again in
/// between, or a set that started, keeps its tree).
#[derive(Debug, Default)]
pub struct Pruner {
    /// The hashes found unneeded at the last round.
    unneeded: HashSet<String>,
}

impl Pruner {
    /// One round: `listed` is [`upload::BuildCache::built_hashes`] read before
    /// `needed` ([`needed_hashes`]) was read from the store. Blocks (files): off the
    /// runtime.
    pub fn round(
        &mut self,
        cache: &upload::BuildCache,
        listed: &[String],
        needed: &HashSet<String>,
        pins: &Pins,
    ) -> Pruned {
        let mut pruned = Pruned::default();
        let mut suspects = HashSet::new();
        for hash in listed {
            // A pinned tree counts as needed: the looks start again once it is free.
            if needed.contains(hash) || pins.lock().contains_key(hash) {
                continue;
            }
            if !self.unneeded.contains(hash) {
                suspects.insert(hash.clone());
                continue;
            }
            // Decided and done under the pins' lock (a removal of a note and a rename:
            // quick), so that a pin taken meanwhile either keeps the tree or finds it
            // gone and builds it again.
            let taken = {
                let held = pins.lock();
                if held.contains_key(hash) {
                    continue;
                }
                cache.take_out(hash)
            };
            match taken {
                Ok(Some(_)) => {
                    pruned.removed.push(hash.clone());
                    let lock = cache.path().join(format!("{hash}{LOCK_SUFFIX}"));
                    if let Err(e) = std::fs::remove_file(&lock) {
                        if e.kind() != std::io::ErrorKind::NotFound {
                            pruned.errors.push(format!("{}: {e}", lock.display()));
                        }
                    }
                }
                Ok(None) => {}
                Err(e) => pruned
                    .errors
                    .push(format!("cannot take out the build of {hash}: {e}")),
            }
        }
        if let Err(e) = cache.remove_gone() {
            pruned.errors.push(format!(
                "cannot remove the builds taken out of {}: {e}",
                cache.path().display()
            ));
        }
        self.unneeded = suspects;
        pruned
    }
}
