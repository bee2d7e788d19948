//! The store in one SQLite file (`league.sqlite` in the league's directory). This module
//! owns the schema: the numbered migrations below, applied in one transaction when the
//! store is opened, with the schema version kept in `PRAGMA user_version`. The database
//! runs in WAL mode, so `hus standings` can read while a league writes.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{
    params, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};

use super::gate_batches::{
    stored_counts, BatchDone, BatchState, ClaimedBatch, GateBatch, GateBatchRow, GateBatches,
    RawBatchRow, RawClaim,
};
use super::rows::{
    bot_changes, rating_points, requeued, seats_to_text, seed_to_sql, selection, side_to_sql,
    stored_logs, BotChange, FaultRowText, FinishedRows, GameRowText, Param, SetRowText,
};
use super::versions::{
    cut_text, no_such_version, stored_state, stored_time, NewVersion, VersionRow, VersionState,
    Versions,
};
use super::{
    history_step, BotEntry, BotRow, Claim, ClaimedSet, Claims, FinishedQuery, FinishedSet,
    HistoryStep, Progress, RatingPoint, Reads, Requeued, RunningSet, Schedule, SetOutcome,
    SetStatus, StoreError, SyncReport,
};
use crate::log_place::LogPlace;
use crate::schedule::{PlannedSet, SetKey};

/// The migrations, in order: migration `i` takes the schema from version `i` to `i + 1`.
/// Append new ones; never edit one that has shipped.
const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    "
    CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE bots (
        name    TEXT PRIMARY KEY,
        command TEXT NOT NULL,
        active  INTEGER NOT NULL CHECK (active IN (0, 1)),
        added   TEXT NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE sets (
        id        INTEGER PRIMARY KEY,
        round     INTEGER NOT NULL,
        bot_a     TEXT NOT NULL REFERENCES bots(name),
        bot_b     TEXT NOT NULL REFERENCES bots(name),
        seed      INTEGER NOT NULL,
        scheduled INTEGER NOT NULL CHECK (scheduled IN (0, 1)),
        status    TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done')),
        attempts  INTEGER NOT NULL DEFAULT 0,
        log       TEXT,
        started   TEXT,
        finished  TEXT,
        points_a  INTEGER,
        points_b  INTEGER,
        winner    INTEGER CHECK (winner IN (0, 1)),
        moves_a   INTEGER,
        moves_b   INTEGER,
        move_ms_a REAL,
        move_ms_b REAL,
        UNIQUE (round, bot_a, bot_b)
    );
    CREATE INDEX sets_to_play ON sets (status, scheduled, round, id);

    CREATE TABLE games (
        set_id    INTEGER NOT NULL REFERENCES sets(id),
        game      INTEGER NOT NULL,
        first     INTEGER NOT NULL CHECK (first IN (0, 1)),
        winner    INTEGER CHECK (winner IN (0, 1)),
        points_a  INTEGER NOT NULL,
        points_b  INTEGER NOT NULL,
        reason    TEXT NOT NULL,
        plies     INTEGER NOT NULL,
        is_double INTEGER NOT NULL CHECK (is_double IN (0, 1)),
        faulted   TEXT NOT NULL,
        PRIMARY KEY (set_id, game)
    ) WITHOUT ROWID;

    CREATE TABLE faults (
        id     INTEGER PRIMARY KEY,
        set_id INTEGER NOT NULL REFERENCES sets(id),
        game   INTEGER NOT NULL,
        ply    INTEGER NOT NULL,
        bot    INTEGER NOT NULL CHECK (bot IN (0, 1)),
        kind   TEXT NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX faults_by_set ON faults (set_id);
    ",
    // 2: each finished set's number in the order results were recorded (what a reader
    // has not seen yet is what is numbered above the last number it saw), with the
    // indexes that keep a server's every step independent of the sets behind it: by
    // number, by bot and number, and the sets of the current schedule; and whether a
    // finished set's log was pruned (its result stays).
    "
    ALTER TABLE sets ADD COLUMN done_seq INTEGER;
    ALTER TABLE sets ADD COLUMN pruned INTEGER NOT NULL DEFAULT 0 CHECK (pruned IN (0, 1));
    UPDATE sets SET done_seq = numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY finished, id) AS n
              FROM sets WHERE status = 'done') AS numbered
        WHERE numbered.id = sets.id;
    CREATE UNIQUE INDEX sets_done ON sets (done_seq);
    CREATE INDEX sets_done_by_a ON sets (bot_a, done_seq) WHERE done_seq IS NOT NULL;
    CREATE INDEX sets_done_by_b ON sets (bot_b, done_seq) WHERE done_seq IS NOT NULL;
    CREATE INDEX sets_scheduled ON sets (scheduled) WHERE scheduled = 1;
    ",
    // 3: the rating history, thinned to a bounded number of points per series
    // (`history_stride`); the bot '' is the first-move advantage.
    "
    CREATE TABLE rating_history (
        number    INTEGER NOT NULL,
        bot       TEXT NOT NULL,
        value     REAL NOT NULL,
        std_error REAL NOT NULL,
        PRIMARY KEY (number, bot)
    ) WITHOUT ROWID;
    ",
    // 4: uploaded bots' versions (docs/upload.md) and their archives, one per hash.
    // Times are text in one fixed form (`versions::stored_time`), whose order is time
    // order; a state is not checked here, so that a row holding another is read as
    // invalid rather than never written. One active version per bot, by index.
    "
    CREATE TABLE archives (
        hash  TEXT PRIMARY KEY,
        bytes BLOB NOT NULL
    );

    CREATE TABLE versions (
        bot       TEXT NOT NULL,
        number    INTEGER NOT NULL CHECK (number >= 1),
        author    TEXT NOT NULL,
        hash      TEXT NOT NULL REFERENCES archives(hash),
        submitted TEXT NOT NULL,
        changed   TEXT NOT NULL,
        state     TEXT NOT NULL,
        output    TEXT NOT NULL,
        detail    TEXT NOT NULL,
        PRIMARY KEY (bot, number)
    );
    CREATE INDEX versions_by_author ON versions (author, submitted);
    CREATE INDEX versions_by_state ON versions (state, bot, number);
    CREATE UNIQUE INDEX versions_one_active ON versions (bot) WHERE state = 'active';
    ",
    // 5: the SPRT gate's batches (store::gate_batches): claimed with a lease (Unix
    // seconds of the claimer's clock), their pentanomial and log once played.
    "
    CREATE TABLE gate_batches (
        test        TEXT NOT NULL,
        batch       INTEGER NOT NULL CHECK (batch >= 0),
        candidate   TEXT NOT NULL,
        active      TEXT NOT NULL,
        seed        INTEGER NOT NULL,
        games       INTEGER NOT NULL,
        pairs       INTEGER NOT NULL,
        state       TEXT NOT NULL,
        worker      TEXT NOT NULL DEFAULT '',
        attempts    INTEGER NOT NULL DEFAULT 0,
        lease_until REAL,
        c0 INTEGER NOT NULL DEFAULT 0,
        c1 INTEGER NOT NULL DEFAULT 0,
        c2 INTEGER NOT NULL DEFAULT 0,
        c3 INTEGER NOT NULL DEFAULT 0,
        c4 INTEGER NOT NULL DEFAULT 0,
        played      INTEGER NOT NULL DEFAULT 0,
        error       TEXT NOT NULL DEFAULT '',
        log         BLOB,
        ended       INTEGER,
        PRIMARY KEY (test, batch)
    );
    CREATE INDEX gate_batches_by_state ON gate_batches (state, batch, test);
    ",
];

