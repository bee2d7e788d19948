//! What only the PostgreSQL store does: leases that expire, results that come too late,
//! sets given back, logs kept compressed, workers' heartbeats, schema versions.

use std::time::Duration;

use league::{schedule, Claims, Format, Heartbeat, PgStore, Reads, Recorded, Schedule, StoreError};

use crate::store::{bots, names, outcome};

/// A store on a fresh database with three bots and their three sets.
fn store_with_sets(name: &str) -> (PgStore, String) {
    let url = crate::pg::fresh_shared_db();
    let mut store = PgStore::connect(&url).expect("connect");
    store.set_name(name);
    let entries = bots(&["x", "y", "z"]);
    let plan = schedule(&names(&entries), &Format::RoundRobin, 1, 9);
    store.sync(&entries, &plan).expect("sync");
    (store, url)
}

/// A lease that runs out puts the set back in reach of another worker, whose claim is
/// a new attempt; the first worker's renewal and result then find the set taken: the
/// renewal says so and the result is kept as a duplicate that counts for nothing.
#[test]
fn an_expired_lease_is_claimed_again_and_the_late_result_is_a_duplicate() {
    let (mut one, url) = store_with_sets("one");
    let mut two = PgStore::connect(&url).expect("connect");
    two.set_name("two");
    // While the lease holds (a long one: a stall of the machine between the two
    // claims must not let it expire), the other worker gets the next set, not this one.
    let long = Duration::from_secs(60);
    let held = one.claim(long, &[]).expect("claim").expect("a set");
    assert_eq!(held.attempts, 1);
    let other = two.claim(long, &[]).expect("claim").expect("a set");
    assert_ne!(other.id, held.id);
    // A renewal sets the lease from now: a short one, which then runs out after two
    // of its lengths without renewal (the database's clock).
    let lease = Duration::from_millis(300);
    assert!(one.renew(held.id, 1, lease).expect("renew"));
    std::thread::sleep(lease * 2);
    let again = two
        .claim(lease, &[])
        .expect("claim")
        .expect("the expired set");
    assert_eq!((again.id, again.attempts), (held.id, 2));
    assert!(
        !one.renew(held.id, 1, lease).expect("renew"),
        "the lease is lost"
    );
    // The late result of attempt 1: kept, not counted.
    let late = outcome(3, "logs/late.jsonl");
    assert_eq!(
        one.record_attempt(held.id, 1, &late, b"late log\n")
            .expect("record"),
        Recorded::Duplicate
    );
    assert_eq!(one.progress().expect("progress").done, 0);
    assert_eq!(one.duplicates().expect("duplicates"), 1);
    // The current attempt's result counts, once; sent again (a lost answer), it is
    // still the counted one and changes nothing.
    let good = outcome(2, "logs/good.jsonl");
    assert_eq!(
        two.record_attempt(held.id, 2, &good, b"good log\n")
            .expect("record"),
        Recorded::Counted
    );
    assert_eq!(
        two.record_attempt(held.id, 2, &good, b"good log\n")
            .expect("record"),
        Recorded::Counted
    );
    let finished = two.finished().expect("finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].outcome, good);
    assert_eq!(two.duplicates().expect("duplicates"), 1);
    // The kept log is the counted attempt's.
    let log = two.log(held.id).expect("log").expect("a log");
    assert_eq!((log.attempt, log.text.as_str()), (2, "good log\n"));
    assert_eq!(log.key, held.key);
    assert_eq!(two.log(other.id).expect("log"), None);
    // The same log still packed, as the server streams it.
    let packed = two.packed_log(held.id).expect("log").expect("a log");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut packed.reader(), &mut text).expect("gzip");
    assert_eq!((packed.attempt, text.as_str()), (2, "good log\n"));
    assert_eq!(packed.key, held.key);
    assert_eq!(two.packed_log(other.id).expect("log"), None);
}

/// A late result whose set nobody claimed meanwhile still counts: its attempt holds the
/// set, so counting it loses nothing and doubles nothing.
#[test]
fn a_result_past_its_lease_counts_when_nobody_took_the_set() {
    let (mut one, _url) = store_with_sets("one");
    let lease = Duration::from_millis(200);
    let held = one.claim(lease, &[]).expect("claim").expect("a set");
    std::thread::sleep(lease * 2);
    assert_eq!(
        one.record_attempt(held.id, 1, &outcome(1, "logs/l.jsonl"), b"{}\n")
            .expect("record"),
        Recorded::Counted
    );
    assert_eq!(one.progress().expect("progress").done, 1);
    assert_eq!(one.duplicates().expect("duplicates"), 0);
}

