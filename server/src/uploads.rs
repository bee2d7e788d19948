//! Bots by upload at the server (docs/upload.md): the versions authors send
//! (`web::versions` receives them), built, checked and entered into the league.
//!
//! A version's way, each step a state in the store ([`league::VersionState`]):
//! `queued` (kept with its archive) → `building` (unpacked into a directory of its own
//! and built in the sandbox, [`upload::BuildCache`]) → `checking` (check-bot's probe
//! and a validation set against the random mover at the league's rules and time
//! control, the bot in the sandbox) → `active` (the runner takes it into the pairing
//! as `NAME.vN`, and the bot's previous version leaves it, `retired`), or `build
//! failed` / `rejected` with the cause for its author. A failed or stopped build
//! leaves the active version as it was.
//!
//! Builds queue: [`Uploads::run`] takes the oldest queued versions, at most
//! `--builds` at a time; an author has at most one version on its way at a time, and
//! sends at most `--uploads-per-day` a day (the web layer refuses more with 429). The
//! queue is the store's: a server restarted finds its queued versions there, builds
//! again the ones it was building or checking, and enters its active versions again
//! (from this machine's build cache, or built again from their archives).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use league::{
    parse_version_name, BotConfig, LeagueConfig, StoreCaller, StoreError, VersionRow, VersionState,
};
use tokio::sync::{mpsc, oneshot, watch, Notify, Semaphore};

use crate::state::{Command, Request};

/// The store as the runner holds it.
pub type BoxStore = Box<dyn league::Store + Send>;

/// The uploads' directory (versions unpacked and built, validation logs), in the
/// league's.
pub const UPLOADS_DIR: &str = "uploads";
/// Versions an author may send a day, by default.
pub const DEFAULT_UPLOADS_PER_DAY: u32 = 5;
/// Versions built at once, by default.
pub const DEFAULT_BUILDS: usize = 1;
/// Uploads received at once (their bodies are held in memory, each up to the archive
/// bound): past them a sender is told to come back (503).
pub const RECEIVING: usize = 4;
/// The versions of a bot whose validation and gate logs are kept (its latest, by
/// number): the logs of older ones go at a prune, so that the uploads' directory does
/// not grow with the league's history. The gate's result files stay.
pub const KEEP_VERSION_LOGS: u32 = 10;
/// How long after a failed look at the store the queue looks again.
const RETRY: Duration = Duration::from_secs(2);

/// The organiser's settings of uploads (`hus serve` options).
#[derive(Clone, Debug)]
pub struct UploadSettings {
    /// Versions an author may send in 24 hours.
    pub per_day: u32,
    /// Versions built (and checked) at once.
    pub builds: usize,
    /// The bounds of an archive.
    pub bounds: upload::Bounds,
    /// The bounds of a build.
    pub build: upload::BuildLimits,
    /// The sandbox's user for the uploaded bots when `hus` is root (`None`: the
    /// sandbox's default, `nobody`).
    pub user: Option<String>,
    /// Where versions are unpacked and built.
    pub cache: PathBuf,
    /// Batches of a gate's test the server plays at once (its `--concurrency`; at
    /// least 1 without a shared store).
    pub gate_threads: usize,
    /// Whether the gate's batches go to the shared store (PostgreSQL), for the workers
    /// and the server's threads alike.
    pub gate_store: bool,
    /// How often built trees no version needs are looked for (`--prune-every`).
    pub prune_every: Duration,
}

/// What the web layer and the queue share.
pub struct Uploads {
    /// The organiser's settings.
    pub settings: UploadSettings,
    /// The store, through the runner's store thread.
    store: StoreCaller<BoxStore>,
    /// The built versions.
    cache: upload::BuildCache,
    /// Told when a version is queued.
    wake: Notify,
    /// Uploads being received.
    pub receiving: Arc<Semaphore>,
    /// The league file's bot and team names: no author can take one.
    organisers: BTreeSet<String>,
    /// The league file, for the validation set's and the gate's rules and time
    /// control.
    pub(crate) league: LeagueConfig,
    /// Commands to the runner (entering a version).
    commands: mpsc::Sender<Request>,
    /// The trees in use outside the league's sets (a test asked for, a version made
    /// active again): never pruned while pinned.
    pub(crate) pins: league::uploaded::Pins,
}

/// Now, UTC, to the second: `2026-12-05T02:30:00Z` (one width, so the store's times
/// compare as text).
pub fn now_utc() -> String {
    utc(time::OffsetDateTime::now_utc())
}

