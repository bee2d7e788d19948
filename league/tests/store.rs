//! Every test here runs against each implementation of `Store`: SQLite in memory and in
//! a file, and PostgreSQL (a real server, see `pg.rs`, a fresh database per test).

use league::{
    schedule, BotEntry, Claims, FaultRow, Format, GameRow, LogPlace, PgStore, Reads, Schedule,
    SetKey, SetOutcome, SqliteStore, Store, StoreError,
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
    assert_eq!(store.schema_version().expect("version"), 3);
    drop(store);
    // Opening again migrates nothing and keeps the data.
    let store = SqliteStore::open(&path, false).expect("reopen");
    assert_eq!(store.schema_version().expect("version"), 3);
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
                known: 3,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        err.map(|e| e.to_string()),
        Some(format!(
            "the league store {} has schema version 7, newer than the 3 this hus knows: use the hus that made it, or a newer one",
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
    assert_eq!(store.schema_version().expect("version"), 3);
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
