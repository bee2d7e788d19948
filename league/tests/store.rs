//! Every test here runs against each implementation of `Store`: SQLite in memory and in
//! a file, and PostgreSQL (a real server, see `pg.rs`, a fresh database per test).

use league::{
    schedule, BotEntry, Claims, FaultRow, Format, GameRow, LogPlace, NewVersion, PgStore, Reads,
    Schedule, SetKey, SetOutcome, SqliteStore, Store, StoreError, VersionRow, VersionState,
    Versions, MAX_VERSION_TEXT,
};
use referee::{FaultKind, GameEndReason, Side};

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

/// The log place a store writes as `text` (`logs/STEM.jsonl`, `store:ID`).
pub fn place(text: &str) -> LogPlace {
    LogPlace::parse(text).expect("a log place")
}

pub fn outcome(games: u32, log: &str) -> SetOutcome {
    SetOutcome {
        games: (1..=games)
            .map(|g| GameRow {
                game: g,
                first: Side::BOTH[g as usize % 2],
                winner: if g == 2 { None } else { Some(Side::A) },
                points: if g == 2 { [0, 0] } else { [2, 0] },
                reason: GameEndReason::NoMoves,
                plies: 30 + g,
                double: g == 3,
                faulted: if g == 1 { vec![Side::B] } else { Vec::new() },
            })
            .collect(),
        faults: vec![FaultRow {
            game: 1,
            ply: 7,
            bot: Side::B,
            kind: FaultKind::TimeOut,
            detail: "no move within 100 ms".into(),
        }],
        points: [2 * (games - 1), 0],
        winner: Some(Side::A),
        moves: [40, 39],
        move_ms: [80.5, 20.25],
        log: place(log),
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

        assert!(store
            .set_log(first.claim(), &place("logs/one.jsonl"))
            .expect("log"));
        let o = outcome(3, "logs/one.jsonl");
        assert!(store.record(first.claim(), &o).expect("record"), "{name}");
        let finished = store.finished().expect("finished");
        assert_eq!(finished.len(), 1, "{name}");
        assert_eq!(finished[0].key, first.key, "{name}");
        assert_eq!(finished[0].seed, first.seed, "{name}");
        assert_eq!(finished[0].outcome, o, "{name}");

        // A result is never recorded twice: the claim is stale once the set is done,
        // and changes nothing.
        assert!(!store.record(first.claim(), &o).expect("record"), "{name}");
        assert!(
            !store
                .set_log(first.claim(), &place("logs/two.jsonl"))
                .expect("log"),
            "{name}"
        );
        assert_eq!(
            store.requeue(&[first.claim()]).expect("requeue"),
            0,
            "{name}"
        );
        assert_eq!(store.finished().expect("finished").len(), 1, "{name}");

        // Stopped part-way: back to pending, claimed again later with a second attempt.
        assert_eq!(
            store.requeue(&[second.claim()]).expect("requeue"),
            1,
            "{name}"
        );
        let p = store.progress().expect("progress");
        assert_eq!((p.done, p.running, p.pending), (1, 0, 5), "{name}");
        let again = store.claim_next().expect("claim").expect("a set");
        assert_eq!((again.id, again.attempts), (second.id, 2), "{name}");
        // The first attempt's claim is stale now: it can neither record the set, nor
        // note its log, nor put it back; the second attempt's can.
        let stale = second.claim();
        assert!(!store.record(stale, &o).expect("record"), "{name}");
        assert!(
            !store
                .set_log(stale, &place("logs/stale.jsonl"))
                .expect("log"),
            "{name}"
        );
        assert_eq!(store.requeue(&[stale]).expect("requeue"), 0, "{name}");
        let p = store.progress().expect("progress");
        assert_eq!((p.done, p.running, p.pending), (1, 1, 4), "{name}");
        assert!(
            store
                .set_log(again.claim(), &place("logs/again.jsonl"))
                .expect("log"),
            "{name}"
        );

        // Killed: a running set is found and put back at the next start.
        let requeued = store.requeue_running().expect("requeue running");
        assert_eq!(requeued.len(), 1, "{name}");
        assert_eq!(requeued[0].key, second.key, "{name}");
        assert_eq!(store.progress().expect("progress").running, 0, "{name}");

        // Play everything.
        let mut played = 1;
        while let Some(set) = store.claim_next().expect("claim") {
            assert!(store
                .record(set.claim(), &outcome(2, "logs/l.jsonl"))
                .expect("record"));
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
        assert!(store
            .record(set.claim(), &outcome(1, "logs/l.jsonl"))
            .expect("record"));
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
            assert!(store
                .record(set.claim(), &outcome(1, "logs/l.jsonl"))
                .expect("record"));
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
    assert_eq!(store.schema_version().expect("version"), 5);
    drop(store);
    // Opening again migrates nothing and keeps the data.
    let store = SqliteStore::open(&path, false).expect("reopen");
    assert_eq!(store.schema_version().expect("version"), 5);
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
                known: 5,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        err.map(|e| e.to_string()),
        Some(format!(
            "the league store {} has schema version 7, newer than the 5 this hus knows: use the hus that made it, or a newer one",
            path.display()
        ))
    );
    // Not created when it must exist.
    let missing = SqliteStore::open(&dir.path().join("none.sqlite"), false);
    assert!(missing.is_err());
    assert!(!dir.path().join("none.sqlite").exists());
}

/// Finished sets are numbered 1, 2, ... in the order their results were recorded (not
/// their ids' order), and every read is a page by that number: what is new since a
/// number, the newest of all or of one bot before a number, one set by its key.
#[test]
fn finished_sets_are_numbered_in_the_order_recorded_and_read_by_pages() {
    use league::FinishedQuery;
    for (name, mut store, _dir) in stores() {
        let entries = bots(&["x", "y", "z"]);
        let plan = schedule(&names(&entries), &Format::RoundRobin, 2, 5);
        store.sync(&entries, &plan).expect("sync");
        let mut claimed = Vec::new();
        while let Some(set) = store.claim_next().expect("claim") {
            claimed.push(set);
        }
        assert_eq!(claimed.len(), 6, "{name}");
        // Recorded last to first, with 1 to 6 games: the numbers follow the recording.
        for (i, set) in claimed.iter().rev().enumerate() {
            let games = i as u32 + 1;
            let counted = store
                .record(
                    set.claim(),
                    &outcome(games, &format!("logs/{}.jsonl", set.key.stem())),
                )
                .expect("record");
            assert!(counted, "{name}");
        }
        let keys_of = |sets: &[(u64, league::FinishedSet)]| -> Vec<(u64, SetKey, usize)> {
            sets.iter()
                .map(|(n, s)| (*n, s.key.clone(), s.outcome.games.len()))
                .collect()
        };
        let recorded: Vec<SetKey> = claimed.iter().rev().map(|s| s.key.clone()).collect();
        let all = store
            .finished_sets(&FinishedQuery::After {
                after: 0,
                limit: 100,
            })
            .expect("all");
        let expected: Vec<(u64, SetKey, usize)> = recorded
            .iter()
            .enumerate()
            .map(|(i, k)| (i as u64 + 1, k.clone(), i + 1))
            .collect();
        assert_eq!(keys_of(&all), expected, "{name}");
        // Each with the time its result was recorded, in RFC 3339 (UTC), in order.
        let times: Vec<&str> = all
            .iter()
            .map(|(_, s)| s.finished.as_deref().unwrap_or(""))
            .collect();
        assert!(
            times.iter().all(|t| t.len() >= 20
                && t.as_bytes()[4] == b'-'
                && t.as_bytes()[10] == b'T'
                && t.as_bytes()[13] == b':'
                && t.ends_with('Z')),
            "{name}: {times:?}"
        );
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{name}: {times:?}");
        // Each with its games and faults.
        assert_eq!(
            all[2].1.outcome,
            outcome(3, &format!("logs/{}.jsonl", recorded[2].stem())),
            "{name}"
        );
        // What is new since 4, two at a time.
        let new = store
            .finished_sets(&FinishedQuery::After { after: 4, limit: 1 })
            .expect("after");
        assert_eq!(keys_of(&new), expected[4..5], "{name}");
        // The newest first, and the page before number 3.
        let newest = store
            .finished_sets(&FinishedQuery::Newest {
                bot: None,
                before: None,
                limit: 2,
            })
            .expect("newest");
        assert_eq!(
            keys_of(&newest),
            [expected[5].clone(), expected[4].clone()],
            "{name}"
        );
        let page = store
            .finished_sets(&FinishedQuery::Newest {
                bot: None,
                before: Some(3),
                limit: 10,
            })
            .expect("page");
        assert_eq!(
            keys_of(&page),
            [expected[1].clone(), expected[0].clone()],
            "{name}"
        );
        // One bot's, in either seat.
        let of_z = store
            .finished_sets(&FinishedQuery::Newest {
                bot: Some("z".into()),
                before: None,
                limit: 3,
            })
            .expect("of z");
        let want: Vec<(u64, SetKey, usize)> = expected
            .iter()
            .rev()
            .filter(|(_, k, _)| k.a == "z" || k.b == "z")
            .take(3)
            .cloned()
            .collect();
        assert_eq!(want.len(), 3, "{name}");
        assert_eq!(keys_of(&of_z), want, "{name}");
        // A pair's, in both seatings (here the two rounds), newest first.
        let between = store
            .finished_sets(&FinishedQuery::Between {
                a: "y".into(),
                b: "x".into(),
                before: None,
                limit: 10,
            })
            .expect("between");
        let want: Vec<(u64, SetKey, usize)> = expected
            .iter()
            .rev()
            .filter(|(_, k, _)| {
                [k.a.as_str(), k.b.as_str()] == ["x", "y"]
                    || [k.a.as_str(), k.b.as_str()] == ["y", "x"]
            })
            .cloned()
            .collect();
        assert_eq!(want.len(), 2, "{name}");
        assert_ne!(want[0].1.a, want[1].1.a, "{name}: both seatings");
        assert_eq!(keys_of(&between), want, "{name}");
        let older = store
            .finished_sets(&FinishedQuery::Between {
                a: "x".into(),
                b: "y".into(),
                before: Some(want[0].0),
                limit: 10,
            })
            .expect("between, the next page");
        assert_eq!(keys_of(&older), want[1..], "{name}");
        // The sets in which a bot faulted: every outcome here has a fault of seat B.
        let faulted = store
            .finished_sets(&FinishedQuery::Faulted {
                bot: "z".into(),
                before: None,
                limit: 10,
            })
            .expect("faulted");
        let want: Vec<(u64, SetKey, usize)> = expected
            .iter()
            .rev()
            .filter(|(_, k, _)| k.b == "z")
            .cloned()
            .collect();
        assert!(!want.is_empty(), "{name}");
        assert_eq!(keys_of(&faulted), want, "{name}");
        // By key; an unknown key or a set not finished is none.
        let one = store
            .finished_sets(&FinishedQuery::Key(recorded[3].clone()))
            .expect("by key");
        assert_eq!(keys_of(&one), expected[3..4], "{name}");
        let none = store
            .finished_sets(&FinishedQuery::Key(SetKey {
                round: 9,
                a: "x".into(),
                b: "y".into(),
            }))
            .expect("no such set");
        assert!(none.is_empty(), "{name}");
        // Read in batches, every set once, in order; the last number is returned.
        let mut seen = Vec::new();
        let last = store
            .each_finished(2, &mut |n, s| seen.push((n, s.key)))
            .expect("each");
        assert_eq!(last, 6, "{name}");
        assert_eq!(
            seen,
            expected[2..]
                .iter()
                .map(|(n, k, _)| (*n, k.clone()))
                .collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(store.running().expect("running"), 0, "{name}");
    }
}

/// A store of the first schema, with finished sets, is numbered by the migration in the
/// order its sets finished; new results continue the numbers.
#[test]
fn the_migration_numbers_an_old_stores_finished_sets_in_their_order() {
    use league::FinishedQuery;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("league.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        // The first schema, as hus 0.1 of the last release wrote it, with three sets
        // finished in the order 3, 1 (2 still pending).
        conn.execute_batch(
            "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
             CREATE TABLE bots (name TEXT PRIMARY KEY, command TEXT NOT NULL,
                 active INTEGER NOT NULL CHECK (active IN (0, 1)), added TEXT NOT NULL) WITHOUT ROWID;
             CREATE TABLE sets (id INTEGER PRIMARY KEY, round INTEGER NOT NULL,
                 bot_a TEXT NOT NULL REFERENCES bots(name), bot_b TEXT NOT NULL REFERENCES bots(name),
                 seed INTEGER NOT NULL, scheduled INTEGER NOT NULL CHECK (scheduled IN (0, 1)),
                 status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done')),
                 attempts INTEGER NOT NULL DEFAULT 0, log TEXT, started TEXT, finished TEXT,
                 points_a INTEGER, points_b INTEGER, winner INTEGER CHECK (winner IN (0, 1)),
                 moves_a INTEGER, moves_b INTEGER, move_ms_a REAL, move_ms_b REAL,
                 UNIQUE (round, bot_a, bot_b));
             CREATE INDEX sets_to_play ON sets (status, scheduled, round, id);
             CREATE TABLE games (set_id INTEGER NOT NULL REFERENCES sets(id), game INTEGER NOT NULL,
                 first INTEGER NOT NULL CHECK (first IN (0, 1)), winner INTEGER CHECK (winner IN (0, 1)),
                 points_a INTEGER NOT NULL, points_b INTEGER NOT NULL, reason TEXT NOT NULL,
                 plies INTEGER NOT NULL, is_double INTEGER NOT NULL CHECK (is_double IN (0, 1)),
                 faulted TEXT NOT NULL, PRIMARY KEY (set_id, game)) WITHOUT ROWID;
             CREATE TABLE faults (id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL REFERENCES sets(id),
                 game INTEGER NOT NULL, ply INTEGER NOT NULL, bot INTEGER NOT NULL CHECK (bot IN (0, 1)),
                 kind TEXT NOT NULL, detail TEXT NOT NULL);
             CREATE INDEX faults_by_set ON faults (set_id);
             PRAGMA user_version = 1;
             INSERT INTO bots VALUES ('x', './x', 1, '2026-01-01'), ('y', './y', 1, '2026-01-01');
             INSERT INTO sets (id, round, bot_a, bot_b, seed, scheduled, status, finished,
                               points_a, points_b, winner, moves_a, moves_b, move_ms_a, move_ms_b, log)
             VALUES (1, 1, 'x', 'y', 5, 1, 'done', '2026-01-01T10:00:02Z', 2, 0, 0, 10, 9, 1.0, 1.0, 'logs/r1-x-vs-y.jsonl.gz'),
                    (2, 2, 'x', 'y', 6, 1, 'pending', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                    (3, 3, 'x', 'y', 7, 1, 'done', '2026-01-01T10:00:01Z', 0, 2, 1, 10, 9, 1.0, 1.0, 'logs/r3-x-vs-y.jsonl.gz');
             INSERT INTO games VALUES (1, 1, 0, 0, 2, 0, 'no-moves', 20, 0, ''),
                                      (3, 1, 0, 1, 0, 2, 'no-moves', 21, 0, '');",
        )
        .expect("old schema");
    }
    let mut store = SqliteStore::open(&path, false).expect("migrate");
    assert_eq!(store.schema_version().expect("version"), 5);
    let numbered = |store: &SqliteStore| -> Vec<(u64, u32)> {
        store
            .finished_sets(&FinishedQuery::After {
                after: 0,
                limit: 10,
            })
            .expect("read")
            .into_iter()
            .map(|(n, s)| (n, s.key.round))
            .collect()
    };
    assert_eq!(numbered(&store), [(1, 3), (2, 1)]);
    let set = store.claim_next().expect("claim").expect("set 2");
    assert_eq!(set.key.round, 2);
    assert!(store
        .record(set.claim(), &outcome(1, "logs/l2.jsonl"))
        .expect("record"));
    assert_eq!(numbered(&store), [(1, 3), (2, 1), (3, 2)]);
}

/// The rating history keeps the first point of each bucket of its stride, and thins
/// the older points as the stride grows: after 100,000 sets it holds at most
/// HISTORY_POINTS + 1 points per series, exactly those a plain list kept by the same
/// rule holds.
#[test]
fn the_rating_history_stays_bounded_and_keeps_the_first_point_of_each_bucket() {
    use league::{history_stride, RatingPoint, HISTORY_POINTS};
    // The rule, on a plain list.
    let expected = |sets: u64| -> Vec<u64> {
        let mut kept: Vec<u64> = Vec::new();
        for n in 1..=sets {
            let stride = history_stride(n);
            if let Some(&last) = kept.last() {
                if last / stride == n / stride {
                    continue;
                }
                if history_stride(last) != stride {
                    let mut buckets = std::collections::BTreeSet::new();
                    kept.retain(|k| buckets.insert(k / stride));
                }
            }
            kept.push(n);
        }
        kept
    };
    let point = |n: u64| RatingPoint {
        number: n,
        ratings: vec![
            (String::new(), 30.0 + n as f64, 2.0),
            ("x".into(), 1500.0 + n as f64, 10.0),
            ("y".into(), 1400.0, 12.5),
        ],
    };
    for (name, mut store, _dir) in stores() {
        // PostgreSQL: a transaction per set; fewer sets keep the test short.
        let sets = if name == "postgresql" { 3_000 } else { 100_000 };
        let mut kept = 0;
        for n in 1..=sets {
            if store.record_ratings(&point(n)).expect("record") {
                kept += 1;
            }
        }
        // A number at or below the last is never kept.
        assert!(
            !store.record_ratings(&point(sets)).expect("again"),
            "{name}"
        );
        let history = store.rating_history().expect("history");
        let numbers: Vec<u64> = history.iter().map(|p| p.number).collect();
        assert_eq!(numbers, expected(sets), "{name}");
        assert!(
            numbers.len() as u64 <= HISTORY_POINTS + 1,
            "{name}: {}",
            numbers.len()
        );
        assert!(kept >= numbers.len(), "{name}");
        for p in &history {
            assert_eq!(p.ratings, point(p.number).ratings, "{name}");
        }
    }
    // The figure docs/server.md states.
    assert_eq!(expected(100_000).len(), 98);
    assert_eq!(history_stride(100_000), 1024);
}

/// Pruning marks the logs of the sets numbered up to a number, once each, and names
/// them for deletion; the results stay, so the standings do not change.
#[test]
fn pruned_logs_are_named_once_and_every_result_stays() {
    use league::FinishedQuery;
    for (name, mut store, _dir) in stores() {
        let entries = bots(&["x", "y", "z"]);
        let plan = schedule(&names(&entries), &Format::RoundRobin, 2, 5);
        store.sync(&entries, &plan).expect("sync");
        let mut logs = Vec::new();
        while let Some(set) = store.claim_next().expect("claim") {
            let log = format!("logs/{}.jsonl.gz", set.key.stem());
            assert!(store
                .record(set.claim(), &outcome(2, &log))
                .expect("record"));
            logs.push(place(&log));
        }
        let before = league::read_standings(&*store).expect("standings");
        assert_eq!(store.prune_logs(3).expect("prune"), logs[..3], "{name}");
        assert_eq!(
            store.prune_logs(2).expect("again"),
            Vec::<LogPlace>::new(),
            "{name}"
        );
        assert_eq!(
            store.prune_logs(3).expect("again"),
            Vec::<LogPlace>::new(),
            "{name}"
        );
        assert_eq!(store.prune_logs(5).expect("more"), logs[3..5], "{name}");
        let pruned: Vec<bool> = store
            .finished_sets(&FinishedQuery::After {
                after: 0,
                limit: 10,
            })
            .expect("read")
            .iter()
            .map(|(_, s)| s.pruned)
            .collect();
        assert_eq!(pruned, [true, true, true, true, true, false], "{name}");
        let after = league::read_standings(&*store).expect("standings");
        assert_eq!(after, before, "{name}");
    }
}

/// A claim can pass over held pairs (either seating): the sets behind them are claimed,
/// and the held pair's set waits, pending, with no attempt counted.
#[test]
fn a_claim_passes_over_held_pairs_without_counting_an_attempt() {
    for (name, mut store, _dir) in stores() {
        let entries = bots(&["x", "y", "z"]);
        let plan = schedule(&names(&entries), &Format::RoundRobin, 1, 5);
        store.sync(&entries, &plan).expect("sync");
        let head = &plan[0].key;
        // The head of the queue, named in the other seating.
        let held = vec![(head.b.clone(), head.a.clone())];
        let next = store
            .claim_next_except(&held)
            .expect("claim")
            .expect("a set");
        assert_eq!(next.key, plan[1].key, "{name}");
        let other = store
            .claim_next_except(&held)
            .expect("claim")
            .expect("a set");
        assert_eq!(other.key, plan[2].key, "{name}");
        assert_eq!(
            store.claim_next_except(&held).expect("claim"),
            None,
            "{name}"
        );
        // Once the hold is over, the head is claimed with its first attempt.
        let head_set = store.claim_next().expect("claim").expect("a set");
        assert_eq!((&head_set.key, head_set.attempts), (head, 1), "{name}");
    }
}

/// A server's pick: the chosen set joins the schedule and is claimed in one step, the
/// one chosen before leaves it, and a set already running is not claimed twice.
#[test]
fn a_chosen_set_is_scheduled_and_claimed_and_the_one_before_leaves_the_schedule() {
    for (name, mut store, _dir) in stores() {
        let entries = bots(&["x", "y", "z"]);
        store.sync(&entries, &[]).expect("sync");
        let plan = schedule(&names(&entries), &Format::RoundRobin, 1, 5);
        let first = store
            .schedule_and_claim(&plan[0], None)
            .expect("claim")
            .expect("a set");
        assert_eq!(
            (&first.key, first.seed, first.attempts),
            (&plan[0].key, plan[0].seed, 1),
            "{name}"
        );
        // Running: not claimed again.
        assert_eq!(
            store.schedule_and_claim(&plan[0], None).expect("claim"),
            None,
            "{name}"
        );
        let second = store
            .schedule_and_claim(&plan[1], Some(&plan[0].key))
            .expect("claim")
            .expect("a set");
        assert_eq!(second.key, plan[1].key, "{name}");
        let p = store.progress().expect("progress");
        // The first left the schedule: only the second is scheduled, both run.
        assert_eq!((p.scheduled, p.running), (1, 2), "{name}");
        // Put back, the first is claimed again by its key, its second attempt.
        assert_eq!(
            store.requeue(&[first.claim()]).expect("requeue"),
            1,
            "{name}"
        );
        let again = store
            .schedule_and_claim(&plan[0], Some(&plan[1].key))
            .expect("claim")
            .expect("a set");
        assert_eq!((again.id, again.attempts), (first.id, 2), "{name}");
    }
}

/// A version of `bot` by `author`, its archive `archive`, received at `submitted`.
fn new_version(bot: &str, author: &str, archive: &[u8], submitted: &str) -> NewVersion {
    NewVersion {
        bot: bot.to_string(),
        author: author.to_string(),
        hash: hash_of(archive),
        archive: archive.to_vec(),
        submitted: submitted.to_string(),
    }
}

/// A stand-in for an archive's SHA-256: 64 hexadecimal digits that differ per archive.
fn hash_of(archive: &[u8]) -> String {
    let mut hex: String = archive.iter().map(|b| format!("{b:02x}")).collect();
    hex.truncate(64);
    format!("{hex:0<64}")
}

/// The states of `bot`'s versions, by number.
fn states(store: &dyn Store, bot: &str) -> Vec<(u32, VersionState)> {
    store
        .versions_of(bot)
        .expect("versions")
        .iter()
        .map(|v| (v.number, v.state))
        .collect()
}

/// Versions are numbered from 1 per bot; each reads back as it was added (times in
/// the stores' one form), and one archive is kept per hash however many versions
/// share it.
#[test]
fn versions_are_numbered_per_bot_and_an_archive_is_kept_once_per_hash() {
    for (name, mut store, _dir) in stores() {
        let a1 = new_version("alpha", "ann", b"archive one", "2026-12-05T02:30:00.123Z");
        let b1 = new_version("beta", "bob", b"archive two", "2026-12-05T02:31:00Z");
        // alpha's second version: the same code, sent again.
        let a2 = new_version("alpha", "ann", b"archive one", "2026-12-05T03:31:00+01:00");
        assert_eq!(store.add_version(&a1).expect("add"), 1, "{name}");
        assert_eq!(store.add_version(&b1).expect("add"), 1, "{name}");
        assert_eq!(store.add_version(&a2).expect("add"), 2, "{name}");
        let alpha = store.versions_of("alpha").expect("versions");
        assert_eq!(
            alpha,
            vec![
                VersionRow {
                    bot: "alpha".into(),
                    number: 1,
                    author: "ann".into(),
                    hash: a1.hash.clone(),
                    submitted: "2026-12-05T02:30:00.123000Z".into(),
                    changed: "2026-12-05T02:30:00.123000Z".into(),
                    state: VersionState::Queued,
                    output: String::new(),
                    detail: String::new(),
                },
                VersionRow {
                    bot: "alpha".into(),
                    number: 2,
                    author: "ann".into(),
                    hash: a1.hash.clone(),
                    submitted: "2026-12-05T02:31:00.000000Z".into(),
                    changed: "2026-12-05T02:31:00.000000Z".into(),
                    state: VersionState::Queued,
                    output: String::new(),
                    detail: String::new(),
                },
            ],
            "{name}"
        );
        assert_eq!(alpha[1].league_name(), "alpha.v2");
        assert_eq!(
            store.version("alpha", 2).expect("version").as_ref(),
            Some(&alpha[1]),
            "{name}"
        );
        assert_eq!(store.version("alpha", 3).expect("version"), None, "{name}");
        assert_eq!(store.version("gamma", 1).expect("version"), None, "{name}");
        assert_eq!(
            store.archive(&a1.hash).expect("archive"),
            Some(b"archive one".to_vec()),
            "{name}"
        );
        assert_eq!(
            store.archive(&b1.hash).expect("archive"),
            Some(b"archive two".to_vec()),
            "{name}"
        );
        assert_eq!(
            store.archive(&hash_of(b"none")).expect("archive"),
            None,
            "{name}"
        );
        assert!(store.versions_of("gamma").expect("versions").is_empty());
    }
}

/// An archive is one row however many versions share its hash (SQLite and PostgreSQL
/// counted directly).
#[test]
fn two_versions_of_one_hash_keep_one_archive_row() {
    let versions = [
        new_version("alpha", "ann", b"same", "2026-12-05T02:30:00Z"),
        new_version("beta", "bob", b"same", "2026-12-05T02:31:00Z"),
        new_version("alpha", "ann", b"other", "2026-12-05T02:32:00Z"),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("league.sqlite");
    let mut sqlite = SqliteStore::open(&path, true).expect("file store");
    for v in &versions {
        sqlite.add_version(v).expect("add");
    }
    drop(sqlite);
    let conn = rusqlite::Connection::open(&path).expect("open");
    let rows: Vec<(String, i64)> = conn
        .prepare("SELECT hash, length(bytes) FROM archives ORDER BY length(bytes)")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()
        })
        .expect("archives");
    assert_eq!(
        rows,
        vec![(hash_of(b"same"), 4), (hash_of(b"other"), 5)],
        "sqlite"
    );
    let url = crate::pg::fresh_shared_db();
    let mut pg = PgStore::connect(&url).expect("postgres store");
    for v in &versions {
        pg.add_version(v).expect("add");
    }
    drop(pg);
    let db = url.rsplit('/').next().expect("db name").to_string();
    let out = crate::pg::shared().lock().expect("cluster").psql(
        &db,
        "SELECT hash || ' ' || length(bytes) FROM archives ORDER BY length(bytes)",
    );
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>(),
        vec![
            hash_of(b"same").as_str(),
            "4",
            hash_of(b"other").as_str(),
            "5"
        ],
        "postgresql: {out}"
    );
}

/// Activating a version retires the one active before, and only it; activating the
/// active one changes nothing; an earlier version can be made active again; an
/// unknown version is an error that changes nothing.
#[test]
fn activating_a_version_retires_the_previous_active_one() {
    for (name, mut store, _dir) in stores() {
        for (bot, n) in [("alpha", 4), ("beta", 1)] {
            for i in 0..n {
                let archive = format!("{bot} {i}");
                store
                    .add_version(&new_version(
                        bot,
                        "ann",
                        archive.as_bytes(),
                        "2026-12-05T02:30:00Z",
                    ))
                    .expect("add");
            }
        }
        let t = "2026-12-05T04:00:00Z";
        assert!(store
            .set_version_state(
                "alpha",
                3,
                VersionState::Rejected,
                None,
                Some("timed out"),
                t
            )
            .expect("state"));
        assert_eq!(
            store.activate_version("beta", 1, t).expect("activate"),
            None,
            "{name}"
        );
        assert_eq!(
            store.activate_version("alpha", 1, t).expect("activate"),
            None,
            "{name}"
        );
        assert_eq!(
            store
                .activate_version("alpha", 2, "2026-12-05T05:00:00Z")
                .expect("activate"),
            Some(1),
            "{name}"
        );
        use VersionState::*;
        assert_eq!(
            states(&*store, "alpha"),
            vec![(1, Retired), (2, Active), (3, Rejected), (4, Queued)],
            "{name}"
        );
        // The other bot's active version is untouched.
        assert_eq!(states(&*store, "beta"), vec![(1, Active)], "{name}");
        let v1 = store.version("alpha", 1).expect("version").expect("v1");
        assert_eq!(v1.changed, "2026-12-05T05:00:00.000000Z", "{name}");
        // Again: nothing to retire, nothing changes.
        assert_eq!(
            store.activate_version("alpha", 2, t).expect("activate"),
            None,
            "{name}"
        );
        let v2 = store.version("alpha", 2).expect("version").expect("v2");
        assert_eq!(v2.changed, "2026-12-05T05:00:00.000000Z", "{name}");
        // Back to the first.
        assert_eq!(
            store.activate_version("alpha", 1, t).expect("activate"),
            Some(2),
            "{name}"
        );
        assert_eq!(
            states(&*store, "alpha"),
            vec![(1, Active), (2, Retired), (3, Rejected), (4, Queued)],
            "{name}"
        );
        // An unknown version: an error, and the active one stays.
        let err = store.activate_version("alpha", 9, t).map(|_| ()).err();
        assert!(
            matches!(&err, Some(StoreError::NoVersion { bot, number: 9, .. }) if bot == "alpha"),
            "{name}: {err:?}"
        );
        assert!(
            err.map(|e| e.to_string())
                .is_some_and(|m| m.ends_with("has no version 9 of the bot alpha")),
            "{name}"
        );
        assert_eq!(
            states(&*store, "alpha"),
            vec![(1, Active), (2, Retired), (3, Rejected), (4, Queued)],
            "{name}"
        );
        assert_eq!(
            store
                .versions_in(&[Active])
                .expect("active")
                .iter()
                .map(|v| v.league_name())
                .collect::<Vec<_>>(),
            vec!["alpha.v1", "beta.v1"],
            "{name}"
        );
    }
}

/// A state change names its version: an unknown one is false and changes nothing.
/// Output and detail are kept where given (cut to MAX_VERSION_TEXT bytes at a
/// character boundary) and left as they were where not.
#[test]
fn version_states_output_and_detail_are_kept_and_cut() {
    for (name, mut store, _dir) in stores() {
        store
            .add_version(&new_version("alpha", "ann", b"a", "2026-12-05T02:30:00Z"))
            .expect("add");
        let t = "2026-12-05T02:40:00Z";
        assert!(!store
            .set_version_state("alpha", 2, VersionState::Building, None, None, t)
            .expect("state"));
        assert!(!store
            .set_version_state("beta", 1, VersionState::Building, None, None, t)
            .expect("state"));
        assert_eq!(
            states(&*store, "alpha"),
            vec![(1, VersionState::Queued)],
            "{name}"
        );
        // Output of 'é's (two bytes each) one byte longer than the limit: the cut
        // falls inside the last whole 'é', which goes.
        let long = format!("x{}", "é".repeat(MAX_VERSION_TEXT / 2));
        assert_eq!(long.len(), MAX_VERSION_TEXT + 1);
        assert!(store
            .set_version_state(
                "alpha",
                1,
                VersionState::BuildFailed,
                Some(&long),
                Some("exit 2"),
                t
            )
            .expect("state"));
        let v = store.version("alpha", 1).expect("version").expect("v1");
        assert_eq!(v.output.len(), MAX_VERSION_TEXT - 1, "{name}");
        assert_eq!(v.output, long[..MAX_VERSION_TEXT - 1], "{name}");
        assert_eq!(
            (v.state, v.detail.as_str(), v.changed.as_str()),
            (
                VersionState::BuildFailed,
                "exit 2",
                "2026-12-05T02:40:00.000000Z"
            ),
            "{name}"
        );
        // No output or detail given: both stay.
        assert!(store
            .set_version_state("alpha", 1, VersionState::Checking, None, None, t)
            .expect("state"));
        let again = store.version("alpha", 1).expect("version").expect("v1");
        assert_eq!(
            (again.output.len(), again.detail.as_str()),
            (MAX_VERSION_TEXT - 1, "exit 2")
        );
        // Lists leave both out: their size does not grow with the builds' output.
        for listed in [
            store.versions_of("alpha").expect("versions"),
            store
                .versions_in(&[VersionState::Checking])
                .expect("versions"),
        ] {
            let v1 = listed.iter().find(|v| v.number == 1).expect("v1");
            assert_eq!(
                (v1.output.as_str(), v1.detail.as_str(), v1.state),
                ("", "", VersionState::Checking),
                "{name}"
            );
        }
        // A time that is not RFC 3339 is refused.
        let err = store
            .set_version_state("alpha", 1, VersionState::Checking, None, None, "today")
            .map(|_| ())
            .err();
        assert!(
            matches!(err, Some(StoreError::Invalid { .. })),
            "{name}: {err:?}"
        );
    }
}

/// `versions_in` gives the versions in any of the states asked for, by bot then
/// number; `submitted_since` an author's times from `since` on, exactly.
#[test]
fn versions_by_state_and_an_authors_submissions_since_a_time() {
    for (name, mut store, _dir) in stores() {
        let sent = [
            ("beta", "bob", "2026-12-04T23:59:59.999Z"),
            ("alpha", "ann", "2026-12-05T00:00:00Z"),
            ("beta", "ann", "2026-12-05T00:00:00.5Z"),
            ("alpha", "ann", "2026-12-05T09:00:00+02:00"),
            ("alpha", "bob", "2026-12-05T12:00:00Z"),
            ("alpha", "ann", "2026-12-04T23:59:59.999999Z"),
        ];
        for (i, (bot, author, at)) in sent.iter().enumerate() {
            store
                .add_version(&new_version(bot, author, &[i as u8], at))
                .expect("add");
        }
        let t = "2026-12-05T13:00:00Z";
        store
            .set_version_state("alpha", 2, VersionState::Building, None, None, t)
            .expect("state");
        store.activate_version("beta", 1, t).expect("activate");
        let names = |states: &[VersionState]| -> Vec<String> {
            store
                .versions_in(states)
                .expect("versions")
                .iter()
                .map(|v| v.league_name())
                .collect()
        };
        use VersionState::*;
        assert_eq!(
            names(&[Queued, Building, Checking]),
            vec!["alpha.v1", "alpha.v2", "alpha.v3", "alpha.v4", "beta.v2"],
            "{name}"
        );
        assert_eq!(
            names(&[Building, Active]),
            vec!["alpha.v2", "beta.v1"],
            "{name}"
        );
        assert_eq!(names(&[Retired]), Vec::<String>::new(), "{name}");
        assert_eq!(names(&[]), Vec::<String>::new(), "{name}");
        let since = |author: &str, at: &str| store.submitted_since(author, at).expect("since");
        assert_eq!(
            since("ann", "2026-12-05T00:00:00Z"),
            vec![
                "2026-12-05T00:00:00.000000Z",
                "2026-12-05T00:00:00.500000Z",
                "2026-12-05T07:00:00.000000Z"
            ],
            "{name}"
        );
        assert_eq!(
            since("ann", "2026-12-04T00:00:00Z"),
            vec![
                "2026-12-04T23:59:59.999999Z",
                "2026-12-05T00:00:00.000000Z",
                "2026-12-05T00:00:00.500000Z",
                "2026-12-05T07:00:00.000000Z"
            ],
            "{name}"
        );
        assert_eq!(
            since("bob", "2026-12-05T00:00:00Z"),
            vec!["2026-12-05T12:00:00.000000Z"],
            "{name}"
        );
        assert_eq!(
            since("bob", "2026-12-05T12:00:00.000001Z"),
            Vec::<String>::new()
        );
        assert_eq!(since("cy", "2026-12-01T00:00:00Z"), Vec::<String>::new());
    }
}

/// A version whose stored state is none this code writes is refused as invalid by
/// the reads that meet it, in both stores (`versions_in` asks for known states only).
#[test]
fn a_version_state_the_code_never_writes_is_invalid() {
    let check = |name: &str, store: &dyn Store| {
        for result in [
            store.versions_of("alpha").map(|_| ()),
            store.version("alpha", 1).map(|_| ()),
        ] {
            assert!(
                matches!(&result, Err(StoreError::Invalid { what, .. })
                    if what == "a version's state is \"paused\""),
                "{name}: {result:?}"
            );
        }
    };
    let v = new_version("alpha", "ann", b"a", "2026-12-05T02:30:00Z");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("league.sqlite");
    let mut sqlite = SqliteStore::open(&path, true).expect("file store");
    sqlite.add_version(&v).expect("add");
    rusqlite::Connection::open(&path)
        .and_then(|c| c.execute("UPDATE versions SET state = 'paused'", []))
        .expect("update");
    check("sqlite", &sqlite);
    let url = crate::pg::fresh_shared_db();
    let mut pg = PgStore::connect(&url).expect("postgres store");
    pg.add_version(&v).expect("add");
    let db = url.rsplit('/').next().expect("db name").to_string();
    crate::pg::shared()
        .lock()
        .expect("cluster")
        .psql(&db, "UPDATE versions SET state = 'paused'");
    check("postgresql", &pg);
}

/// A gate test's batches: queued, claimed lowest number first with a lease, renewed by
/// the attempt that holds them, queued again when the lease ran out before a claim's
/// `now` (a new attempt, the old one's renewal and result refused), recorded with their
/// pentanomial and log, numbered in the order they ended, and gone when their test
/// ends. Every store.
#[test]
fn gate_batches_are_claimed_with_a_lease_recorded_and_ended() {
    use league::{BatchDone, BatchState, GateBatch};
    let batch = |test: &str, k: u32| GateBatch {
        test: test.to_string(),
        batch: k,
        candidate: "b.v2".into(),
        active: "b.v1".into(),
        seed: u64::MAX - 3,
        games: 20,
        pairs: 4,
    };
    let done = |counts: [u64; 5], log: &[u8]| BatchDone {
        pentanomial: counts,
        games: 8,
        log: Some(log.to_vec()),
        error: None,
    };
    for (name, mut store, _dir) in stores() {
        assert_eq!(
            store
                .claim_gate_batch("w1", None, 100.0, 30.0)
                .expect("claim"),
            None
        );
        store
            .queue_gate_batches(&[batch("t", 0), batch("t", 1), batch("t", 2)])
            .expect("queue");
        // Queued again: left as they are.
        store.queue_gate_batches(&[batch("t", 0)]).expect("queue");
        let first = store
            .claim_gate_batch("w1", None, 100.0, 30.0)
            .expect("claim")
            .expect("a batch");
        assert_eq!((&first.batch, first.attempt), (&batch("t", 0), 1), "{name}");
        let second = store
            .claim_gate_batch("w2", None, 101.0, 30.0)
            .expect("claim")
            .expect("a batch");
        assert_eq!((second.batch.batch, second.attempt), (1, 1), "{name}");
        // w1 renews to 200; w2 does not, and its lease (to 131) runs out.
        assert!(store.renew_gate_batch("t", 0, 1, 200.0).expect("renew"));
        assert!(!store.renew_gate_batch("t", 0, 2, 200.0).expect("renew"));
        let third = store
            .claim_gate_batch("w3", None, 150.0, 30.0)
            .expect("claim")
            .expect("a batch");
        assert_eq!(
            (third.batch.batch, third.attempt, third.batch.seed),
            (1, 2, u64::MAX - 3),
            "{name}: the expired batch first"
        );
        assert!(!store.renew_gate_batch("t", 1, 1, 300.0).expect("renew"));
        let late = done([0, 0, 0, 0, 4], b"late");
        assert!(!store.finish_gate_batch("t", 1, 1, &late).expect("finish"));
        // Batch 1 ends first, then batch 0.
        assert!(store
            .finish_gate_batch("t", 1, 2, &done([1, 0, 2, 0, 1], b"log one"))
            .expect("finish"));
        assert!(store
            .finish_gate_batch("t", 0, 1, &done([0, 0, 1, 1, 2], b"log zero"))
            .expect("finish"));
        // Recorded once: again, nothing.
        assert!(!store
            .finish_gate_batch("t", 0, 1, &done([0, 0, 0, 0, 4], b"again"))
            .expect("finish"));
        let failed = BatchDone {
            pentanomial: [0; 5],
            games: 0,
            log: None,
            error: Some("bot A could not be started".into()),
        };
        let last = store
            .claim_gate_batch("w1", None, 160.0, 30.0)
            .expect("claim")
            .expect("a batch");
        assert_eq!(last.batch.batch, 2, "{name}");
        assert!(store.finish_gate_batch("t", 2, 1, &failed).expect("finish"));
        assert_eq!(
            store
                .claim_gate_batch("w1", None, 500.0, 30.0)
                .expect("claim"),
            None
        );
        let rows = store.gate_batch_rows("t").expect("rows");
        let seen: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.batch,
                    r.state,
                    r.worker.as_str(),
                    r.attempts,
                    r.pentanomial,
                    r.games,
                    r.ended,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (0, BatchState::Done, "w1", 1, [0, 0, 1, 1, 2], 8, Some(2)),
                (1, BatchState::Done, "w3", 2, [1, 0, 2, 0, 1], 8, Some(1)),
                (2, BatchState::Failed, "w1", 1, [0; 5], 0, Some(3)),
            ],
            "{name}"
        );
        assert_eq!(rows[2].error, "bot A could not be started");
        assert_eq!(
            store.gate_batch_log("t", 0).expect("log"),
            Some(b"log zero".to_vec())
        );
        assert_eq!(store.gate_batch_log("t", 2).expect("log"), None);
        assert_eq!(store.gate_batch_log("t", 9).expect("log"), None);
        // Another test's batches, queued: ending "t" leaves them; a batch held when
        // its test ends can no longer be renewed or recorded.
        store
            .queue_gate_batches(&[batch("u", 0), batch("u", 1)])
            .expect("queue");
        // A claim of test "u" only: none of "t"'s is queued anyway, and none of "w".
        assert_eq!(
            store
                .claim_gate_batch("w1", Some("w"), 600.0, 30.0)
                .expect("claim"),
            None
        );
        let held = store
            .claim_gate_batch("w1", Some("u"), 600.0, 30.0)
            .expect("claim")
            .expect("a batch");
        assert_eq!((held.batch.test.as_str(), held.batch.batch), ("u", 0));
        assert_eq!(store.end_gate_test("t").expect("end"), 3, "{name}");
        assert_eq!(store.gate_batch_rows("t").expect("rows"), Vec::new());
        assert_eq!(store.end_gate_test("u").expect("end"), 2, "{name}");
        assert!(!store.renew_gate_batch("u", 0, 1, 700.0).expect("renew"));
        assert!(!store
            .finish_gate_batch("u", 0, 1, &done([0; 5], b""))
            .expect("finish"));
        store.queue_gate_batches(&[batch("v", 0)]).expect("queue");
        assert_eq!(store.clear_gate_batches().expect("clear"), 1, "{name}");
        assert_eq!(
            store
                .claim_gate_batch("w1", None, 800.0, 30.0)
                .expect("claim"),
            None
        );
    }
}