/// The settings key of the number up to which the logs were pruned.
const PRUNED_SETTING: &str = "logs_pruned_up_to";

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A league's store in an SQLite file.
pub struct SqliteStore {
    conn: Connection,
    place: String,
    hook: Hook,
}

/// Test hook: fails an operation at a named point, as a crash between two statements
/// would. Empty outside tests.
#[derive(Default)]
struct Hook {
    #[cfg(test)]
    fail_at: Option<&'static str>,
}

impl Hook {
    /// Fails here when a test asked for it: the transaction is then dropped uncommitted,
    /// exactly what a crash at this point leaves.
    fn check(&self, _place: &str, _at: &'static str) -> Result<(), StoreError> {
        #[cfg(test)]
        if self.fail_at == Some(_at) {
            return Err(StoreError::Invalid {
                place: _place.to_string(),
                what: format!("injected failure at {_at}"),
            });
        }
        Ok(())
    }
}

/// Starts a write transaction (taking the write lock at once, so it cannot fail half-way
/// for lack of it).
fn begin<'c>(conn: &'c mut Connection, place: &str) -> Result<Transaction<'c>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| backend(place, "cannot start a transaction", e))
}

/// Runs `work` in one write transaction (`begin`), committed when it returns `Ok` and
/// rolled back when it fails: every write's begin and commit are here. `what` names the
/// work in a failed commit.
fn in_transaction<T>(
    conn: &mut Connection,
    place: &str,
    what: &str,
    work: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = begin(conn, place)?;
    let value = work(&tx)?;
    tx.commit()
        .map_err(|e| backend(place, &format!("cannot commit {what}"), e))?;
    Ok(value)
}

impl SqliteStore {
    /// Opens the store at `path`, creating it if `create`, and brings its schema up to
    /// date.
    pub fn open(path: &Path, create: bool) -> Result<SqliteStore, StoreError> {
        let place = path.display().to_string();
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        // SQLite opens its files itself: none of them (the database, its write-ahead
        // log, its shared memory, its journal) may be a link, which SQLite would follow.
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            referee::refuse_symlink(Path::new(&name)).map_err(|e| StoreError::Backend {
                place: place.clone(),
                what: "cannot open it".to_string(),
                cause: Box::new(e),
            })?;
        }
        // And none made after the check: SQLite refuses a link anywhere in the path it
        // is given with NOFOLLOW, so it is given the directory's real path (the
        // directory may be a link: the user named it).
        let real = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => std::fs::canonicalize(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            })
            .ok()
            .map(|dir| dir.join(name)),
            _ => None,
        };
        if real.is_some() {
            flags |= OpenFlags::SQLITE_OPEN_NOFOLLOW;
        }
        let conn = Connection::open_with_flags(real.as_deref().unwrap_or(path), flags)
            .map_err(|e| backend(&place, "cannot open it", e))?;
        SqliteStore::init(conn, place)
    }

    /// A store in memory, for tests.
    pub fn in_memory() -> Result<SqliteStore, StoreError> {
        let conn =
            Connection::open_in_memory().map_err(|e| backend(":memory:", "cannot open it", e))?;
        SqliteStore::init(conn, ":memory:".to_string())
    }

    fn init(conn: Connection, place: String) -> Result<SqliteStore, StoreError> {
        // A reader (`hus standings`) may meet a write in progress: wait for it.
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(|e| backend(&place, "cannot set its busy timeout", e))?;
        // WAL: readers do not block the writer. NORMAL: a commit survives the process
        // being killed (it is in the OS's cache); a power cut may lose the last commits,
        // whose sets are then played again, never counted twice.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| backend(&place, "cannot switch it to WAL mode", e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| backend(&place, "cannot set its synchronous mode", e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| backend(&place, "cannot enable its foreign keys", e))?;
        let mut store = SqliteStore {
            conn,
            place,
            hook: Hook::default(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version in the database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| backend(&self.place, "cannot read its schema version", e))
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let place = self.place.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| backend(&place, "cannot start the migration", e))?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| backend(&place, "cannot read its schema version", e))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                place,
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(sql)
                .map_err(|e| backend(&place, &format!("migration {} failed", i + 1), e))?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)
                .map_err(|e| backend(&place, "cannot write its schema version", e))?;
        }
        tx.commit()
            .map_err(|e| backend(&place, "cannot commit the migration", e))
    }

    /// Test hook: make every operation that passes `at` fail there.
    #[cfg(test)]
    pub(crate) fn fail_at(&mut self, at: Option<&'static str>) {
        self.hook.fail_at = at;
    }

    /// Where the store is: its file.
    pub fn place(&self) -> PathBuf {
        PathBuf::from(&self.place)
    }
}

fn backend(place: &str, what: &str, e: rusqlite::Error) -> StoreError {
    StoreError::Backend {
        place: place.to_string(),
        what: what.to_string(),
        cause: Box::new(e),
    }
}

fn now() -> String {
    referee::now_rfc3339()
}