/// A worker that cannot start a bot gives the set back at once (not forfeited, no
/// attempt lost to the lease) and skips that bot's sets from then on.
#[test]
fn a_released_set_is_pending_again_and_skipped_bots_are_left_to_others() {
    let (mut one, _url) = store_with_sets("one");
    let lease = Duration::from_secs(60);
    let skip = vec!["x".to_string()];
    let set = one
        .claim(lease, &skip)
        .expect("claim")
        .expect("a set without x");
    assert_eq!((set.key.a.as_str(), set.key.b.as_str()), ("y", "z"));
    assert_eq!(one.claim(lease, &skip).expect("claim"), None);
    assert!(one.release(set.id, set.attempts).expect("release"));
    let p = one.progress().expect("progress");
    assert_eq!((p.running, p.pending), (0, 3));
    let again = one
        .claim(lease, &skip)
        .expect("claim")
        .expect("the released set");
    assert_eq!((again.id, again.attempts), (set.id, 2));
    // A stale release (an older attempt) changes nothing.
    assert!(!one.release(set.id, 1).expect("release"));
    assert_eq!(one.progress().expect("progress").running, 1);
}

/// Heartbeats, sets in flight and finished sets per worker.
#[test]
fn workers_are_listed_with_heartbeat_in_flight_and_finished_sets() {
    let (mut one, url) = store_with_sets("one");
    let mut two = PgStore::connect(&url).expect("connect");
    two.set_name("two");
    let beat = |concurrency| Heartbeat {
        concurrency,
        ..Heartbeat::default()
    };
    one.heartbeat(&beat(2)).expect("heartbeat");
    two.heartbeat(&Heartbeat {
        problem: Some("cannot start y".into()),
        leaves: vec!["y".into(), "x".into()],
        ..beat(1)
    })
    .expect("heartbeat");
    let lease = Duration::from_secs(60);
    let a = one.claim(lease, &[]).expect("claim").expect("set");
    let b = one.claim(lease, &[]).expect("claim").expect("set");
    let c = two.claim(lease, &[]).expect("claim").expect("set");
    one.record_attempt(a.id, 1, &outcome(1, "logs/l.jsonl"), b"x\n")
        .expect("record");
    two.goodbye().expect("goodbye");
    let rows = one.workers().expect("workers");
    let view: Vec<(String, i32, i64, i64, i64, bool)> = rows
        .iter()
        .map(|w| {
            (
                w.name.clone(),
                w.concurrency,
                w.in_flight,
                w.last_hour,
                w.finished,
                w.stopped,
            )
        })
        .collect();
    assert_eq!(
        view,
        [
            ("one".to_string(), 2, 1, 1, 1, false),
            ("two".to_string(), 1, 1, 0, 0, true),
        ]
    );
    assert!(rows.iter().all(|w| w.seen_ago >= 0.0 && w.seen_ago < 60.0));
    // What a worker said of its problem, the bots it leaves in name order.
    let said: Vec<(Option<String>, Vec<String>)> = rows
        .iter()
        .map(|w| (w.problem.clone(), w.leaves.clone()))
        .collect();
    assert_eq!(
        said,
        [
            (None, vec![]),
            (
                Some("cannot start y".to_string()),
                vec!["x".to_string(), "y".to_string()]
            )
        ]
    );
    let _ = (b, c);
}

