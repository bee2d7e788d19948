//! Every test here runs against each implementation of `Store`: SQLite in memory and in
//! a file, and PostgreSQL (a real server, see `pg.rs`, a fresh database per test).

use league::{
    schedule, BotEntry, FaultRow, Format, GameRow, PgStore, SetKey, SetOutcome, SqliteStore, Store,
    StoreError,
};

/// Each implementation, fresh, with a name for messages. The temp dir lives as long as
/// the store.
fn stores() -> Vec<(&'static str, Box<dyn Store>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = SqliteStore::open(&dir.path().join("league.sqlite"), true).expect("file store");
    vec![
        (
            "sqlite in memory",
            Box::new(SqliteStore::in_memory().expect("memory store")),
            None,
        ),
        ("sqlite file", Box::new(file), Some(dir)),
        (
            "postgresql",
            Box::new(PgStore::connect(&crate::pg::fresh_shared_db()).expect("postgres store")),
            None,
        ),
    ]
}

pub fn bots(names: &[&str]) -> Vec<BotEntry> {
    names
        .iter()
        .map(|n| BotEntry {
            name: n.to_string(),
            command: format!("./{n}"),
        })
        .collect()
}

pub fn names(entries: &[BotEntry]) -> Vec<String> {
    entries.iter().map(|b| b.name.clone()).collect()
}

pub fn outcome(games: u32, log: &str) -> SetOutcome {
    SetOutcome {
        games: (1..=games)
            .map(|g| GameRow {
                game: g,
                first: (g % 2) as u8,
                winner: if g == 2 { None } else { Some(0) },
                points: if g == 2 { [0, 0] } else { [2, 0] },
                reason: "no-moves".into(),
                plies: 30 + g,
                double: g == 3,
                faulted: if g == 1 { vec![1] } else { Vec::new() },
            })
            .collect(),
        faults: vec![FaultRow {
            game: 1,
            ply: 7,
            bot: 1,
            kind: "time-out".into(),
            detail: "no move within 100 ms".into(),
        }],
        points: [2 * (games - 1), 0],
        winner: Some(0),
        moves: [40, 39],
        move_ms: [80.5, 20.25],
        log: log.into(),
    }
}

#[test]
fn sync_claim_record_and_read_back() {
    for (name, mut store, _dir) in stores() {
        let entries = bots(&["x", "y", "z"]);
        let plan = schedule(&names(&entries), &Format::RoundRobin, 2, 5);
        let report = store.sync(&entries, &plan).expect("sync");
        assert_eq!(report.added_bots, ["x", "y", "z"], "{name}");
        assert_eq!(report.added_sets, 6, "{name}");
        let p = store.progress().expect("progress");
        assert_eq!(
            (p.scheduled, p.done, p.running, p.pending),
            (6, 0, 0, 6),
            "{name}"
        );

        // Claims come in schedule order, each once.
        let first = store.claim_next().expect("claim").expect("a set");
        assert_eq!(first.key, plan[0].key, "{name}");
        assert_eq!(first.seed, plan[0].seed, "{name}");
        assert_eq!(first.attempts, 1, "{name}");
        let second = store.claim_next().expect("claim").expect("a set");
        assert_eq!(second.key, plan[1].key, "{name}");
        let p = store.progress().expect("progress");
        assert_eq!((p.running, p.pending), (2, 4), "{name}");

        store.set_log(first.id, "logs/one.jsonl").expect("log");
        let o = outcome(3, "logs/one.jsonl");
        store.record(first.id, &o).expect("record");
        let finished = store.finished().expect("finished");
        assert_eq!(finished.len(), 1, "{name}");
        assert_eq!(finished[0].key, first.key, "{name}");
        assert_eq!(finished[0].seed, first.seed, "{name}");
        assert_eq!(finished[0].outcome, o, "{name}");

        // A result is never recorded twice.
        let again = store.record(first.id, &o).map_err(|e| e.to_string());
        assert!(
            again.as_ref().err().is_some_and(|e| e.ends_with(&format!(
                "set {} is done, not running: its result is not recorded twice",
                first.id
            ))),
            "{name}: {again:?}"
        );
        assert_eq!(store.finished().expect("finished").len(), 1, "{name}");

        // Stopped part-way: back to pending, claimed again later with a second attempt.
        store.requeue(&[second.id]).expect("requeue");
        let p = store.progress().expect("progress");
        assert_eq!((p.done, p.running, p.pending), (1, 0, 5), "{name}");
        let again = store.claim_next().expect("claim").expect("a set");
        assert_eq!((again.id, again.attempts), (second.id, 2), "{name}");

        // Killed: a running set is found and put back at the next start.
        let requeued = store.requeue_running().expect("requeue running");
        assert_eq!(requeued.len(), 1, "{name}");
        assert_eq!(requeued[0].key, second.key, "{name}");
        assert_eq!(store.progress().expect("progress").running, 0, "{name}");

        // Play everything.
        let mut played = 1;
        while let Some(set) = store.claim_next().expect("claim") {
            store.record(set.id, &outcome(2, "l")).expect("record");
            played += 1;
        }
        assert_eq!(played, 6, "{name}");
        let p = store.progress().expect("progress");
        assert_eq!(
            (p.scheduled, p.done, p.running, p.pending),
            (6, 6, 0, 0),
            "{name}"
        );
        assert_eq!(store.finished().expect("finished").len(), 6, "{name}");
    }
}