/// Claims the first pending set (by round, then id) whose bots are both active and that
/// meets `condition` (over `sets s`, with its own parameters `params`): marks it running
/// and counts the attempt. The one claim of [`Store::claim_next_except`] and
/// [`Store::schedule_and_claim`].
fn claim_where(
    tx: &rusqlite::Transaction<'_>,
    condition: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<Option<ClaimedSet>> {
    let next = tx
        .query_row(
            &format!(
                "SELECT s.id, s.round, s.bot_a, s.bot_b, s.seed, s.attempts
                 FROM sets s
                 JOIN bots a ON a.name = s.bot_a
                 JOIN bots b ON b.name = s.bot_b
                 WHERE s.status = 'pending' AND a.active = 1 AND b.active = 1 AND {condition}
                 ORDER BY s.round, s.id
                 LIMIT 1"
            ),
            params,
            |r| {
                Ok(ClaimedSet {
                    id: r.get(0)?,
                    key: SetKey {
                        round: r.get(1)?,
                        a: r.get(2)?,
                        b: r.get(3)?,
                    },
                    seed: r.get::<_, i64>(4)? as u64,
                    attempts: r.get::<_, u32>(5)? + 1,
                })
            },
        )
        .optional()?;
    if let Some(set) = &next {
        tx.execute(
            "UPDATE sets SET status = 'running', attempts = attempts + 1, started = ?2, log = NULL
             WHERE id = ?1",
            params![set.id, now()],
        )?;
    }
    Ok(next)
}

impl Claims for SqliteStore {
    fn requeue(&mut self, claims: &[Claim]) -> Result<usize, StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "the stopped sets", |tx| {
            let work = || -> rusqlite::Result<usize> {
                let mut stmt = tx.prepare(
                    "UPDATE sets SET status = 'pending', log = NULL, started = NULL
                 WHERE id = ?1 AND attempts = ?2 AND status = 'running'",
                )?;
                let mut put_back = 0;
                for claim in claims {
                    put_back += stmt.execute(params![claim.id, claim.attempt])?;
                }
                Ok(put_back)
            };
            let put_back =
                work().map_err(|e| backend(&place, "cannot put stopped sets back", e))?;
            Ok(put_back)
        })
    }

    fn set_log(&mut self, claim: Claim, log: &LogPlace) -> Result<bool, StoreError> {
        self.conn
            .execute(
                "UPDATE sets SET log = ?3 WHERE id = ?1 AND attempts = ?2 AND status = 'running'",
                params![claim.id, claim.attempt, log.to_string()],
            )
            .map(|changed| changed == 1)
            .map_err(|e| backend(&self.place, "cannot note a set's log", e))
    }

    fn record(&mut self, claim: Claim, outcome: &SetOutcome) -> Result<bool, StoreError> {
        let place = self.place.clone();
        let stamp = now();
        let id = claim.id;
        in_transaction(&mut self.conn, &place, "a set's result", |tx| {
            let held: Option<(String, u32)> = tx
                .query_row(
                    "SELECT status, attempts FROM sets WHERE id = ?1",
                    params![id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(|e| backend(&place, "cannot read a set", e))?;
            // Done already, or claimed again since: this claim is stale, and its result is
            // not recorded (never twice, never over a later attempt's).
            if held != Some((SetStatus::Running.as_str().to_string(), claim.attempt)) {
                return Ok(false);
            }
            let games = || -> rusqlite::Result<()> {
                let mut stmt = tx.prepare(
                "INSERT INTO games (set_id, game, first, winner, points_a, points_b, reason, plies, is_double, faulted)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
                for g in &outcome.games {
                    stmt.execute(params![
                        id,
                        g.game,
                        side_to_sql(g.first),
                        g.winner.map(side_to_sql),
                        g.points[0],
                        g.points[1],
                        g.reason.as_str(),
                        g.plies,
                        g.double,
                        seats_to_text(&g.faulted)
                    ])?;
                }
                Ok(())
            };
            games().map_err(|e| backend(&place, "cannot record a set's games", e))?;
            self.hook.check(&place, "record-after-games")?;
            let faults = || -> rusqlite::Result<()> {
                let mut stmt = tx.prepare(
                "INSERT INTO faults (set_id, game, ply, bot, kind, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
                for f in &outcome.faults {
                    stmt.execute(params![
                        id,
                        f.game,
                        f.ply,
                        side_to_sql(f.bot),
                        f.kind.as_str(),
                        f.detail
                    ])?;
                }
                Ok(())
            };
            faults().map_err(|e| backend(&place, "cannot record a set's faults", e))?;
            self.hook.check(&place, "record-after-faults")?;
            tx.execute(
                "UPDATE sets SET status = 'done', finished = ?2, log = ?3,
                 points_a = ?4, points_b = ?5, winner = ?6,
                 moves_a = ?7, moves_b = ?8, move_ms_a = ?9, move_ms_b = ?10,
                 done_seq = (SELECT COALESCE(MAX(done_seq), 0) + 1 FROM sets)
             WHERE id = ?1",
                params![
                    id,
                    stamp,
                    outcome.log.to_string(),
                    outcome.points[0],
                    outcome.points[1],
                    outcome.winner.map(side_to_sql),
                    outcome.moves[0] as i64,
                    outcome.moves[1] as i64,
                    outcome.move_ms[0],
                    outcome.move_ms[1]
                ],
            )
            .map_err(|e| backend(&place, "cannot mark a set done", e))?;
            self.hook.check(&place, "record-before-commit")?;
            Ok(true)
        })
    }
}

impl Reads for SqliteStore {
    fn settings(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let read = || -> rusqlite::Result<BTreeMap<String, String>> {
            let mut stmt = self.conn.prepare("SELECT key, value FROM settings")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        };
        read().map_err(|e| backend(&self.place, "cannot read the settings", e))
    }

    fn bots(&self) -> Result<Vec<BotRow>, StoreError> {
        let read = || -> rusqlite::Result<Vec<BotRow>> {
            let mut stmt = self
                .conn
                .prepare("SELECT name, command, active FROM bots ORDER BY added, name")?;
            let rows = stmt.query_map([], |r| {
                Ok(BotRow {
                    name: r.get(0)?,
                    command: r.get(1)?,
                    active: r.get(2)?,
                })
            })?;
            rows.collect()
        };
        read().map_err(|e| backend(&self.place, "cannot read the bots", e))
    }

    fn finished_sets(&self, query: &FinishedQuery) -> Result<Vec<(u64, FinishedSet)>, StoreError> {
        let selection = selection(query);
        let ids = selection.ids.replace('$', "?");
        let params: Vec<Box<dyn rusqlite::ToSql>> = selection
            .params
            .into_iter()
            .map(|p| -> Box<dyn rusqlite::ToSql> {
                match p {
                    Param::Int(n) => Box::new(n),
                    Param::Text(t) => Box::new(t),
                }
            })
            .collect();
        let params = rusqlite::params_from_iter(params.iter());
        // One snapshot for the three reads.
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| backend(&self.place, "cannot start a read", e))?;
        let read = || -> rusqlite::Result<FinishedRows> {
            let mut stmt = tx.prepare(&format!(
                "SELECT id, done_seq, round, bot_a, bot_b, seed, points_a, points_b, winner,
                        moves_a, moves_b, move_ms_a, move_ms_b, log, pruned, finished
                 FROM sets WHERE id IN ({ids}) ORDER BY done_seq {}",
                selection.order
            ))?;
            let sets = stmt
                .query_map(params.clone(), |r| {
                    Ok(SetRowText {
                        id: r.get(0)?,
                        seq: r.get::<_, i64>(1)? as u64,
                        key: SetKey {
                            round: r.get(2)?,
                            a: r.get(3)?,
                            b: r.get(4)?,
                        },
                        seed: r.get::<_, i64>(5)? as u64,
                        points: [r.get(6)?, r.get(7)?],
                        winner: r.get(8)?,
                        moves: [r.get::<_, i64>(9)? as u64, r.get::<_, i64>(10)? as u64],
                        move_ms: [r.get(11)?, r.get(12)?],
                        log: r.get(13)?,
                        pruned: r.get(14)?,
                        finished: r.get(15)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut stmt = tx.prepare(&format!(
                "SELECT set_id, game, first, winner, points_a, points_b, reason, plies, is_double, faulted
                 FROM games WHERE set_id IN ({ids})
                 ORDER BY set_id, game"
            ))?;
            let games = stmt
                .query_map(params.clone(), |r| {
                    Ok(GameRowText {
                        set_id: r.get(0)?,
                        game: r.get(1)?,
                        first: r.get(2)?,
                        winner: r.get(3)?,
                        points: [r.get(4)?, r.get(5)?],
                        reason: r.get(6)?,
                        plies: r.get(7)?,
                        double: r.get(8)?,
                        faulted: r.get(9)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut stmt = tx.prepare(&format!(
                "SELECT set_id, game, ply, bot, kind, detail
                 FROM faults WHERE set_id IN ({ids})
                 ORDER BY set_id, id"
            ))?;
            let faults = stmt
                .query_map(params.clone(), |r| {
                    Ok(FaultRowText {
                        set_id: r.get(0)?,
                        game: r.get(1)?,
                        ply: r.get(2)?,
                        bot: r.get(3)?,
                        kind: r.get(4)?,
                        detail: r.get(5)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(FinishedRows {
                sets,
                games,
                faults,
            })
        };
        let rows = read().map_err(|e| backend(&self.place, "cannot read the finished sets", e))?;
        tx.finish()
            .map_err(|e| backend(&self.place, "cannot end a read", e))?;
        rows.assemble(&self.place)
    }

    fn progress(&self) -> Result<Progress, StoreError> {
        let read = || -> rusqlite::Result<Progress> {
            self.conn.query_row(
                // Through indexes: the schedule's sets (`sets_scheduled`), the running
                // ones (`sets_to_play`), and every finished set's count as the highest
                // number (`sets_done`: numbers are given without gaps).
                "SELECT
                    (SELECT count(*) FROM sets WHERE scheduled = 1),
                    (SELECT count(*) FROM sets WHERE scheduled = 1 AND status = 'done'),
                    (SELECT count(*) FROM sets WHERE status = 'running'),
                    (SELECT count(*) FROM sets s
                        JOIN bots a ON a.name = s.bot_a
                        JOIN bots b ON b.name = s.bot_b
                        WHERE s.scheduled = 1 AND s.status = 'pending' AND a.active AND b.active),
                    (SELECT COALESCE(MAX(done_seq), 0) FROM sets)",
                [],
                |r| {
                    Ok(Progress {
                        scheduled: r.get::<_, i64>(0)? as u64,
                        done: r.get::<_, i64>(1)? as u64,
                        running: r.get::<_, i64>(2)? as u64,
                        pending: r.get::<_, i64>(3)? as u64,
                        done_elsewhere: (r.get::<_, i64>(4)? - r.get::<_, i64>(1)?).max(0) as u64,
                    })
                },
            )
        };
        read().map_err(|e| backend(&self.place, "cannot count the sets", e))
    }

    fn running(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sets WHERE status = 'running'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(|e| backend(&self.place, "cannot count the running sets", e))
    }

    fn running_sets(&self, limit: usize) -> Result<Vec<RunningSet>, StoreError> {
        let read = || -> rusqlite::Result<Vec<RunningSet>> {
            let mut stmt = self.conn.prepare(
                "SELECT round, bot_a, bot_b,
                        COALESCE((julianday('now') - julianday(started)) * 86400.0, 0)
                 FROM sets WHERE status = 'running' ORDER BY started, id LIMIT ?1",
            )?;
            let rows = stmt.query_map(params![i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
                Ok(RunningSet {
                    key: SetKey {
                        round: r.get(0)?,
                        a: r.get(1)?,
                        b: r.get(2)?,
                    },
                    worker: None,
                    for_s: r.get::<_, f64>(3)?.max(0.0),
                })
            })?;
            rows.collect()
        };
        read().map_err(|e| backend(&self.place, "cannot list the running sets", e))
    }

    fn rating_history(&self) -> Result<Vec<RatingPoint>, StoreError> {
        let read = || -> rusqlite::Result<Vec<(i64, String, f64, f64)>> {
            let mut stmt = self.conn.prepare(
                "SELECT number, bot, value, std_error FROM rating_history ORDER BY number, bot",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            rows.collect()
        };
        read()
            .map(rating_points)
            .map_err(|e| backend(&self.place, "cannot read the rating history", e))
    }
}

impl Schedule for SqliteStore {
    fn save_settings(&mut self, settings: &BTreeMap<String, String>) -> Result<(), StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "the settings", |tx| {
            let write = || -> rusqlite::Result<()> {
                let mut stmt = tx.prepare(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                )?;
                for (k, v) in settings {
                    stmt.execute(params![k, v])?;
                }
                Ok(())
            };
            write().map_err(|e| backend(&place, "cannot write the settings", e))?;
            Ok(())
        })
    }

    fn sync(&mut self, bots: &[BotEntry], sets: &[PlannedSet]) -> Result<SyncReport, StoreError> {
        let place = self.place.clone();
        let stamp = now();
        in_transaction(&mut self.conn, &place, "the schedule", |tx| {
            let mut report = SyncReport::default();
            let work = |report: &mut SyncReport| -> rusqlite::Result<()> {
                let known: HashMap<String, (String, bool)> = {
                    let mut stmt = tx.prepare("SELECT name, command, active FROM bots")?;
                    let rows = stmt.query_map([], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            (r.get::<_, String>(1)?, r.get::<_, bool>(2)?),
                        ))
                    })?;
                    rows.collect::<rusqlite::Result<_>>()?
                };
                for change in bot_changes(&known, bots, report) {
                    match change {
                        BotChange::Add(bot) => {
                            tx.execute(
                            "INSERT INTO bots (name, command, active, added) VALUES (?1, ?2, 1, ?3)",
                            params![bot.name, bot.command, stamp],
                        )?;
                        }
                        BotChange::Keep(bot) => {
                            tx.execute(
                                "UPDATE bots SET command = ?2, active = 1 WHERE name = ?1",
                                params![bot.name, bot.command],
                            )?;
                        }
                        BotChange::Retire(name) => {
                            tx.execute(
                                "UPDATE bots SET active = 0 WHERE name = ?1",
                                params![name],
                            )?;
                        }
                    }
                }
                tx.execute("UPDATE sets SET scheduled = 0 WHERE scheduled = 1", [])?;
                let mut insert = tx.prepare(
                    "INSERT INTO sets (round, bot_a, bot_b, seed, scheduled, status)
                 VALUES (?1, ?2, ?3, ?4, 1, 'pending')
                 ON CONFLICT (round, bot_a, bot_b) DO NOTHING",
                )?;
                let mut mark = tx.prepare(
                    "UPDATE sets SET scheduled = 1 WHERE round = ?1 AND bot_a = ?2 AND bot_b = ?3",
                )?;
                for set in sets {
                    let k = &set.key;
                    let added =
                        insert.execute(params![k.round, k.a, k.b, seed_to_sql(set.seed)])?;
                    if added == 1 {
                        report.added_sets += 1;
                    } else {
                        mark.execute(params![k.round, k.a, k.b])?;
                    }
                }
                Ok(())
            };
            work(&mut report).map_err(|e| backend(&place, "cannot update the schedule", e))?;
            self.hook.check(&place, "sync-before-commit")?;
            Ok(report)
        })
    }

    fn requeue_running(&mut self) -> Result<Vec<Requeued>, StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "the interrupted sets", |tx| {
            let work = || -> rusqlite::Result<Vec<(SetKey, Option<String>)>> {
                let found = {
                    let mut stmt = tx.prepare(
                    "SELECT round, bot_a, bot_b, log FROM sets WHERE status = 'running' ORDER BY id",
                )?;
                    let rows = stmt.query_map([], |r| {
                        Ok((
                            SetKey {
                                round: r.get(0)?,
                                a: r.get(1)?,
                                b: r.get(2)?,
                            },
                            r.get(3)?,
                        ))
                    })?;
                    rows.collect::<rusqlite::Result<Vec<_>>>()?
                };
                tx.execute(
                "UPDATE sets SET status = 'pending', log = NULL, started = NULL WHERE status = 'running'",
                [],
            )?;
                Ok(found)
            };
            let found =
                work().map_err(|e| backend(&place, "cannot put interrupted sets back", e))?;
            let found = requeued(&place, found)?;
            Ok(found)
        })
    }

    fn claim_next_except(
        &mut self,
        pairs: &[(String, String)],
    ) -> Result<Option<ClaimedSet>, StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "a claim", |tx| {
            // Each pair passed over, either seating: its two names are parameters.
            let except: String = (0..pairs.len())
            .map(|i| {
                let (x, y) = (2 * i + 1, 2 * i + 2);
                format!(
                    " AND NOT ((s.bot_a = ?{x} AND s.bot_b = ?{y}) OR (s.bot_a = ?{y} AND s.bot_b = ?{x}))"
                )
            })
            .collect();
            let names: Vec<&String> = pairs.iter().flat_map(|(x, y)| [x, y]).collect();
            let next = claim_where(
                tx,
                &format!("s.scheduled = 1{except}"),
                rusqlite::params_from_iter(names.iter()),
            )
            .map_err(|e| backend(&place, "cannot claim a set", e))?;
            Ok(next)
        })
    }

    fn schedule_and_claim(
        &mut self,
        set: &PlannedSet,
        replaces: Option<&SetKey>,
    ) -> Result<Option<ClaimedSet>, StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "a claim", |tx| {
            let work = || -> rusqlite::Result<Option<ClaimedSet>> {
                if let Some(r) = replaces {
                    tx.execute(
                    "UPDATE sets SET scheduled = 0 WHERE round = ?1 AND bot_a = ?2 AND bot_b = ?3",
                    params![r.round, r.a, r.b],
                )?;
                }
                let k = &set.key;
                tx.execute(
                    "INSERT INTO sets (round, bot_a, bot_b, seed, scheduled, status)
                 VALUES (?1, ?2, ?3, ?4, 1, 'pending')
                 ON CONFLICT (round, bot_a, bot_b) DO UPDATE SET scheduled = 1",
                    params![k.round, k.a, k.b, seed_to_sql(set.seed)],
                )?;
                claim_where(
                    tx,
                    "s.round = ?1 AND s.bot_a = ?2 AND s.bot_b = ?3",
                    params![k.round, k.a, k.b],
                )
            };
            let claimed =
                work().map_err(|e| backend(&place, "cannot schedule and claim a set", e))?;
            Ok(claimed)
        })
    }

    fn prune_logs(&mut self, up_to: u64) -> Result<Vec<LogPlace>, StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "the pruned logs", |tx| {
            let work = || -> rusqlite::Result<Vec<Option<String>>> {
                let after: i64 = tx
                    .query_row(
                        "SELECT CAST(value AS INTEGER) FROM settings WHERE key = ?1",
                        params![PRUNED_SETTING],
                        |r| r.get(0),
                    )
                    .optional()?
                    .unwrap_or(0);
                let up_to = i64::try_from(up_to).unwrap_or(i64::MAX);
                if up_to <= after {
                    return Ok(Vec::new());
                }
                let logs = {
                    let mut stmt = tx.prepare(
                        "SELECT log FROM sets WHERE done_seq > ?1 AND done_seq <= ?2 AND pruned = 0
                     ORDER BY done_seq",
                    )?;
                    let rows =
                        stmt.query_map(params![after, up_to], |r| r.get::<_, Option<String>>(0))?;
                    rows.collect::<rusqlite::Result<Vec<_>>>()?
                };
                tx.execute(
                    "UPDATE sets SET pruned = 1 WHERE done_seq > ?1 AND done_seq <= ?2",
                    params![after, up_to],
                )?;
                tx.execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![PRUNED_SETTING, up_to.to_string()],
                )?;
                Ok(logs)
            };
            let logs = work().map_err(|e| backend(&place, "cannot prune logs", e))?;
            // Checked before the commit: a log that names no place prunes nothing.
            let logs = stored_logs(&place, logs)?;
            Ok(logs)
        })
    }

    fn record_ratings(&mut self, point: &RatingPoint) -> Result<bool, StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "the ratings", |tx| {
            let work = || -> rusqlite::Result<bool> {
                let last: Option<i64> =
                    tx.query_row("SELECT MAX(number) FROM rating_history", [], |r| r.get(0))?;
                let n = point.number;
                match history_step(last.map(|l| l.max(0) as u64), n) {
                    HistoryStep::Skip => return Ok(false),
                    HistoryStep::Keep => {}
                    // Each bucket of the new stride keeps its first point.
                    HistoryStep::ThinAndKeep(stride) => {
                        tx.execute(
                            "DELETE FROM rating_history WHERE number NOT IN
                             (SELECT MIN(number) FROM rating_history GROUP BY number / ?1)",
                            params![stride as i64],
                        )?;
                    }
                }
                let mut insert = tx.prepare(
                "INSERT INTO rating_history (number, bot, value, std_error) VALUES (?1, ?2, ?3, ?4)",
            )?;
                for (bot, value, std_error) in &point.ratings {
                    insert.execute(params![n as i64, bot, value, std_error])?;
                }
                Ok(true)
            };
            let kept = work().map_err(|e| backend(&place, "cannot record the ratings", e))?;
            Ok(kept)
        })
    }
}