/// A fresh database gets the schema; a database from a newer hus is refused by name.
#[test]
fn the_schema_is_made_once_and_a_newer_one_is_refused() {
    let url = crate::pg::fresh_shared_db();
    let mut store = PgStore::connect(&url).expect("connect");
    assert_eq!(store.schema_version().expect("version"), 7);
    drop(store);
    let mut again = PgStore::connect(&url).expect("reconnect");
    assert_eq!(again.schema_version().expect("version"), 7);
    drop(again);
    let db = url.rsplit('/').next().expect("db name").to_string();
    crate::pg::shared()
        .lock()
        .expect("cluster")
        .psql(&db, "UPDATE hus_schema SET version = 8");
    let err = PgStore::connect(&url).map(|_| ()).err();
    assert!(
        matches!(
            err,
            Some(StoreError::NewerSchema {
                found: 8,
                known: 7,
                ..
            })
        ),
        "{err:?}"
    );
    let port = url
        .split(':')
        .nth(2)
        .and_then(|p| p.split('/').next())
        .unwrap_or("");
    assert_eq!(
        err.map(|e| e.to_string()),
        Some(format!(
            "the league store postgres://hus@127.0.0.1:{port}/{db} has schema version 8, newer than the 7 this hus knows: use the hus that made it, or a newer one"
        ))
    );
}

/// A URL that is not one, and a server that is not there, are named plainly; the
/// password never appears in a message.
#[test]
fn bad_urls_and_absent_servers_are_named_without_the_password() {
    let err = PgStore::connect("postgres://u:pw@host:notaport/db")
        .map(|_| ())
        .err();
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.starts_with("the league store URL: not a valid PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB): "),
        "{text}"
    );
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let err = PgStore::connect(&format!("postgres://u:secret@127.0.0.1:{port}/db"))
        .map(|_| ())
        .err();
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.starts_with(&format!(
            "the league store postgres://u@127.0.0.1:{port}/db: cannot connect: "
        )),
        "{text}"
    );
    assert!(!text.contains("secret"), "{text}");
}

/// A database of schema 2 with finished sets is numbered by migration 3 in the order
/// its sets finished, its counter set to the last number, so that new results continue
/// the numbers; migration 4 adds an empty rating history.
#[test]
fn the_migration_numbers_an_old_databases_finished_sets_in_their_order() {
    use league::FinishedQuery;
    let (mut store, url) = store_with_sets("old");
    // Two results, the second set's first: finished in the order (second, first).
    let first = store.claim_next().expect("claim").expect("a set");
    let second = store.claim_next().expect("claim").expect("a set");
    assert!(store
        .record(second.claim(), &outcome(1, "logs/l2.jsonl"))
        .expect("record"));
    assert!(store
        .record(first.claim(), &outcome(1, "logs/l1.jsonl"))
        .expect("record"));
    drop(store);
    // Back to schema 2, as an older hus left it: no numbers, no counter, no history,
    // and the finish times in the order (second, first).
    let db = url.rsplit('/').next().expect("db name").to_string();
    crate::pg::shared().lock().expect("cluster").psql(
        &db,
        &format!(
            "DROP TABLE gate_batches; DROP TABLE versions; DROP TABLE archives;
             DROP TABLE done_counter; DROP TABLE rating_history;
             ALTER TABLE sets DROP COLUMN done_seq; ALTER TABLE sets DROP COLUMN pruned;
             DROP INDEX sets_scheduled; DROP INDEX sets_claimable;
             UPDATE sets SET finished = '2026-01-01T10:00:02Z' WHERE id = {};
             UPDATE sets SET finished = '2026-01-01T10:00:01Z' WHERE id = {};
             UPDATE hus_schema SET version = 2;",
            first.id, second.id
        ),
    );
    let mut store = PgStore::connect(&url).expect("migrate");
    assert_eq!(store.schema_version().expect("version"), 7);
    let numbered = |store: &PgStore| -> Vec<(u64, i64)> {
        store
            .finished_sets(&FinishedQuery::After {
                after: 0,
                limit: 10,
            })
            .expect("read")
            .into_iter()
            .map(|(n, s)| {
                (
                    n,
                    if s.key == first.key {
                        first.id
                    } else {
                        second.id
                    },
                )
            })
            .collect()
    };
    assert_eq!(numbered(&store), [(1, second.id), (2, first.id)]);
    let third = store.claim_next().expect("claim").expect("the third set");
    assert!(store
        .record(third.claim(), &outcome(1, "logs/l3.jsonl"))
        .expect("record"));
    let all = store
        .finished_sets(&FinishedQuery::After {
            after: 2,
            limit: 10,
        })
        .expect("read");
    assert_eq!(all.len(), 1);
    assert_eq!((all[0].0, &all[0].1.key), (3, &third.key));
    assert_eq!(store.progress().expect("progress").done, 3);
    assert!(store.rating_history().expect("history").is_empty());
}