fn utc(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A day before now, as [`now_utc`] writes it.
pub fn day_ago() -> String {
    utc(time::OffsetDateTime::now_utc() - time::Duration::days(1))
}

/// Seconds from now until a day after `then` (as [`now_utc`] writes it): when the
/// daily limit lets its author send again.
pub fn seconds_until_a_day_after(then: &str) -> u64 {
    let format = time::format_description::well_known::Rfc3339;
    match time::OffsetDateTime::parse(then, &format) {
        Ok(t) => {
            let left = (t + time::Duration::days(1)) - time::OffsetDateTime::now_utc();
            left.whole_seconds().max(1) as u64
        }
        Err(_) => 86_400,
    }
}

impl Uploads {
    /// The uploads of the league `league`, on the runner's store.
    pub fn new(
        settings: UploadSettings,
        league: LeagueConfig,
        store: StoreCaller<BoxStore>,
        commands: mpsc::Sender<Request>,
    ) -> anyhow::Result<Uploads> {
        let cache = upload::BuildCache::open(&settings.cache).map_err(|e| {
            anyhow::anyhow!(
                "cannot make the uploads' directory {}: {e}",
                settings.cache.display()
            )
        })?;
        let organisers = league
            .bots
            .iter()
            .map(|b| b.name.clone())
            .chain(league.teams.iter().map(|t| t.name.clone()))
            .collect();
        Ok(Uploads {
            receiving: Arc::new(Semaphore::new(RECEIVING)),
            settings,
            store,
            cache,
            wake: Notify::new(),
            organisers,
            league,
            commands,
            pins: league::uploaded::Pins::default(),
        })
    }

    /// Whether `name` is one of the league file's bots or teams.
    pub fn is_organisers(&self, name: &str) -> bool {
        self.organisers.contains(name)
    }

    /// Whether the league plays teams (uploads are for leagues of bots).
    pub fn has_teams(&self) -> bool {
        !self.league.teams.is_empty()
    }

    /// The store, for the web layer's reads and the new version's row.
    pub async fn call<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut BoxStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.store.call(op).await
    }

    /// Tells the queue a version is waiting.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// The queue: builds the queued versions, at most `--builds` at once, oldest
    /// first, until `shutdown`. At its start it puts back the versions a stopped server
    /// was building or checking, and enters the active versions again.
    pub async fn run(self: Arc<Self>, mut shutdown: watch::Receiver<Option<&'static str>>) {
        self.restart().await;
        tokio::spawn(self.clone().prune(shutdown.clone()));
        let slots = Arc::new(Semaphore::new(self.settings.builds.max(1)));
        let mut started: BTreeSet<(String, u32)> = BTreeSet::new();
        loop {
            let queued = self.call(|s| s.versions_in(&[VersionState::Queued])).await;
            let mut queued = match queued {
                Ok(queued) => queued,
                Err(e) => {
                    tracing::warn!("uploads: cannot read the queue: {e}");
                    tokio::select! {
                        _ = tokio::time::sleep(RETRY) => continue,
                        _ = shutdown.wait_for(|s| s.is_some()) => return,
                    }
                }
            };
            queued.sort_by(|a, b| {
                (&a.submitted, &a.bot, a.number).cmp(&(&b.submitted, &b.bot, b.number))
            });
            started.retain(|k| queued.iter().any(|v| (v.bot.clone(), v.number) == *k));
            for version in queued {
                let key = (version.bot.clone(), version.number);
                if started.contains(&key) {
                    continue;
                }
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    break;
                };
                started.insert(key);
                let me = self.clone();
                tokio::spawn(async move {
                    me.prepare(version).await;
                    drop(slot);
                    me.wake();
                });
            }
            tokio::select! {
                _ = self.wake.notified() => {}
                // A slot freed by a version that ended wakes the loop too; this is
                // the safety net for a wake lost between the read and the wait.
                _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                _ = shutdown.wait_for(|s| s.is_some()) => return,
            }
        }
    }

    /// Takes out of the cache, every `--prune-every`, the built trees no version needs
    /// any more (`league::uploaded::Pruner`, the workers' way too), until `shutdown`.
    /// The server's disk for uploads is then that of the versions on their way and
    /// active, not of every version ever sent.
    async fn prune(self: Arc<Self>, mut shutdown: watch::Receiver<Option<&'static str>>) {
        let mut pruner = league::uploaded::Pruner::default();
        let mut every = tokio::time::interval(self.settings.prune_every);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                _ = shutdown.wait_for(|s| s.is_some()) => return,
            }
            // The logs of each bot's older versions, while no test asked for runs (one
            // of an old version writes its logs there; none starts meanwhile).
            if let Some(slot) = crate::gate::AskedSlot::take() {
                let dir = self.settings.cache.clone();
                let trimmed = tokio::task::spawn_blocking(move || {
                    let _slot = slot;
                    trim_logs(&dir, KEEP_VERSION_LOGS)
                })
                .await;
                match trimmed {
                    Ok(Ok(0)) | Err(_) => {}
                    Ok(Ok(n)) => tracing::info!("uploads: the logs of {n} old version(s) removed"),
                    Ok(Err(e)) => tracing::warn!("uploads: cannot remove old versions' logs: {e}"),
                }
            }
            let (listing, rounding) = (self.clone(), self.clone());
            let (back, pruned) = league::uploaded::prune_once(
                pruner,
                move || {
                    listing
                        .cache
                        .built_hashes()
                        .map_err(|e| format!("cannot list the built versions: {e}"))
                },
                || self.call(|s| league::uploaded::needed_hashes(&**s)),
                move |pruner, listed, needed| {
                    pruner.round(&rounding.cache, listed, needed, &rounding.pins)
                },
            )
            .await;
            pruner = back;
            for hash in &pruned.removed {
                tracing::info!("uploads: the build of {hash} is no longer played: removed");
            }
            for error in &pruned.errors {
                tracing::warn!("uploads: {error}");
            }
        }
    }

    /// At the start: versions left building or checking by a stopped server are
    /// queued again; the active versions enter the league again.
    async fn restart(&self) {
        let dir = self.settings.cache.clone();
        if let Ok(n) = tokio::task::spawn_blocking(move || crate::gate::close_cut_tests(&dir)).await
        {
            if n > 0 {
                tracing::info!("uploads: {n} SPRT test(s) cut by the stop marked failed");
            }
        }
        if self.settings.gate_store {
            // The gate's tests a stopped server ran are over: their batches go.
            if let Err(e) = self.call(|s| s.clear_gate_batches()).await {
                tracing::warn!("uploads: cannot clear the gate's batches: {e}");
            }
        }
        let now = now_utc();
        let cut = self
            .call(move |s| {
                let cut = s.versions_in(&[VersionState::Building, VersionState::Checking])?;
                for v in &cut {
                    s.set_version_state(&v.bot, v.number, VersionState::Queued, None, None, &now)?;
                }
                Ok(cut.len())
            })
            .await;
        if let Ok(n) = cut {
            if n > 0 {
                tracing::info!("uploads: {n} version(s) cut by a stop queued again");
            }
        }
        let active = self
            .call(|s| s.versions_in(&[VersionState::Active]))
            .await
            .unwrap_or_default();
        for version in active {
            match self.built(&version).await {
                Ok(built) => {
                    if let Err(e) = self.enter(&version, &built).await {
                        tracing::warn!("uploads: {} cannot play: {e}", version.league_name());
                    }
                }
                Err(e) => tracing::warn!(
                    "uploads: {} cannot be built again: {e}",
                    version.league_name()
                ),
            }
        }
    }

    /// Sets a version's state, saying a failure to the log (the version stays as it
    /// was in the store, and a restart takes it up again).
    async fn set_state(
        &self,
        version: &VersionRow,
        state: VersionState,
        output: Option<String>,
        detail: Option<String>,
    ) {
        let (bot, number, now) = (version.bot.clone(), version.number, now_utc());
        let result = self
            .call(move |s| {
                s.set_version_state(
                    &bot,
                    number,
                    state,
                    output.as_deref(),
                    detail.as_deref(),
                    &now,
                )
            })
            .await;
        if let Err(e) = result {
            tracing::warn!(
                "uploads: cannot mark {} {state}: {e}",
                version.league_name()
            );
            return;
        }
        if matches!(state, VersionState::BuildFailed | VersionState::Rejected) {
            // Refused for good (unless by the gate, whose refused versions may still
            // play a test): its archive is emptied if no other version needs it, so
            // that refused uploads do not fill the store.
            let hash = version.hash.clone();
            let kept = crate::gate::REFUSED_BY_GATE;
            match self
                .call(move |s| s.drop_refused_archive(&hash, kept))
                .await
            {
                Ok(true) => tracing::info!(
                    "uploads: {}'s archive emptied (refused for good)",
                    version.league_name()
                ),
                Ok(false) => {}
                Err(e) => tracing::warn!(
                    "uploads: cannot empty {}'s archive: {e}",
                    version.league_name()
                ),
            }
        }
    }

    /// A version's way from `queued` to `active`, or to the state that says why not.
    async fn prepare(&self, version: VersionRow) {
        let name = version.league_name();
        self.set_state(&version, VersionState::Building, None, None)
            .await;
        let hash = version.hash.clone();
        let archive = match self.call(move |s| s.archive(&hash)).await {
            Ok(Some(archive)) => archive,
            Ok(None) => {
                let why = format!("the store has no archive {}", version.hash);
                self.set_state(&version, VersionState::BuildFailed, None, Some(why))
                    .await;
                return;
            }
            Err(e) => {
                // Left `building`: the next start queues it again.
                tracing::warn!("uploads: cannot read {name}'s archive: {e}");
                return;
            }
        };
        let report = match self
            .cache
            .build(&archive, &self.settings.bounds, &self.settings.build)
            .await
        {
            Ok(report) => report,
            Err(refused) => {
                self.set_state(
                    &version,
                    VersionState::BuildFailed,
                    None,
                    Some(refused.to_string()),
                )
                .await;
                return;
            }
        };
        let output = report.output.clone();
        let built = match report.result {
            Ok(built) => built,
            Err(failure) => {
                self.set_state(
                    &version,
                    VersionState::BuildFailed,
                    Some(output),
                    Some(failure.to_string()),
                )
                .await;
                return;
            }
        };
        tracing::info!(
            "uploads: {name} built in {}",
            referee::show_duration(report.took)
        );
        self.set_state(&version, VersionState::Checking, Some(output), None)
            .await;
        let bot = match self.bot_config(&version, &built) {
            Ok(bot) => bot,
            Err(e) => {
                self.set_state(&version, VersionState::Rejected, None, Some(e))
                    .await;
                return;
            }
        };
        if let Err(why) =
            crate::validate::validate(&bot, &self.league, &name, self.cache.path()).await
        {
            self.set_state(&version, VersionState::Rejected, None, Some(why))
                .await;
            // A rejected version never plays: its built tree goes (its archive stays).
            if let Err(e) = self.cache.forget(&version.hash, &built) {
                tracing::warn!("uploads: cannot remove {name}'s build: {e}");
            }
            return;
        }
        if let Some(gate) = self.league.gate {
            // The SPRT gate: against the bot's active version, if it has one; only an
            // accepting test lets the new version replace it.
            let b = version.bot.clone();
            let active = match self.call(move |s| s.versions_of(&b)).await {
                Ok(rows) => rows.into_iter().find(|v| v.state == VersionState::Active),
                Err(e) => {
                    // Left `checking`: the next start queues it again.
                    tracing::warn!("uploads: cannot read {name}'s active version: {e}");
                    return;
                }
            };
            if let Some(active) = active {
                let against = match self.built(&active).await {
                    Ok(built) => self.bot_config(&active, &built),
                    Err(e) => Err(e),
                };
                let against = match against {
                    Ok(against) => against,
                    Err(e) => {
                        let why = format!(
                            "{} cannot play the active version {}: {e}",
                            crate::gate::REFUSED_BY_GATE,
                            active.league_name()
                        );
                        self.set_state(&version, VersionState::Rejected, None, Some(why))
                            .await;
                        return;
                    }
                };
                let result = self.play_gate(&bot, &against, &gate).await;
                if !result.accepted() {
                    self.set_state(
                        &version,
                        VersionState::Rejected,
                        None,
                        Some(result.refusal()),
                    )
                    .await;
                    return;
                }
                tracing::info!(
                    "uploads: {name} accepted by the SPRT gate against {} after {} pairs",
                    result.active,
                    result.pairs()
                );
            }
        }
        let (b, n, now) = (version.bot.clone(), version.number, now_utc());
        if let Err(e) = self.call(move |s| s.activate_version(&b, n, &now)).await {
            tracing::warn!("uploads: cannot make {name} active: {e}");
            return;
        }
        if let Err(e) = self.enter(&version, &built).await {
            tracing::warn!("uploads: {name} is active but cannot play: {e}");
        }
    }

    /// Plays a gate's test of `candidate` against `active` (`crate::gate::gate_with`)
    /// on the server's threads, and with a shared store on the workers' too.
    pub(crate) async fn play_gate(
        &self,
        candidate: &BotConfig,
        active: &BotConfig,
        gate: &league::Gate,
    ) -> crate::gate::GateResult {
        let players = crate::gate::Players {
            threads: match self.settings.gate_store {
                true => self.settings.gate_threads,
                false => self.settings.gate_threads.max(1),
            },
            store: self.settings.gate_store.then(|| self.store.clone()),
        };
        crate::gate::gate_with(
            candidate,
            active,
            &self.league,
            gate,
            self.cache.path(),
            &players,
        )
        .await
    }

    /// How the version plays: its run command in the sandbox, its tree its directory,
    /// at the league's nice value (`league::uploaded::bot_config`, as the workers').
    pub(crate) fn bot_config(
        &self,
        version: &VersionRow,
        built: &upload::Built,
    ) -> Result<BotConfig, String> {
        league::uploaded::bot_config(version, built, self.settings.user.as_deref())
            .map_err(|e| e.to_string())
    }

    /// The version built on this machine: from the cache, else built again from its
    /// archive, fetched by hash and checked (a restart whose cache was cleared, an
    /// earlier version made active): `league::uploaded::built`, the workers' way too.
    pub(crate) async fn built(&self, version: &VersionRow) -> Result<upload::Built, String> {
        let settings = league::uploaded::BuildSettings {
            bounds: self.settings.bounds,
            limits: self.settings.build.clone(),
            user: self.settings.user.clone(),
        };
        let fetch = |hash: String| self.call(move |s| s.archive(&hash));
        league::uploaded::built(&self.cache, &settings, version, fetch)
            .await
            .map_err(|e| e.to_string())
    }

    /// Hands the version to the runner, which pairs it from now on in place of the
    /// bot's other versions.
    async fn enter(&self, version: &VersionRow, built: &upload::Built) -> Result<String, String> {
        let bot = self.bot_config(version, built)?;
        let (tx, rx) = oneshot::channel();
        self.commands
            .send((Command::EnterVersion(Box::new(bot)), tx))
            .await
            .map_err(|_| "the server is stopping".to_string())?;
        rx.await.map_err(|_| "the server is stopping".to_string())?
    }

    /// Makes an earlier version (one that played) the active one again, at once:
    /// built from this machine's cache, or again from its archive.
    pub async fn reactivate(&self, version: VersionRow) -> Result<String, String> {
        // Pinned from before it is found in the cache until it is active (then needed).
        let _pin = self.pins.pin(&version.hash);
        let built = self.built(&version).await?;
        let (b, n, now) = (version.bot.clone(), version.number, now_utc());
        self.call(move |s| s.activate_version(&b, n, &now))
            .await
            .map_err(|e| e.to_string())?;
        self.enter(&version, &built).await
    }
}