/// The columns of a [`VersionRow`], in its fields' order.
const VERSION_COLUMNS: &str =
    "bot, number, author, hash, submitted, changed, state, output, detail";
/// The columns of a list of versions: the build's output and the detail left out (up
/// to 256 KiB each; a list's size must not grow with them).
const LIST_COLUMNS: &str =
    "bot, number, author, hash, submitted, changed, state, '' AS output, '' AS detail";

/// A version's row as read, its state still text.
type VersionText = (VersionRow, String);

fn version_text(r: &rusqlite::Row<'_>) -> rusqlite::Result<VersionText> {
    Ok((
        VersionRow {
            bot: r.get(0)?,
            number: r.get(1)?,
            author: r.get(2)?,
            hash: r.get(3)?,
            submitted: r.get(4)?,
            changed: r.get(5)?,
            state: VersionState::Queued,
            output: r.get(7)?,
            detail: r.get(8)?,
        },
        r.get(6)?,
    ))
}

/// The rows with their states read ([`StoreError::Invalid`] for one this code never
/// writes).
fn version_rows(place: &str, rows: Vec<VersionText>) -> Result<Vec<VersionRow>, StoreError> {
    rows.into_iter()
        .map(|(mut row, state)| {
            row.state = stored_state(place, &state)?;
            Ok(row)
        })
        .collect()
}

