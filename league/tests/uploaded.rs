//! `league::uploaded`, the one way from a version's row to the bot that plays it, on a
//! real SQLite store: a Python bot packed with `upload::pack` is put in the store,
//! fetched by hash, checked, built in the sandbox and started; built once per hash
//! (a second prepare and two at once fetch nothing more and build nothing more); a
//! version that never passed its checks is not run; an archive whose bytes are not
//! the ones its hash names is refused. The builds skip, saying why, without
//! bubblewrap.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use league::uploaded::{prepare, BuildSettings, LocalBuilds, PrepareError};
use league::{NewVersion, SqliteStore, StoreError, Transport, VersionRow, VersionState, Versions};

/// Whether the sandbox can run here; if not, says why (the test then passes).
fn sandbox_ready(test: &str) -> bool {
    let found = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join("bwrap").is_file()))
        .unwrap_or(false);
    if !found {
        eprintln!("{test}: skipped: bubblewrap (bwrap) is not installed");
    }
    found
}

/// A directory the sandbox's user can pass through (a temporary one is 0700).
fn open_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// The Python random mover as an upload, packed.
fn packed_bot(place: &Path) -> upload::Packed {
    let bot = place.join("bot");
    std::fs::create_dir(&bot).expect("mkdir");
    for (name, body) in [
        (
            "hus-bot.toml",
            "language = \"python\"\nmain = \"random_bot.py\"\n",
        ),
        (
            "random_bot.py",
            include_str!("../../sample-bots/python/random_bot.py"),
        ),
        (
            "hus_rules.py",
            include_str!("../../sample-bots/python/hus_rules.py"),
        ),
    ] {
        std::fs::write(bot.join(name), body).expect("write");
    }
    upload::pack(&bot, &upload::Bounds::default()).expect("pack")
}

/// A store holding version 1 of `tiny`, in `state`, whose row names `hash` and whose
/// archive is `archive`.
fn store_with(archive: &[u8], hash: &str, state: VersionState) -> (SqliteStore, VersionRow) {
    let mut store = SqliteStore::in_memory().expect("memory store");
    let number = store
        .add_version(&NewVersion {
            bot: "tiny".into(),
            author: "ann".into(),
            hash: hash.into(),
            archive: archive.to_vec(),
            submitted: "2026-12-05T02:30:00Z".into(),
        })
        .expect("add");
    assert_eq!(number, 1);
    store
        .set_version_state("tiny", 1, state, None, None, "2026-12-05T02:31:00Z")
        .expect("state");
    let row = store.version("tiny", 1).expect("read").expect("the row");
    (store, row)
}

/// A fetch from `store` that counts its calls.
fn counting(
    store: &Arc<Mutex<SqliteStore>>,
    calls: &Arc<AtomicUsize>,
) -> impl FnOnce(String) -> std::future::Ready<Result<Option<Vec<u8>>, StoreError>> {
    let (store, calls) = (store.clone(), calls.clone());
    move |hash| {
        calls.fetch_add(1, Ordering::SeqCst);
        std::future::ready(store.lock().expect("store").archive(&hash))
    }
}

/// The version directories the cache holds (its `HASH.built` notes aside).
fn version_dirs(cache: &Path) -> usize {
    std::fs::read_dir(cache)
        .expect("cache")
        .flatten()
        .filter(|e| e.path().is_dir())
        .count()
}

/// Starts the bot as a set would (its sandbox, its directory) with an empty stdin: it
/// must start and end cleanly, saying nothing on stderr.
async fn starts(bot: &league::BotConfig) {
    let Transport::Process { spec, limits } = &bot.transport else {
        panic!("an uploaded version is a process");
    };
    assert!(
        limits.sandbox.is_some(),
        "an uploaded version plays sandboxed"
    );
    let mut child = limits.spawn_once(spec).await.expect("the bot starts");
    let mut stderr = child.take_stderr().expect("stderr");
    use tokio::io::AsyncReadExt;
    let mut err = String::new();
    let status = tokio::time::timeout(Duration::from_secs(60), async {
        stderr.read_to_string(&mut err).await.expect("read");
        child.wait().await.expect("wait")
    })
    .await
    .expect("the bot ends at the end of its input");
    assert!(status.success(), "{status}: {err}");
    assert_eq!(err, "");
}