/// The archive of a version refused for good (build failed, rejected by its checks) is
/// emptied unless another version of its hash still needs it, or it was refused by the
/// gate (which may still let it play a test); the same archive sent again is kept
/// again.
#[test]
fn refused_versions_archives_are_emptied_unless_still_needed() {
    const GATE: &str = "the SPRT gate";
    let now = "2026-12-05T02:40:00Z";
    for (name, mut store, _dir) in stores() {
        let failed = new_version("alpha", "ann", b"fails", "2026-12-05T02:30:00Z");
        let shared = new_version("alpha", "ann", b"shared", "2026-12-05T02:31:00Z");
        let gated = new_version("alpha", "ann", b"gated", "2026-12-05T02:32:00Z");
        for v in [&failed, &shared, &gated] {
            store.add_version(v).expect("add");
        }
        // The same archive as version 2, by another bot, still queued.
        store
            .add_version(&new_version(
                "beta",
                "bob",
                b"shared",
                "2026-12-05T02:33:00Z",
            ))
            .expect("add");
        let mark = |store: &mut Box<dyn Store>, n: u32, state: VersionState, detail: &str| {
            store
                .set_version_state("alpha", n, state, None, Some(detail), now)
                .expect("state");
        };
        mark(&mut store, 1, VersionState::BuildFailed, "the build failed");
        mark(
            &mut store,
            2,
            VersionState::Rejected,
            "it faulted: illegal-move",
        );
        mark(
            &mut store,
            3,
            VersionState::Rejected,
            "the SPRT gate against alpha.v0 did not accept it",
        );

        assert!(
            store
                .drop_refused_archive(&failed.hash, GATE)
                .expect("drop"),
            "{name}"
        );
        assert_eq!(store.archive(&failed.hash).expect("read"), None, "{name}");
        assert!(
            !store
                .drop_refused_archive(&failed.hash, GATE)
                .expect("again"),
            "{name}"
        );
        // beta's version of the same archive is on its way: kept.
        assert!(
            !store
                .drop_refused_archive(&shared.hash, GATE)
                .expect("drop"),
            "{name}"
        );
        assert_eq!(
            store.archive(&shared.hash).expect("read"),
            Some(b"shared".to_vec()),
            "{name}"
        );
        // Refused by the gate: kept.
        assert!(
            !store.drop_refused_archive(&gated.hash, GATE).expect("drop"),
            "{name}"
        );
        assert_eq!(
            store.archive(&gated.hash).expect("read"),
            Some(b"gated".to_vec())
        );
        // The record stays; the archive sent again is kept again.
        assert_eq!(
            states(&*store, "alpha")[0],
            (1, VersionState::BuildFailed),
            "{name}"
        );
        let again = store
            .add_version(&new_version(
                "alpha",
                "ann",
                b"fails",
                "2026-12-05T02:50:00Z",
            ))
            .expect("add");
        assert_eq!(again, 4, "{name}");
        assert_eq!(
            store.archive(&failed.hash).expect("read"),
            Some(b"fails".to_vec()),
            "{name}"
        );
    }
}

/// A shared store counts the gate's leases on its own clock (PostgreSQL's, as the
/// sets' leases), so that players on machines whose clocks differ agree on when a
/// lease ends; a store of one machine counts on that machine's.
#[test]
fn gate_leases_count_on_the_shared_stores_clock() {
    use league::GateBatches;
    let mut pg = PgStore::connect(&crate::pg::fresh_shared_db()).expect("postgres store");
    let first = pg.gate_clock().expect("the database's clock");
    let second = pg.gate_clock().expect("the database's clock");
    // Unix seconds of this century, moving forward.
    assert!(first > 1.7e9 && second >= first, "{first} {second}");
    let mut sqlite = SqliteStore::in_memory().expect("memory store");
    let local = sqlite.gate_clock().expect("this machine's clock");
    assert!(local > 1.7e9, "{local}");
}