impl Versions for SqliteStore {
    fn add_version(&mut self, version: &NewVersion) -> Result<u32, StoreError> {
        let place = self.place.clone();
        let submitted = stored_time(&place, &version.submitted)?;
        in_transaction(&mut self.conn, &place, "the new version", |tx| {
            let work = || -> rusqlite::Result<u32> {
                tx.execute(
                    "INSERT INTO archives (hash, bytes) VALUES (?1, ?2)
                     ON CONFLICT (hash) DO UPDATE SET bytes = excluded.bytes
                     WHERE length(archives.bytes) = 0",
                    params![version.hash, version.archive],
                )?;
                let number: u32 = tx.query_row(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE bot = ?1",
                    params![version.bot],
                    |r| r.get(0),
                )?;
                tx.execute(
                    "INSERT INTO versions (bot, number, author, hash, submitted, changed, state,
                                           output, detail)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, '', '')",
                    params![
                        version.bot,
                        number,
                        version.author,
                        version.hash,
                        submitted,
                        VersionState::Queued.as_str()
                    ],
                )?;
                Ok(number)
            };
            work().map_err(|e| backend(&place, "cannot add the version", e))
        })
    }

    fn set_version_state(
        &mut self,
        bot: &str,
        number: u32,
        state: VersionState,
        output: Option<&str>,
        detail: Option<&str>,
        now: &str,
    ) -> Result<bool, StoreError> {
        let place = self.place.clone();
        let now = stored_time(&place, now)?;
        in_transaction(&mut self.conn, &place, "the version's state", |tx| {
            tx.execute(
                "UPDATE versions SET state = ?3, changed = ?4,
                        output = COALESCE(?5, output), detail = COALESCE(?6, detail)
                 WHERE bot = ?1 AND number = ?2",
                params![
                    bot,
                    number,
                    state.as_str(),
                    now,
                    output.map(cut_text),
                    detail.map(cut_text)
                ],
            )
            .map(|changed| changed == 1)
            .map_err(|e| backend(&place, "cannot set the version's state", e))
        })
    }

    fn activate_version(
        &mut self,
        bot: &str,
        number: u32,
        now: &str,
    ) -> Result<Option<u32>, StoreError> {
        let place = self.place.clone();
        let now = stored_time(&place, now)?;
        in_transaction(&mut self.conn, &place, "the activation", |tx| {
            let work = || -> rusqlite::Result<Option<Option<u32>>> {
                let exists = tx
                    .query_row(
                        "SELECT 1 FROM versions WHERE bot = ?1 AND number = ?2",
                        params![bot, number],
                        |_| Ok(()),
                    )
                    .optional()?;
                if exists.is_none() {
                    return Ok(None);
                }
                let retired: Option<u32> = tx
                    .query_row(
                        "UPDATE versions SET state = 'retired', changed = ?3
                         WHERE bot = ?1 AND number <> ?2 AND state = 'active'
                         RETURNING number",
                        params![bot, number, now],
                        |r| r.get(0),
                    )
                    .optional()?;
                tx.execute(
                    "UPDATE versions SET state = 'active', changed = ?3
                     WHERE bot = ?1 AND number = ?2 AND state <> 'active'",
                    params![bot, number, now],
                )?;
                Ok(Some(retired))
            };
            work()
                .map_err(|e| backend(&place, "cannot activate the version", e))?
                .ok_or_else(|| no_such_version(&place, bot, number))
        })
    }

    fn versions_of(&self, bot: &str) -> Result<Vec<VersionRow>, StoreError> {
        let read = || -> rusqlite::Result<Vec<VersionText>> {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT {LIST_COLUMNS} FROM versions WHERE bot = ?1 ORDER BY number"
            ))?;
            let rows = stmt.query_map(params![bot], version_text)?;
            rows.collect()
        };
        let rows = read().map_err(|e| backend(&self.place, "cannot read the versions", e))?;
        version_rows(&self.place, rows)
    }

    fn version(&self, bot: &str, number: u32) -> Result<Option<VersionRow>, StoreError> {
        let row = self
            .conn
            .query_row(
                &format!("SELECT {VERSION_COLUMNS} FROM versions WHERE bot = ?1 AND number = ?2"),
                params![bot, number],
                version_text,
            )
            .optional()
            .map_err(|e| backend(&self.place, "cannot read the version", e))?;
        Ok(version_rows(&self.place, row.into_iter().collect())?.pop())
    }

    fn versions_in(&self, states: &[VersionState]) -> Result<Vec<VersionRow>, StoreError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; states.len()].join(", ");
        let read = || -> rusqlite::Result<Vec<VersionText>> {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT {LIST_COLUMNS} FROM versions WHERE state IN ({marks})
                 ORDER BY bot, number"
            ))?;
            let rows = stmt.query_map(
                rusqlite::params_from_iter(states.iter().map(|s| s.as_str())),
                version_text,
            )?;
            rows.collect()
        };
        let rows = read().map_err(|e| backend(&self.place, "cannot read the versions", e))?;
        version_rows(&self.place, rows)
    }

    fn archive(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .query_row(
                "SELECT bytes FROM archives WHERE hash = ?1 AND length(bytes) > 0",
                params![hash],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| backend(&self.place, "cannot read the archive", e))
    }

    fn drop_refused_archive(&mut self, hash: &str, kept_refusal: &str) -> Result<bool, StoreError> {
        self.conn
            .execute(
                "UPDATE archives SET bytes = x'' WHERE hash = ?1 AND length(bytes) > 0
                 AND NOT EXISTS (SELECT 1 FROM versions WHERE hash = ?1
                     AND NOT (state = 'build failed'
                              OR (state = 'rejected'
                                  AND substr(detail, 1, length(?2)) <> ?2)))",
                params![hash, kept_refusal],
            )
            .map(|n| n == 1)
            .map_err(|e| backend(&self.place, "cannot empty a refused archive", e))
    }

    fn submitted_since(&self, author: &str, since: &str) -> Result<Vec<String>, StoreError> {
        let since = stored_time(&self.place, since)?;
        let read = || -> rusqlite::Result<Vec<String>> {
            let mut stmt = self.conn.prepare(
                "SELECT submitted FROM versions WHERE author = ?1 AND submitted >= ?2
                 ORDER BY submitted",
            )?;
            let rows = stmt.query_map(params![author, since], |r| r.get(0))?;
            rows.collect()
        };
        read().map_err(|e| backend(&self.place, "cannot read the submissions", e))
    }
}