/// The version (`NAME.vN`) whose validation or gate test a log directory's name
/// `name` is of: `NAME.vN` itself, or `NAME.vN-vs-…` (the first `.vN-vs-` ends it, so
/// a bot's name may hold `-vs-`).
fn logs_version(name: &str) -> Option<(&str, u32)> {
    let mut from = 0;
    while let Some(at) = name[from..].find(".v") {
        let start = from + at + 2;
        let digits = name[start..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && name[start + digits..].starts_with("-vs-") {
            return parse_version_name(&name[..start + digits]);
        }
        from = start;
    }
    parse_version_name(name)
}

/// Removes the validation logs (`validation/NAME.vN/`) and the gates' batch logs
/// (`gate/NAME.vN-vs-…/`, the directories; the result files stay) of every bot's
/// versions but its `keep` latest, in the uploads' directory `dir`. Returns how many
/// directories went. Blocks (files).
pub fn trim_logs(dir: &std::path::Path, keep: u32) -> std::io::Result<usize> {
    use std::collections::BTreeMap;
    let mut removed = 0;
    for sub in [crate::validate::VALIDATION_DIR, crate::gate::GATE_DIR] {
        let place = dir.join(sub);
        let entries = match std::fs::read_dir(&place) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        // Each bot's log directories, by version.
        let mut by_bot: BTreeMap<String, Vec<(u32, PathBuf)>> = BTreeMap::new();
        for entry in entries {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let name = entry.file_name();
            let Some((bot, number)) = name.to_str().and_then(logs_version) else {
                continue;
            };
            by_bot
                .entry(bot.to_string())
                .or_default()
                .push((number, entry.path()));
        }
        for dirs in by_bot.values() {
            let mut numbers: Vec<u32> = dirs.iter().map(|(n, _)| *n).collect();
            numbers.sort_unstable_by(|a, b| b.cmp(a));
            numbers.dedup();
            let Some(&oldest_kept) = numbers.get(keep.saturating_sub(1) as usize) else {
                continue;
            };
            for (n, path) in dirs {
                if *n < oldest_kept {
                    std::fs::remove_dir_all(path)?;
                    removed += 1;
                }
            }
        }
    }
    Ok(removed)
}

/// The other versions of `name`'s bot among `active` (the league's names): those a new
/// active version replaces.
pub fn other_versions<'a>(name: &str, active: impl Iterator<Item = &'a String>) -> Vec<String> {
    let Some((bot, _)) = parse_version_name(name) else {
        return Vec::new();
    };
    active
        .filter(|a| *a != name && parse_version_name(a).is_some_and(|(b, _)| b == bot))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_log_directory_names_its_version() {
        assert_eq!(logs_version("a.v3"), Some(("a", 3)));
        assert_eq!(logs_version("a.v3-vs-a.v1"), Some(("a", 3)));
        assert_eq!(logs_version("a.v3-vs-a.v1-2"), Some(("a", 3)));
        assert_eq!(
            logs_version("x-vs-y.v12-vs-x-vs-y.v2"),
            Some(("x-vs-y", 12))
        );
        assert_eq!(logs_version("plain"), None);
    }

    #[test]
    fn only_each_bots_latest_versions_keep_their_logs() {
        let place = tempfile::tempdir().expect("a directory");
        let dir = place.path();
        let v = dir.join(crate::validate::VALIDATION_DIR);
        let g = dir.join(crate::gate::GATE_DIR);
        for n in 1..=5 {
            std::fs::create_dir_all(v.join(format!("a.v{n}"))).expect("mkdir");
            std::fs::write(v.join(format!("a.v{n}/set.jsonl")), "{}").expect("write");
        }
        std::fs::create_dir_all(v.join("b.v1")).expect("mkdir");
        for test in [
            "a.v2-vs-a.v1",
            "a.v4-vs-a.v3",
            "a.v5-vs-a.v4",
            "a.v5-vs-a.v4-2",
        ] {
            std::fs::create_dir_all(g.join(test)).expect("mkdir");
            std::fs::write(g.join(format!("{test}.json")), "{}").expect("write");
        }
        std::fs::create_dir_all(g.join("not a version")).expect("mkdir");

        assert_eq!(trim_logs(dir, 2).expect("trimmed"), 4);
        let left = |d: &std::path::Path| {
            let mut names: Vec<String> = std::fs::read_dir(d)
                .expect("read")
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(left(&v), ["a.v4", "a.v5", "b.v1"]);
        assert_eq!(
            left(&g),
            [
                "a.v2-vs-a.v1.json",
                "a.v4-vs-a.v3",
                "a.v4-vs-a.v3.json",
                "a.v5-vs-a.v4",
                "a.v5-vs-a.v4-2",
                "a.v5-vs-a.v4-2.json",
                "a.v5-vs-a.v4.json",
                "not a version",
            ]
        );
        // Again: nothing more; an uploads' directory without logs: nothing.
        assert_eq!(trim_logs(dir, 2).expect("trimmed"), 0);
        let empty = tempfile::tempdir().expect("a directory");
        assert_eq!(trim_logs(empty.path(), 2).expect("trimmed"), 0);
    }

    use super::*;

    #[test]
    fn a_new_version_replaces_only_its_own_bots_versions() {
        let active: Vec<String> = ["a.v1", "ab.v2", "b", "a.v3", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(other_versions("a.v4", active.iter()), vec!["a.v1", "a.v3"]);
        assert_eq!(other_versions("a.v3", active.iter()), vec!["a.v1"]);
        assert!(other_versions("b", active.iter()).is_empty());
    }

    #[test]
    fn times_have_one_width_and_the_wait_is_counted_from_a_day_after() {
        let now = now_utc();
        assert_eq!(now.len(), 20, "{now}");
        assert!(day_ago() < now);
        let left = seconds_until_a_day_after(&now);
        assert!((86_300..=86_400).contains(&left), "{left}");
        assert_eq!(seconds_until_a_day_after("junk"), 86_400);
    }
}