#[tokio::test]
async fn an_active_version_is_fetched_checked_built_once_and_starts() {
    if !sandbox_ready("prepare") {
        return;
    }
    let place = open_dir();
    let packed = packed_bot(place.path());
    let (store, row) = store_with(&packed.bytes, &packed.hash, VersionState::Active);
    let store = Arc::new(Mutex::new(store));
    let calls = Arc::new(AtomicUsize::new(0));
    let cache_dir = place.path().join("cache");
    let builds = LocalBuilds::new(cache_dir.clone(), BuildSettings::default());

    let bot = builds
        .prepare(&row, counting(&store, &calls))
        .await
        .expect("built");
    assert_eq!(bot.name, "tiny.v1");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(version_dirs(&cache_dir), 1);
    starts(&bot).await;

    // A second set finds it built: nothing fetched, nothing built.
    let again = builds
        .prepare(&row, counting(&store, &calls))
        .await
        .expect("from the cache");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(version_dirs(&cache_dir), 1);
    assert_eq!(
        format!("{:?}", again.transport),
        format!("{:?}", bot.transport)
    );

    // A retired version (one that played) plays too.
    let mut retired = row.clone();
    retired.state = VersionState::Retired;
    let cache = upload::BuildCache::open(&cache_dir).expect("cache");
    prepare(
        &cache,
        &BuildSettings::default(),
        &retired,
        counting(&store, &calls),
    )
    .await
    .expect("a retired version plays");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn prepares_of_one_hash_at_once_here_and_by_another_worker_build_it_once() {
    if !sandbox_ready("at once") {
        return;
    }
    let place = open_dir();
    let packed = packed_bot(place.path());
    let (store, row) = store_with(&packed.bytes, &packed.hash, VersionState::Active);
    let store = Arc::new(Mutex::new(store));
    let calls = Arc::new(AtomicUsize::new(0));
    let cache_dir = place.path().join("cache");
    let builds = LocalBuilds::new(cache_dir.clone(), BuildSettings::default());
    // The same archive as version 2 (an author who sent it again).
    let mut second = row.clone();
    second.number = 2;
    // A second worker of the machine sharing the cache (its own open of the lock
    // file: flock locks belong to the open file, as between two processes).
    let other_worker = LocalBuilds::new(cache_dir.clone(), BuildSettings::default());
    let (a, b, c) = tokio::join!(
        builds.prepare(&row, counting(&store, &calls)),
        builds.prepare(&second, counting(&store, &calls)),
        other_worker.prepare(&row, counting(&store, &calls)),
    );
    assert_eq!(a.expect("first").name, "tiny.v1");
    assert_eq!(b.expect("second").name, "tiny.v2");
    assert_eq!(c.expect("other worker").name, "tiny.v1");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(version_dirs(&cache_dir), 1);
}

#[tokio::test]
async fn a_version_that_never_passed_its_checks_is_not_run() {
    let place = open_dir();
    let packed = packed_bot(place.path());
    for state in [
        VersionState::Rejected,
        VersionState::BuildFailed,
        VersionState::Queued,
        VersionState::Building,
        VersionState::Checking,
    ] {
        let (store, row) = store_with(&packed.bytes, &packed.hash, state);
        let store = Arc::new(Mutex::new(store));
        let calls = Arc::new(AtomicUsize::new(0));
        let cache_dir = place.path().join("cache");
        let builds = LocalBuilds::new(cache_dir.clone(), BuildSettings::default());
        let err = builds
            .prepare(&row, counting(&store, &calls))
            .await
            .expect_err("not run");
        assert!(matches!(err, PrepareError::NotPlayable { .. }), "{err:?}");
        assert!(!err.may_pass());
        assert_eq!(
            err.to_string(),
            format!(
                "tiny.v1 is {state}: only a version that passed its checks (active or retired) is played"
            )
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0, "{state}: nothing fetched");
        assert_eq!(version_dirs(&cache_dir), 0, "{state}: nothing built");
    }
}

#[tokio::test]
async fn an_archive_that_is_not_what_its_hash_names_is_refused_unbuilt() {
    let place = open_dir();
    let packed = packed_bot(place.path());
    // The row names another archive's hash; the store gives these bytes for it.
    let other = upload::sha256_hex(b"another archive");
    let (store, row) = store_with(&packed.bytes, &other, VersionState::Active);
    let store = Arc::new(Mutex::new(store));
    let calls = Arc::new(AtomicUsize::new(0));
    let cache_dir = place.path().join("cache");
    let builds = LocalBuilds::new(cache_dir.clone(), BuildSettings::default());
    let err = builds
        .prepare(&row, counting(&store, &calls))
        .await
        .expect_err("refused");
    assert_eq!(
        err.to_string(),
        format!(
            "the archive the store gave for {other} has the SHA-256 {}: refused, not built",
            packed.hash
        )
    );
    assert!(!err.may_pass());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(version_dirs(&cache_dir), 0);

    // A store without the archive, and one that cannot be read (which may pass).
    let missing = builds
        .prepare(&row, |_| std::future::ready(Ok(None)))
        .await
        .expect_err("no archive");
    assert_eq!(
        missing.to_string(),
        format!("the store has no archive {other}")
    );
    let down = builds
        .prepare(&row, |_| {
            std::future::ready(Err(StoreError::ThreadStopped {
                why: "a test".into(),
            }))
        })
        .await
        .expect_err("store down");
    assert!(down.may_pass(), "{down}");
}

/// Adds `hash`'s version of `tiny` to `store` in `state`; its row.
fn add(store: &mut SqliteStore, packed: &upload::Packed, state: VersionState) -> VersionRow {
    let number = store
        .add_version(&NewVersion {
            bot: "tiny".into(),
            author: "ann".into(),
            hash: packed.hash.clone(),
            archive: packed.bytes.clone(),
            submitted: "2026-12-05T02:30:00Z".into(),
        })
        .expect("add");
    store
        .set_version_state("tiny", number, state, None, None, "2026-12-05T02:31:00Z")
        .expect("state");
    store.version("tiny", number).expect("read").expect("row")
}

#[tokio::test]
async fn trees_no_version_needs_go_at_the_second_look_and_are_built_again_when_wanted() {
    use league::uploaded::{needed_hashes, Pins, Pruner};
    use league::{schedule, BotEntry, Claims, Format, Schedule};
    use std::collections::HashSet;
    if !sandbox_ready("prune") {
        return;
    }
    let place = open_dir();
    let one = packed_bot(place.path());
    // A second archive: the same bot with a note of its own.
    std::fs::write(place.path().join("bot/NOTES"), "version two\n").expect("write");
    let two = upload::pack(&place.path().join("bot"), &upload::Bounds::default()).expect("pack");
    assert_ne!(one.hash, two.hash);
    let mut store = SqliteStore::in_memory().expect("memory store");
    let v1 = add(&mut store, &one, VersionState::Retired);
    let v2 = add(&mut store, &two, VersionState::Active);
    let store = Arc::new(Mutex::new(store));
    let calls = Arc::new(AtomicUsize::new(0));
    let cache_dir = place.path().join("cache");
    let builds = LocalBuilds::new(cache_dir.clone(), BuildSettings::default());
    for row in [&v1, &v2] {
        builds
            .prepare(row, counting(&store, &calls))
            .await
            .expect("built");
    }
    assert_eq!(
        (calls.load(Ordering::SeqCst), version_dirs(&cache_dir)),
        (2, 2)
    );
    let cache = upload::BuildCache::open(&cache_dir).expect("cache");
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let mut both = vec![one.hash.clone(), two.hash.clone()];
    both.sort();
    assert_eq!(sorted(cache.built_hashes().expect("listed")), both);
    let (pins, mut pruner) = (Pins::default(), Pruner::default());
    let mut round = |needed: &HashSet<String>| -> Vec<String> {
        let listed = cache.built_hashes().expect("listed");
        let pruned = pruner.round(&cache, &listed, needed, &pins);
        assert_eq!(pruned.errors, Vec::<String>::new());
        pruned.removed
    };

    // The retired version's last set still runs: both trees are needed.
    let entries = [
        BotEntry {
            name: "tiny.v1".into(),
            command: String::new(),
        },
        BotEntry {
            name: "ann".into(),
            command: String::new(),
        },
    ];
    let names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
    let claimed = {
        let mut s = store.lock().expect("store");
        s.sync(&entries, &schedule(&names, &Format::RoundRobin, 1, 3))
            .expect("sync");
        s.claim_next().expect("claim").expect("a set")
    };
    let needed = needed_hashes(&*store.lock().expect("store")).expect("needed");
    assert_eq!(needed, both.iter().cloned().collect::<HashSet<_>>());
    assert_eq!(round(&needed), Vec::<String>::new());
    assert_eq!(round(&needed), Vec::<String>::new());
    assert_eq!(version_dirs(&cache_dir), 2);

    // Its set ended: only the active version is needed. A pin (a test asked for)
    // keeps the tree however many looks find it unneeded.
    store
        .lock()
        .expect("store")
        .requeue(&[claimed.claim()])
        .expect("requeue");
    let needed = needed_hashes(&*store.lock().expect("store")).expect("needed");
    assert_eq!(needed, HashSet::from([two.hash.clone()]));
    let pin = pins.pin(&one.hash);
    for _ in 0..3 {
        assert_eq!(round(&needed), Vec::<String>::new());
    }
    drop(pin);
    // Unpinned: the first look finds it unneeded, the second takes it out.
    assert_eq!(round(&needed), Vec::<String>::new());
    assert_eq!(version_dirs(&cache_dir), 2);
    assert_eq!(round(&needed), vec![one.hash.clone()]);
    assert_eq!(version_dirs(&cache_dir), 1);
    assert!(cache.find(&one.hash).is_none());
    assert!(cache.find(&two.hash).is_some());
    assert_eq!(
        cache.built_hashes().expect("listed"),
        vec![two.hash.clone()]
    );
    let left: Vec<String> = std::fs::read_dir(&cache_dir)
        .expect("cache")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gone") || n.starts_with(&one.hash))
        .collect();
    assert_eq!(left, Vec::<String>::new());

    // Wanted again (made active again): fetched by hash and built again.
    builds
        .prepare(&v1, counting(&store, &calls))
        .await
        .expect("built again");
    assert_eq!(
        (calls.load(Ordering::SeqCst), version_dirs(&cache_dir)),
        (3, 2)
    );

    // A directory a process cut off mid-removal left aside goes at the next round.
    std::fs::create_dir_all(cache_dir.join("0123abcd-x.gone/tree")).expect("mkdir");
    let needed = HashSet::from([one.hash.clone(), two.hash.clone()]);
    assert_eq!(round(&needed), Vec::<String>::new());
    assert!(!cache_dir.join("0123abcd-x.gone").exists());
    assert_eq!(version_dirs(&cache_dir), 2);
}