impl GateBatches for SqliteStore {
    fn queue_gate_batches(&mut self, batches: &[GateBatch]) -> Result<(), StoreError> {
        let place = self.place.clone();
        in_transaction(&mut self.conn, &place, "the gate's batches", |tx| {
            for b in batches {
                tx.execute(
                    "INSERT INTO gate_batches (test, batch, candidate, active, seed, games, pairs,
                                               state)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued')
                     ON CONFLICT (test, batch) DO NOTHING",
                    params![
                        b.test,
                        b.batch,
                        b.candidate,
                        b.active,
                        b.seed as i64,
                        b.games,
                        b.pairs
                    ],
                )
                .map_err(|e| backend(&place, "cannot queue the gate's batches", e))?;
            }
            Ok(())
        })
    }

    fn claim_gate_batch(
        &mut self,
        worker: &str,
        test: Option<&str>,
        now: f64,
        lease: f64,
    ) -> Result<Option<ClaimedBatch>, StoreError> {
        let place = self.place.clone();
        let raw = in_transaction(&mut self.conn, &place, "a gate batch's claim", |tx| {
            let work = || -> rusqlite::Result<Option<RawClaim>> {
                tx.execute(
                    "UPDATE gate_batches SET state = 'queued'
                     WHERE state = 'running' AND lease_until < ?1",
                    params![now],
                )?;
                tx.query_row(
                    "UPDATE gate_batches
                     SET state = 'running', worker = ?1, attempts = attempts + 1,
                         lease_until = ?2
                     WHERE (test, batch) = (SELECT test, batch FROM gate_batches
                                            WHERE state = 'queued'
                                              AND (?3 IS NULL OR test = ?3)
                                            ORDER BY batch, test LIMIT 1)
                     RETURNING test, batch, candidate, active, seed, games, pairs, attempts",
                    params![worker, now + lease, test],
                    |r| {
                        Ok(RawClaim {
                            test: r.get(0)?,
                            batch: r.get(1)?,
                            candidate: r.get(2)?,
                            active: r.get(3)?,
                            seed: r.get(4)?,
                            games: r.get(5)?,
                            pairs: r.get(6)?,
                            attempts: r.get(7)?,
                        })
                    },
                )
                .optional()
            };
            work().map_err(|e| backend(&place, "cannot claim a gate batch", e))
        })?;
        raw.map(|r| r.check(&place)).transpose()
    }

    fn renew_gate_batch(
        &mut self,
        test: &str,
        batch: u32,
        attempt: u32,
        until: f64,
    ) -> Result<bool, StoreError> {
        self.conn
            .execute(
                "UPDATE gate_batches SET lease_until = ?4
                 WHERE test = ?1 AND batch = ?2 AND attempts = ?3 AND state = 'running'",
                params![test, batch, attempt, until],
            )
            .map(|n| n == 1)
            .map_err(|e| backend(&self.place, "cannot renew a gate batch's lease", e))
    }

    fn finish_gate_batch(
        &mut self,
        test: &str,
        batch: u32,
        attempt: u32,
        done: &BatchDone,
    ) -> Result<bool, StoreError> {
        let place = self.place.clone();
        let c = stored_counts(done.pentanomial);
        let state = match done.error {
            Some(_) => BatchState::Failed,
            None => BatchState::Done,
        };
        in_transaction(&mut self.conn, &place, "a gate batch's result", |tx| {
            tx.execute(
                "UPDATE gate_batches
                 SET state = ?4, c0 = ?5, c1 = ?6, c2 = ?7, c3 = ?8, c4 = ?9, played = ?10,
                     error = ?11, log = ?12, lease_until = NULL,
                     ended = (SELECT COALESCE(MAX(ended), 0) + 1 FROM gate_batches
                              WHERE test = ?1)
                 WHERE test = ?1 AND batch = ?2 AND attempts = ?3 AND state = 'running'",
                params![
                    test,
                    batch,
                    attempt,
                    state.as_str(),
                    c[0],
                    c[1],
                    c[2],
                    c[3],
                    c[4],
                    done.games,
                    done.error.as_deref().unwrap_or(""),
                    done.log
                ],
            )
            .map(|n| n == 1)
            .map_err(|e| backend(&place, "cannot record a gate batch", e))
        })
    }

    fn gate_batch_rows(&self, test: &str) -> Result<Vec<GateBatchRow>, StoreError> {
        let read = || -> rusqlite::Result<Vec<RawBatchRow>> {
            let mut stmt = self.conn.prepare(
                "SELECT batch, state, worker, attempts, c0, c1, c2, c3, c4, played, error, ended
                 FROM gate_batches WHERE test = ?1 ORDER BY batch",
            )?;
            let rows = stmt.query_map(params![test], |r| {
                Ok(RawBatchRow {
                    batch: r.get(0)?,
                    state: r.get(1)?,
                    worker: r.get(2)?,
                    attempts: r.get(3)?,
                    counts: [r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?],
                    games: r.get(9)?,
                    error: r.get(10)?,
                    ended: r.get(11)?,
                })
            })?;
            rows.collect()
        };
        let rows = read().map_err(|e| backend(&self.place, "cannot read the gate's batches", e))?;
        rows.into_iter().map(|r| r.check(&self.place)).collect()
    }

    fn gate_batch_log(&self, test: &str, batch: u32) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .query_row(
                "SELECT log FROM gate_batches WHERE test = ?1 AND batch = ?2",
                params![test, batch],
                |r| r.get::<_, Option<Vec<u8>>>(0),
            )
            .optional()
            .map(Option::flatten)
            .map_err(|e| backend(&self.place, "cannot read a gate batch's log", e))
    }

    fn end_gate_test(&mut self, test: &str) -> Result<usize, StoreError> {
        self.conn
            .execute("DELETE FROM gate_batches WHERE test = ?1", params![test])
            .map_err(|e| backend(&self.place, "cannot end a gate test", e))
    }

    fn clear_gate_batches(&mut self) -> Result<usize, StoreError> {
        self.conn
            .execute("DELETE FROM gate_batches", [])
            .map_err(|e| backend(&self.place, "cannot clear the gate's batches", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::Format;
    use crate::schedule::schedule;
    use crate::store::{FaultRow, GameRow};
    use referee::{FaultKind, GameEndReason, Side};

    fn entries() -> Vec<BotEntry> {
        ["x", "y", "z"]
            .iter()
            .map(|n| BotEntry {
                name: n.to_string(),
                command: n.to_string(),
            })
            .collect()
    }

    fn plan() -> Vec<PlannedSet> {
        let names: Vec<String> = entries().into_iter().map(|b| b.name).collect();
        schedule(&names, &Format::RoundRobin, 1, 3)
    }

    fn outcome() -> SetOutcome {
        SetOutcome {
            games: (1..=3)
                .map(|g| GameRow {
                    game: g,
                    first: Side::A,
                    winner: Some(Side::B),
                    points: [0, 2],
                    reason: GameEndReason::NoMoves,
                    plies: 20,
                    double: false,
                    faulted: Vec::new(),
                })
                .collect(),
            faults: vec![FaultRow {
                game: 2,
                ply: 4,
                bot: Side::A,
                kind: FaultKind::Crash,
                detail: "exited".into(),
            }],
            points: [0, 6],
            winner: Some(Side::B),
            moves: [30, 30],
            move_ms: [1.0, 2.0],
            log: LogPlace::file("x", crate::log_place::LogForm::Plain),
        }
    }

    fn count(store: &SqliteStore, table: &str) -> i64 {
        store
            .conn
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap_or(-1)
    }

    /// A failure between any two statements of `record` leaves the store exactly as
    /// before it: the set still running, no game or fault of it, nothing done.
    #[test]
    fn a_crash_inside_record_leaves_the_store_before_the_change() {
        for point in [
            "record-after-games",
            "record-after-faults",
            "record-before-commit",
        ] {
            let mut store = SqliteStore::in_memory().expect("store");
            store.sync(&entries(), &plan()).expect("sync");
            let set = store.claim_next().expect("claim").expect("a set");
            store.fail_at(Some(point));
            let err = store
                .record(set.claim(), &outcome())
                .map_err(|e| e.to_string());
            assert_eq!(
                err.err(),
                Some(format!(
                    "the league store :memory: is inconsistent: injected failure at {point}"
                ))
            );
            assert_eq!(count(&store, "games"), 0, "{point}");
            assert_eq!(count(&store, "faults"), 0, "{point}");
            let p = store.progress().expect("progress");
            assert_eq!((p.done, p.running, p.pending), (0, 1, 2), "{point}");
            assert!(store.finished().expect("finished").is_empty(), "{point}");
            // Once the fault is gone the same record goes through whole.
            store.fail_at(None);
            store.record(set.claim(), &outcome()).expect("record");
            assert_eq!(count(&store, "games"), 3, "{point}");
            assert_eq!(count(&store, "faults"), 1, "{point}");
            assert_eq!(store.finished().expect("finished")[0].outcome, outcome());
        }
    }

    /// What a store's tables hold for a row is checked once, when it is read: a value
    /// this code never writes there (a fault kind it does not know, a faulted seat 2, a
    /// log that names no place) makes the store invalid, and the prune of such a log
    /// changes nothing.
    #[test]
    fn a_row_holding_what_the_league_never_writes_is_invalid() {
        let refused = |store: &SqliteStore| match store.finished() {
            Err(StoreError::Invalid { what, .. }) => what,
            other => panic!("expected Invalid, got {other:?}"),
        };
        let mut store = SqliteStore::in_memory().expect("store");
        store.sync(&entries(), &plan()).expect("sync");
        let set = store.claim_next().expect("claim").expect("a set");
        store.record(set.claim(), &outcome()).expect("record");
        let (kind, faulted, log): (String, String, String) = store
            .conn
            .query_row(
                "SELECT f.kind, g.faulted, s.log FROM faults f JOIN games g ON g.set_id = f.set_id
                 JOIN sets s ON s.id = f.set_id WHERE g.game = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("the rows");
        assert_eq!(
            (kind.as_str(), faulted.as_str(), log.as_str()),
            ("crash", "", "logs/x.jsonl")
        );
        let change = |store: &SqliteStore, sql: &str| {
            store.conn.execute(sql, []).expect("change");
        };
        change(&store, "UPDATE faults SET kind = 'segfault'");
        assert_eq!(
            refused(&store),
            "a fault in game 2 of set 1 has the kind \"segfault\""
        );
        change(&store, "UPDATE faults SET kind = 'crash'");
        change(&store, "UPDATE games SET faulted = '2' WHERE game = 3");
        assert_eq!(refused(&store), "game 3 of set 1 has faulted seats \"2\"");
        change(&store, "UPDATE games SET faulted = ''");
        change(
            &store,
            "UPDATE sets SET log = '../elsewhere.jsonl' WHERE id = 1",
        );
        assert_eq!(refused(&store), "set 1 has the log \"../elsewhere.jsonl\"");
        assert!(matches!(
            store.prune_logs(1),
            Err(StoreError::Invalid { .. })
        ));
        let pruned: i64 = store
            .conn
            .query_row("SELECT pruned FROM sets WHERE id = 1", [], |r| r.get(0))
            .expect("pruned");
        assert_eq!(pruned, 0);
        change(&store, "UPDATE sets SET log = 'logs/x.jsonl' WHERE id = 1");
        assert_eq!(store.finished().expect("finished")[0].outcome, outcome());
        assert_eq!(
            store.prune_logs(1).expect("prune"),
            [LogPlace::file("x", crate::log_place::LogForm::Plain)]
        );
    }

    /// A sync is all or nothing too.
    #[test]
    fn a_crash_inside_sync_leaves_the_store_before_the_change() {
        let mut store = SqliteStore::in_memory().expect("store");
        store.fail_at(Some("sync-before-commit"));
        assert!(store.sync(&entries(), &plan()).is_err());
        assert_eq!(count(&store, "bots"), 0);
        assert_eq!(count(&store, "sets"), 0);
        store.fail_at(None);
        store.sync(&entries(), &plan()).expect("sync");
        assert_eq!(count(&store, "bots"), 3);
        assert_eq!(count(&store, "sets"), 3);
    }

    /// A real crash: a child process writing a transaction is killed with SIGKILL
    /// between two statements; the file store is as before.
    #[test]
    fn a_killed_writer_leaves_nothing_half_written() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("league.sqlite");
        {
            let mut store = SqliteStore::open(&path, true).expect("store");
            store.sync(&entries(), &plan()).expect("sync");
            store.claim_next().expect("claim").expect("set");
        }
        // The child is this test binary running only `killed_writer_child`.
        let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "store::sqlite::tests::killed_writer_child",
                "--ignored",
                "--nocapture",
            ])
            .env(CHILD_STORE, &path)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("child runs");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc_sigkill()), "{status:?}");
        let store = SqliteStore::open(&path, false).expect("reopen");
        assert_eq!(count(&store, "games"), 0);
        let p = store.progress().expect("progress");
        assert_eq!((p.done, p.running), (0, 1));
    }

    const CHILD_STORE: &str = "HUS_LEAGUE_TEST_CHILD_STORE";

    fn libc_sigkill() -> i32 {
        nix::sys::signal::Signal::SIGKILL as i32
    }

    /// The child of `a_killed_writer_leaves_nothing_half_written`; does nothing unless
    /// that test started it.
    #[test]
    #[ignore = "run by a_killed_writer_leaves_nothing_half_written"]
    fn killed_writer_child() {
        let Some(path) = std::env::var_os(CHILD_STORE) else {
            return;
        };
        let mut conn = Connection::open(path).expect("open");
        let tx = conn.transaction().expect("transaction");
        tx.execute(
            "INSERT INTO games (set_id, game, first, winner, points_a, points_b, reason, plies, is_double, faulted)
             VALUES (1, 1, 0, 0, 2, 0, 'no-moves', 10, 0, '')",
            [],
        )
        .expect("insert");
        // Killed here, between two statements of the transaction.
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        tx.execute("UPDATE sets SET status = 'done' WHERE id = 1", [])
            .expect("update");
        tx.commit().expect("commit");
    }

    /// Defect 5 of issue 34: a server's pick changes a few rows whatever the schedule's
    /// size; syncing the whole schedule at each pick (as it did) changed every row of it.
    #[test]
    fn a_pick_changes_a_few_rows_whatever_the_schedules_size() {
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("{e}"),
        };
        let mut store = match SqliteStore::open(&dir.path().join("league.sqlite"), true) {
            Ok(store) => store,
            Err(e) => panic!("{e}"),
        };
        let bots: Vec<BotEntry> = (0..64)
            .map(|i| BotEntry {
                name: format!("b{i:02}"),
                command: format!("b{i:02}"),
            })
            .collect();
        let names: Vec<String> = bots.iter().map(|b| b.name.clone()).collect();
        let file = schedule(&names, &Format::RoundRobin, 1, 9);
        assert_eq!(file.len(), 2016);
        store.sync(&bots, &file).expect("sync");
        // The pairing's choices: later rounds, outside the file's schedule.
        let chosen = schedule(&names, &Format::RoundRobin, 3, 9);
        let mut before = None;
        for pick in &chosen[4032..4042] {
            let changes = store.conn.total_changes();
            let claimed = store
                .schedule_and_claim(pick, before.as_ref())
                .expect("pick");
            assert!(claimed.is_some());
            let changed = store.conn.total_changes() - changes;
            // The one chosen before leaves the schedule, the new one joins it and is
            // claimed: three rows at most.
            assert!(changed <= 3, "a pick changed {changed} rows");
            before = Some(pick.key.clone());
        }
    }
}