#[test]
fn a_removed_bot_plays_no_more_and_keeps_its_results_and_a_new_one_is_scheduled() {
    for (name, mut store, _dir) in stores() {
        let three = bots(&["x", "y", "z"]);
        let plan = schedule(&names(&three), &Format::RoundRobin, 1, 5);
        let report = store.sync(&three, &plan).expect("sync");
        assert!(report.first, "{name}");
        assert_eq!(report.added_bots, ["x", "y", "z"], "{name}");
        // Play the first set (x-y... whichever comes first) only.
        let set = store.claim_next().expect("claim").expect("set");
        store.record(set.id, &outcome(1, "l")).expect("record");
        let played_key = set.key.clone();

        // z leaves; w joins.
        let next = bots(&["x", "y", "w"]);
        let plan = schedule(&names(&next), &Format::RoundRobin, 1, 5);
        let report = store.sync(&next, &plan).expect("sync");
        assert!(!report.first, "{name}");
        assert_eq!(report.added_bots, ["w"], "{name}");
        assert_eq!(report.removed_bots, ["z"], "{name}");
        assert_eq!(report.added_sets, 2, "{name}");
        let rows = store.bots().expect("bots");
        let z = rows.iter().find(|b| b.name == "z").expect("z kept");
        assert!(!z.active, "{name}");

        let mut claimed: Vec<SetKey> = Vec::new();
        while let Some(set) = store.claim_next().expect("claim") {
            assert!(set.key.a != "z" && set.key.b != "z", "{name}: {}", set.key);
            store.record(set.id, &outcome(1, "l")).expect("record");
            claimed.push(set.key);
        }
        let mut expected: Vec<SetKey> = plan
            .iter()
            .map(|s| s.key.clone())
            .filter(|k| *k != played_key)
            .collect();
        expected.sort();
        claimed.sort();
        assert_eq!(claimed, expected, "{name}");
        let p = store.progress().expect("progress");
        assert_eq!((p.scheduled, p.done, p.pending), (3, 3, 0), "{name}");
        // The finished set with z (if the first one was z's) still counts.
        let finished = store.finished().expect("finished");
        assert!(finished.iter().any(|s| s.key == played_key), "{name}");
        assert_eq!(
            p.done_elsewhere,
            u64::from(played_key.a == "z" || played_key.b == "z"),
            "{name}"
        );

        // z returns: its pending sets are scheduled again.
        let all = bots(&["x", "y", "w", "z"]);
        let plan = schedule(&names(&all), &Format::RoundRobin, 1, 5);
        let report = store.sync(&all, &plan).expect("sync");
        assert_eq!(report.returned_bots, ["z"], "{name}");
        let p = store.progress().expect("progress");
        assert_eq!(p.scheduled, 6, "{name}");
    }
}

#[test]
fn a_changed_command_is_reported_and_kept() {
    for (name, mut store, _dir) in stores() {
        let entries = bots(&["x", "y"]);
        store.sync(&entries, &[]).expect("sync");
        let mut changed = entries.clone();
        changed[1].command = "./y --v2".into();
        let report = store.sync(&changed, &[]).expect("sync");
        assert_eq!(
            report.changed_commands,
            [("y".to_string(), "./y".to_string(), "./y --v2".to_string())],
            "{name}"
        );
        let rows = store.bots().expect("bots");
        assert_eq!(rows[1].command, "./y --v2", "{name}");
    }
}

#[test]
fn settings_are_kept_and_updated() {
    for (name, mut store, _dir) in stores() {
        assert!(store.settings().expect("settings").is_empty(), "{name}");
        let mut s = std::collections::BTreeMap::new();
        s.insert("games".to_string(), "7".to_string());
        s.insert("seed".to_string(), "42".to_string());
        store.save_settings(&s).expect("save");
        s.insert("games".to_string(), "5".to_string());
        s.remove("seed");
        store.save_settings(&s).expect("save");
        let got = store.settings().expect("settings");
        assert_eq!(got.get("games").map(String::as_str), Some("5"), "{name}");
        assert_eq!(got.get("seed").map(String::as_str), Some("42"), "{name}");
    }
}

#[test]
fn migrations_run_from_empty_and_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("league.sqlite");
    let store = SqliteStore::open(&path, true).expect("create");
    assert_eq!(store.schema_version().expect("version"), 1);
    drop(store);
    // Opening again migrates nothing and keeps the data.
    let store = SqliteStore::open(&path, false).expect("reopen");
    assert_eq!(store.schema_version().expect("version"), 1);
    drop(store);
    // A store from a newer hus.
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.pragma_update(None, "user_version", 7).expect("bump");
    drop(conn);
    let err = SqliteStore::open(&path, false).map(|_| ()).err();
    assert!(
        matches!(
            err,
            Some(StoreError::NewerSchema {
                found: 7,
                known: 1,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        err.map(|e| e.to_string()),
        Some(format!(
            "the league store {} has schema version 7, newer than the 1 this hus knows: use the hus that made it, or a newer one",
            path.display()
        ))
    );
    // Not created when it must exist.
    let missing = SqliteStore::open(&dir.path().join("none.sqlite"), false);
    assert!(missing.is_err());
    assert!(!dir.path().join("none.sqlite").exists());
}
