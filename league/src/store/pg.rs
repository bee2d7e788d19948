//! The store in a PostgreSQL database (`--store postgres://...`), shared by any number
//! of `hus worker` processes on any number of machines.
//!
//! The client is the `postgres` crate: the synchronous face of `tokio-postgres`, both
//! from the rust-postgres project. The [`Store`] trait is synchronous (SQLite's
//! `rusqlite` is too), so the synchronous client fits it without a second async
//! interface; async code (the server, the workers) holds it only through a
//! [`super::StoreThread`], which runs it on a thread of its own: the client drives a
//! small runtime of its own and panics when called, or closed, inside another.
//! sqlx was the other candidate: it is async only, and would have needed the same
//! bridge the other way round, with a pool this store does not need (one connection per
//! process).
//!
//! Connections use TLS as the URL's `sslmode` and `sslrootcert` say, with libpq's
//! meaning ([`pg_url`]: OpenSSL through `postgres-native-tls`, the same project's
//! connector).
//!
//! Beyond the trait, the store holds what a work queue across machines needs: every
//! set claimed by a worker carries a lease (`worker`, `lease_until`) and its attempt
//! number, which is the lease's token. A claim takes the first claimable set with
//! `SELECT ... FOR UPDATE SKIP LOCKED` (pending, or running with an expired lease), so
//! two workers never take the same set; a result counts only if its attempt still holds
//! the set, in one transaction with the games and faults; any other result is kept in
//! `results` as a duplicate and counts for nothing. Times are the database's clock, so
//! the workers' clocks do not matter.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use postgres::{Client, Config, Transaction};
use postgres_native_tls::MakeTlsConnector;

use super::gate_batches::{
    stored_counts, BatchDone, BatchState, ClaimedBatch, GateBatch, GateBatchRow, GateBatches,
    RawBatchRow, RawClaim,
};
use super::pg_url::{self, is_tls_refusal};
use super::rows::{
    bot_changes, rating_points, seats_to_text, seed_to_sql, selection, side_to_sql, stored_logs,
    BotChange, FaultRowText, FinishedRows, GameRowText, Param, SetRowText,
};
use super::versions::{
    cut_text, no_such_version, stored_state, stored_time, NewVersion, VersionRow, VersionState,
    Versions,
};
use super::{
    history_step, BotEntry, BotRow, Claim, ClaimedSet, Claims, FinishedQuery, FinishedSet,
    HistoryStep, Progress, RatingPoint, Reads, Recorded, Requeued, RunningSet, Schedule, SetId,
    SetOutcome, StoreError, SyncReport,
};
use crate::log_place::LogPlace;
use crate::schedule::{PlannedSet, SetKey};

/// The migrations, in order: migration `i` takes the schema from version `i` to `i + 1`.
/// Append new ones; never edit one that has shipped.
const MIGRATIONS: &[&str] = &[
    // 1: the first schema: SQLite's tables, with leases, kept logs, duplicates and
    // workers.
    "
    CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );

    CREATE TABLE bots (
        name    TEXT PRIMARY KEY,
        command TEXT NOT NULL,
        active  BOOLEAN NOT NULL,
        added   TIMESTAMPTZ NOT NULL
    );

    CREATE TABLE sets (
        id          BIGSERIAL PRIMARY KEY,
        round       INTEGER NOT NULL,
        bot_a       TEXT NOT NULL REFERENCES bots(name),
        bot_b       TEXT NOT NULL REFERENCES bots(name),
        seed        BIGINT NOT NULL,
        scheduled   BOOLEAN NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done')),
        attempts    INTEGER NOT NULL DEFAULT 0,
        worker      TEXT,
        lease_until TIMESTAMPTZ,
        log         TEXT,
        started     TIMESTAMPTZ,
        finished    TIMESTAMPTZ,
        points_a    INTEGER,
        points_b    INTEGER,
        winner      SMALLINT CHECK (winner IN (0, 1)),
        moves_a     BIGINT,
        moves_b     BIGINT,
        move_ms_a   DOUBLE PRECISION,
        move_ms_b   DOUBLE PRECISION,
        UNIQUE (round, bot_a, bot_b)
    );
    CREATE INDEX sets_to_play ON sets (status, scheduled, round, id);

    CREATE TABLE games (
        set_id    BIGINT NOT NULL REFERENCES sets(id),
        game      INTEGER NOT NULL,
        first     SMALLINT NOT NULL CHECK (first IN (0, 1)),
        winner    SMALLINT CHECK (winner IN (0, 1)),
        points_a  INTEGER NOT NULL,
        points_b  INTEGER NOT NULL,
        reason    TEXT NOT NULL,
        plies     INTEGER NOT NULL,
        is_double BOOLEAN NOT NULL,
        faulted   TEXT NOT NULL,
        PRIMARY KEY (set_id, game)
    );

    CREATE TABLE faults (
        id     BIGSERIAL PRIMARY KEY,
        set_id BIGINT NOT NULL REFERENCES sets(id),
        game   INTEGER NOT NULL,
        ply    INTEGER NOT NULL,
        bot    SMALLINT NOT NULL CHECK (bot IN (0, 1)),
        kind   TEXT NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX faults_by_set ON faults (set_id);

    -- Every result that reached the store, counted or not, with its log (gzip).
    CREATE TABLE results (
        set_id   BIGINT NOT NULL REFERENCES sets(id),
        attempt  INTEGER NOT NULL,
        worker   TEXT NOT NULL,
        arrived  TIMESTAMPTZ NOT NULL,
        counted  BOOLEAN NOT NULL,
        points_a INTEGER NOT NULL,
        points_b INTEGER NOT NULL,
        log_size BIGINT NOT NULL,
        log_gz   BYTEA NOT NULL,
        PRIMARY KEY (set_id, attempt)
    );

    CREATE TABLE workers (
        name        TEXT PRIMARY KEY,
        host        TEXT NOT NULL,
        pid         INTEGER NOT NULL,
        concurrency INTEGER NOT NULL,
        started     TIMESTAMPTZ NOT NULL,
        last_seen   TIMESTAMPTZ NOT NULL,
        in_flight   INTEGER NOT NULL,
        stopped     TIMESTAMPTZ
    );
    ",
    // 2: why a worker gives sets back: its last problem and the bots it leaves to the
    // others (written with each heartbeat from the worker's own state).
    "
    ALTER TABLE workers ADD COLUMN problem TEXT;
    ALTER TABLE workers ADD COLUMN leaves TEXT[] NOT NULL DEFAULT '{}';
    ",
    // 3: each counted result's number in the order results were committed (taken from
    // the one-row counter `done_counter`, whose row lock holds until the result's
    // transaction ends, so a number is visible only after every smaller one: what a
    // reader has not seen yet is what is numbered above the last number it saw); the
    // indexes that keep a server's every step independent of the sets behind it; and
    // whether a finished set's log was pruned (its result stays).
    "
    ALTER TABLE sets ADD COLUMN done_seq BIGINT;
    ALTER TABLE sets ADD COLUMN pruned BOOLEAN NOT NULL DEFAULT FALSE;
    UPDATE sets SET done_seq = numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY finished, id) AS n
              FROM sets WHERE status = 'done') AS numbered
        WHERE numbered.id = sets.id;
    CREATE UNIQUE INDEX sets_done ON sets (done_seq);
    CREATE INDEX sets_done_by_a ON sets (bot_a, done_seq) WHERE done_seq IS NOT NULL;
    CREATE INDEX sets_done_by_b ON sets (bot_b, done_seq) WHERE done_seq IS NOT NULL;
    CREATE INDEX sets_scheduled ON sets (scheduled) WHERE scheduled;
    CREATE TABLE done_counter (
        one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
        n   BIGINT NOT NULL
    );
    INSERT INTO done_counter (n) SELECT COALESCE(max(done_seq), 0) FROM sets;
    ",
    // 4: the rating history, thinned to a bounded number of points per series
    // (`history_stride`); the bot '' is the first-move advantage.
    "
    CREATE TABLE rating_history (
        number    BIGINT NOT NULL,
        bot       TEXT NOT NULL,
        value     DOUBLE PRECISION NOT NULL,
        std_error DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (number, bot)
    );
    ",
    // 5: the sets a claim may take, in the order it takes them: a claim reads this
    // index from its start and stops at the first set it can play, instead of sorting
    // every pending set of the schedule.
    "
    CREATE INDEX sets_claimable ON sets (round, id)
        WHERE scheduled AND status IN ('pending', 'running');
    ",
    // 6: uploaded bots' versions (docs/upload.md) and their archives, one per hash, so
    // that a worker fetches a version's code by its hash. A state is not checked here,
    // so that a row holding another is read as invalid rather than never written. One
    // active version per bot, by index.
    "
    CREATE TABLE archives (
        hash  TEXT PRIMARY KEY,
        bytes BYTEA NOT NULL
    );
    CREATE TABLE versions (
        bot       TEXT NOT NULL,
        number    INTEGER NOT NULL CHECK (number >= 1),
        author    TEXT NOT NULL,
        hash      TEXT NOT NULL REFERENCES archives(hash),
        submitted TIMESTAMPTZ NOT NULL,
        changed   TIMESTAMPTZ NOT NULL,
        state     TEXT NOT NULL,
        output    TEXT NOT NULL,
        detail    TEXT NOT NULL,
        PRIMARY KEY (bot, number)
    );
    CREATE INDEX versions_by_author ON versions (author, submitted);
    CREATE INDEX versions_by_state ON versions (state, bot, number);
    CREATE UNIQUE INDEX versions_one_active ON versions (bot) WHERE state = 'active';
    ",
    // 7: the SPRT gate's batches (store::gate_batches), played by the workers and the
    // server: claimed with a lease (Unix seconds of the claimer's clock), their
    // pentanomial and log (gzip) once played.
    "
    CREATE TABLE gate_batches (
        test        TEXT NOT NULL,
        batch       INTEGER NOT NULL CHECK (batch >= 0),
        candidate   TEXT NOT NULL,
        active      TEXT NOT NULL,
        seed        BIGINT NOT NULL,
        games       INTEGER NOT NULL,
        pairs       INTEGER NOT NULL,
        state       TEXT NOT NULL,
        worker      TEXT NOT NULL DEFAULT '',
        attempts    INTEGER NOT NULL DEFAULT 0,
        lease_until DOUBLE PRECISION,
        c0 BIGINT NOT NULL DEFAULT 0,
        c1 BIGINT NOT NULL DEFAULT 0,
        c2 BIGINT NOT NULL DEFAULT 0,
        c3 BIGINT NOT NULL DEFAULT 0,
        c4 BIGINT NOT NULL DEFAULT 0,
        played      INTEGER NOT NULL DEFAULT 0,
        error       TEXT NOT NULL DEFAULT '',
        log         BYTEA,
        ended       INTEGER,
        PRIMARY KEY (test, batch)
    );
    CREATE INDEX gate_batches_by_state ON gate_batches (state, batch, test);
    ",
];

/// The condition that attempt `$2` of set `$1` still holds it: the one check of every
/// lease operation (renewal, release, result).
const HOLDS: &str = "id = $1 AND attempts = $2 AND status = 'running'";

/// The settings key of the number up to which the logs were pruned.
const PRUNED_SETTING: &str = "logs_pruned_up_to";

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The lease of a set claimed through the [`Store`] trait (`claim_next`), whose caller
/// does not renew it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A league's store in a PostgreSQL database.
pub struct PgStore {
    /// One connection, behind a mutex because the trait's reads take `&self`.
    client: Mutex<Client>,
    config: Config,
    /// The TLS the URL asked for (`sslmode`, `sslrootcert`), for every connection.
    tls: MakeTlsConnector,
    place: String,
    /// The name under which this process claims sets (`hus worker --name`).
    name: String,
    /// The lease of the sets claimed through [`Claims`] (`hus worker --lease`).
    lease: Duration,
}

/// A worker as the store last heard of it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerRow {
    /// Its name.
    pub name: String,
    /// Its machine.
    pub host: String,
    /// Its process id there.
    pub pid: i32,
    /// Sets it plays at once.
    pub concurrency: i32,
    /// Seconds since its last heartbeat.
    pub seen_ago: f64,
    /// Sets it holds now (with a lease that has not expired).
    pub in_flight: i64,
    /// Sets it finished (counted) in the last hour.
    pub last_hour: i64,
    /// Sets it finished (counted) since it started, and its results that arrived too
    /// late (duplicates).
    pub finished: i64,
    /// Its results that came too late to count.
    pub duplicates: i64,
    /// It said goodbye (stopped cleanly).
    pub stopped: bool,
    /// Why it last gave a set back (it could not start a bot), if it did.
    pub problem: Option<String>,
    /// The bots whose sets it leaves to the other workers, in name order.
    pub leaves: Vec<String>,
}

/// A worker counts as live for [`stuck_reason`] while it has not said goodbye and its
/// last heartbeat is at most this old (a worker beats every quarter of its lease, 30 s
/// by default).
pub const LIVE_WORKER_S: f64 = 60.0;

/// Whether the league is stuck, and why: sets are pending, none is being played, and
/// every live worker (see [`LIVE_WORKER_S`]) leaves a bot of every pending set to the
/// others (it could not start that bot). `pending` holds the pending sets' bots.
/// `None` when any live worker can still play a pending set, when a set is being
/// played, or when no worker is live (nothing was tried).
pub fn stuck_reason(
    rows: &[WorkerRow],
    pending: &[(String, String)],
    running: u64,
) -> Option<String> {
    if pending.is_empty() || running > 0 {
        return None;
    }
    let live: Vec<&WorkerRow> = rows
        .iter()
        .filter(|w| !w.stopped && w.seen_ago <= LIVE_WORKER_S)
        .collect();
    if live.is_empty() {
        return None;
    }
    let can_play =
        |w: &WorkerRow, (a, b): &(String, String)| !w.leaves.contains(a) && !w.leaves.contains(b);
    if live.iter().any(|w| pending.iter().any(|p| can_play(w, p))) {
        return None;
    }
    let why: Vec<String> = live
        .iter()
        .map(|w| {
            format!(
                "{} leaves {}'s sets ({})",
                w.name,
                w.leaves.join(" and "),
                w.problem.as_deref().unwrap_or("no reason given")
            )
        })
        .collect();
    Some(format!(
        "the league is stuck: {} pending, and every live worker has given them up: {}",
        referee::plural(pending.len() as u64, "set", "sets"),
        why.join("; ")
    ))
}

/// What a worker says of itself with each heartbeat ([`PgStore::heartbeat`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Heartbeat {
    /// Sets it plays at once.
    pub concurrency: usize,
    /// Sets it holds now.
    pub in_flight: usize,
    /// Why it last gave a set back, if it did.
    pub problem: Option<String>,
    /// The bots whose sets it leaves to the other workers.
    pub leaves: Vec<String>,
}

/// A set's kept log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredLog {
    /// The set.
    pub key: SetKey,
    /// The attempt that wrote it.
    pub attempt: u32,
    /// The log's text (JSON lines), uncompressed.
    pub text: String,
}

/// A set's kept log as the store keeps it, gzip: about a tenth of the text, for a
/// reader that unpacks it piece by piece ([`PackedLog::reader`]) instead of holding
/// the whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedLog {
    /// The set.
    pub key: SetKey,
    /// The attempt that wrote it.
    pub attempt: u32,
    /// The log's text, gzip.
    pub gz: Vec<u8>,
}

impl PackedLog {
    /// The log's text as it is unpacked.
    pub fn reader(&self) -> impl Read + '_ {
        flate2::read::GzDecoder::new(&self.gz[..])
    }

    /// The same log, consumed as it is unpacked (for a reader that outlives `self`).
    pub fn into_reader(self) -> impl Read + Send {
        flate2::read::GzDecoder::new(std::io::Cursor::new(self.gz))
    }
}

/// Fixed key of the advisory lock that serialises migrations between processes.
const MIGRATION_LOCK: i64 = 0x0068_7573_5f6d_6967;

fn backend(place: &str, what: &str, e: postgres::Error) -> StoreError {
    StoreError::Backend {
        place: place.to_string(),
        what: what.to_string(),
        cause: Box::new(e),
    }
}

fn invalid(place: &str, what: String) -> StoreError {
    StoreError::Invalid {
        place: place.to_string(),
        what,
    }
}

/// The URL as shown in messages: user, hosts, ports and database, never the password.
fn describe(config: &Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(h, p)| match h {
            postgres::config::Host::Tcp(h) => format!("{h}:{p}"),
            postgres::config::Host::Unix(path) => format!("{}:{p}", path.display()),
        })
        .collect();
    format!(
        "postgres://{}{}/{}",
        config
            .get_user()
            .map(|u| format!("{u}@"))
            .unwrap_or_default(),
        hosts.join(","),
        config.get_dbname().unwrap_or("")
    )
}

fn to_i32(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn to_u32(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// gzip of a log.
pub fn compress(text: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text)?;
    enc.finish()
}

fn decompress(gz: &[u8]) -> std::io::Result<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz).read_to_string(&mut text)?;
    Ok(text)
}

/// This machine's name.
pub fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "unknown-host".to_string())
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`, or
    /// the key=value form), with the TLS its `sslmode` and `sslrootcert` ask for
    /// (`pg_url`: libpq's meaning), and brings its schema up to date. The process
    /// claims sets as `host:pid` until [`PgStore::set_name`] names it otherwise.
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let bad_url = |what| StoreError::BadUrl { what };
        let (mut config, tls) = pg_url::parse(url).map_err(bad_url)?;
        let tls = tls.connector().map_err(bad_url)?;
        // A machine cut off the network must not hang the worker forever: unanswered
        // data fails the connection after 10 s (then the worker reconnects), and so
        // does a connection attempt.
        config
            .connect_timeout(Duration::from_secs(10))
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .tcp_user_timeout(Duration::from_secs(10))
            .application_name("hus");
        let place = describe(&config);
        let client = config
            .connect(tls.clone())
            .map_err(|e| backend(&place, "cannot connect", e))?;
        let mut store = PgStore {
            client: Mutex::new(client),
            config,
            tls,
            place,
            name: format!("{}:{}", host_name(), std::process::id()),
            lease: DEFAULT_LEASE,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Runs `work` in one transaction, committed when it returns `Ok` and rolled back
    /// when it fails: every write's begin and commit are here. `work` gets the store's
    /// place for its errors; `what` names the work in a failed commit.
    fn transaction<T>(
        &self,
        what: &str,
        work: impl FnOnce(&mut Transaction<'_>, &str) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut client = self.c();
        let mut tx = client
            .transaction()
            .map_err(|e| backend(&self.place, "cannot start a transaction", e))?;
        let value = work(&mut tx, &self.place)?;
        tx.commit()
            .map_err(|e| backend(&self.place, &format!("cannot commit {what}"), e))?;
        Ok(value)
    }

    /// The store as messages show it (no password).
    pub fn place(&self) -> &str {
        &self.place
    }

    /// The name under which this process claims sets.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Claims sets under this name from now on.
    pub fn set_name(&mut self, name: &str) {
        self.name = name.to_string();
    }

    /// Claims sets through [`Claims`] and [`Store`] for `lease` from now on, and renews
    /// them by it.
    pub fn set_lease(&mut self, lease: Duration) {
        self.lease = lease;
    }

    /// The connection is gone (the server restarted, the network failed): the next
    /// operation needs [`PgStore::reconnect`].
    pub fn is_lost(&self) -> bool {
        self.c().is_closed()
    }

    /// Opens a new connection in place of the lost one.
    pub fn reconnect(&mut self) -> Result<(), StoreError> {
        let fresh = self
            .config
            .connect(self.tls.clone())
            .map_err(|e| backend(&self.place, "cannot connect", e))?;
        *self.c() = fresh;
        Ok(())
    }

    /// The schema version in the database (0 before the first migration).
    pub fn schema_version(&mut self) -> Result<i64, StoreError> {
        let place = self.place.clone();
        let row = self
            .c()
            .query_opt("SELECT version FROM hus_schema WHERE id = 1", &[])
            .map_err(|e| backend(&place, "cannot read its schema version", e))?;
        Ok(row.map(|r| r.get::<_, i64>(0)).unwrap_or(0))
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let place = self.place.clone();
        let mut client = self.c();
        let mut tx = client
            .transaction()
            .map_err(|e| backend(&place, "cannot start the migration", e))?;
        // Workers starting together: one migrates, the others wait for it.
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(|e| backend(&place, "cannot lock the schema", e))?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS hus_schema (
                 id INTEGER PRIMARY KEY CHECK (id = 1),
                 version BIGINT NOT NULL
             );
             INSERT INTO hus_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;",
        )
        .map_err(|e| backend(&place, "cannot create its schema table", e))?;
        let version: i64 = tx
            .query_one("SELECT version FROM hus_schema WHERE id = 1", &[])
            .map_err(|e| backend(&place, "cannot read its schema version", e))?
            .get(0);
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                place,
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.batch_execute(sql)
                .map_err(|e| backend(&place, &format!("migration {} failed", i + 1), e))?;
            tx.execute(
                "UPDATE hus_schema SET version = $1 WHERE id = 1",
                &[&((i + 1) as i64)],
            )
            .map_err(|e| backend(&place, "cannot write its schema version", e))?;
        }
        tx.commit()
            .map_err(|e| backend(&place, "cannot commit the migration", e))
    }

    /// The connection (a poisoned lock only means another thread panicked while
    /// holding it; the connection itself is still whole or reports itself closed).
    fn c(&self) -> MutexGuard<'_, Client> {
        self.client
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Claims the next set to play under this process's name, for `lease`: a pending
    /// set of the current schedule whose bots are both active, or a running one whose
    /// lease has expired (its worker died or was cut off). Sets with a bot of `skip`
    /// (bots this worker cannot start) are left to others. Counts the attempt, which is
    /// the lease's token.
    pub fn claim(
        &mut self,
        lease: Duration,
        skip: &[String],
    ) -> Result<Option<ClaimedSet>, StoreError> {
        self.claim_except(lease, skip, &[])
    }

    /// As [`PgStore::claim`], passing over the sets of the pairs `pairs` too (either
    /// seating): a pair held back after a failure holds up no other set.
    pub fn claim_except(
        &mut self,
        lease: Duration,
        skip: &[String],
        pairs: &[(String, String)],
    ) -> Result<Option<ClaimedSet>, StoreError> {
        let (xs, ys): (Vec<&str>, Vec<&str>) =
            pairs.iter().map(|(x, y)| (x.as_str(), y.as_str())).unzip();
        let name = self.name.clone();
        self.transaction("a claim", |tx, place| {
            let row = tx
                .query_opt(
                    "SELECT s.id, s.round, s.bot_a, s.bot_b, s.seed, s.attempts
                 FROM sets s
                 JOIN bots a ON a.name = s.bot_a
                 JOIN bots b ON b.name = s.bot_b
                 WHERE s.scheduled AND a.active AND b.active
                   AND (s.status = 'pending' OR (s.status = 'running' AND s.lease_until < now()
                        AND s.worker IS DISTINCT FROM $4))
                   AND NOT (s.bot_a = ANY($1)) AND NOT (s.bot_b = ANY($1))
                   AND NOT EXISTS (
                       SELECT 1 FROM unnest($2::text[], $3::text[]) AS h(x, y)
                       WHERE (h.x = s.bot_a AND h.y = s.bot_b) OR (h.x = s.bot_b AND h.y = s.bot_a))
                 ORDER BY s.round, s.id
                 LIMIT 1
                 FOR UPDATE OF s SKIP LOCKED",
                    &[&skip, &xs, &ys, &name],
                )
                .map_err(|e| backend(place, "cannot look for a set to play", e))?;
            let Some(row) = row else {
                return Ok(None);
            };
            let set = ClaimedSet {
                id: row.get(0),
                key: SetKey {
                    round: to_u32(row.get(1)),
                    a: row.get(2),
                    b: row.get(3),
                },
                seed: row.get::<_, i64>(4) as u64,
                attempts: to_u32(row.get(5)) + 1,
            };
            tx.execute(
                "UPDATE sets SET status = 'running', attempts = $2, worker = $3,
                 lease_until = now() + $4 * interval '1 millisecond',
                 started = now(), log = NULL
             WHERE id = $1",
                &[
                    &set.id,
                    &to_i32(set.attempts),
                    &name,
                    &(lease.as_millis() as f64),
                ],
            )
            .map_err(|e| backend(place, "cannot claim a set", e))?;
            Ok(Some(set))
        })
    }

    /// Extends the lease of attempt `attempt` of set `id` by `lease` from now; false
    /// when the attempt no longer holds the set (it was claimed again, or is done).
    pub fn renew(&mut self, id: SetId, attempt: u32, lease: Duration) -> Result<bool, StoreError> {
        let place = self.place.clone();
        let n = self
            .c()
            .execute(
                &format!(
                    "UPDATE sets SET lease_until = now() + $3 * interval '1 millisecond'
                 WHERE {HOLDS}"
                ),
                &[&id, &to_i32(attempt), &(lease.as_millis() as f64)],
            )
            .map_err(|e| backend(&place, "cannot renew a lease", e))?;
        Ok(n == 1)
    }

    /// Gives a set back unplayed (its worker cannot start one of its bots): pending
    /// again at once, if this attempt still holds it.
    pub fn release(&mut self, id: SetId, attempt: u32) -> Result<bool, StoreError> {
        let place = self.place.clone();
        let n = self
            .c()
            .execute(
                &format!(
                    "UPDATE sets SET status = 'pending', worker = NULL, lease_until = NULL,
                     started = NULL, log = NULL
                 WHERE {HOLDS}"
                ),
                &[&id, &to_i32(attempt)],
            )
            .map_err(|e| backend(&place, "cannot release a set", e))?;
        Ok(n == 1)
    }

    /// Records the result of attempt `attempt` of set `id`, with its whole log, in one
    /// transaction: it counts if that attempt still holds the set (even past its lease,
    /// when no other worker took the set meanwhile); otherwise it is kept as a
    /// duplicate and counts for nothing. Sending the same result again (after a lost
    /// connection hid whether the commit happened) changes nothing.
    pub fn record_attempt(
        &mut self,
        id: SetId,
        attempt: u32,
        outcome: &SetOutcome,
        log: &[u8],
    ) -> Result<Recorded, StoreError> {
        let name = self.name.clone();
        // A log compressed with gzip already (an older server's finished set) is kept as
        // it is; its text's length is gzip's trailer's (RFC 1952: the last four bytes,
        // little-endian, the length modulo 2^32).
        let (gz, text_len) = match log {
            [.., a, b, c, d] if referee::is_gzip(log) => (
                log.to_vec(),
                u64::from(u32::from_le_bytes([*a, *b, *c, *d])),
            ),
            _ => (
                compress(log).map_err(|e| StoreError::Invalid {
                    place: self.place.clone(),
                    what: format!("cannot compress a log: {e}"),
                })?,
                log.len() as u64,
            ),
        };
        self.transaction("a set's result", |tx, place| {
        let holds = tx
            .query_opt(
                &format!("SELECT 1 FROM sets WHERE {HOLDS} FOR UPDATE"),
                &[&id, &to_i32(attempt)],
            )
            .map_err(|e| backend(place, "cannot read a set", e))?
            .is_some();
        if holds {
            write_outcome(tx, place, id, outcome)?;
        }
        tx.execute(
            "INSERT INTO results (set_id, attempt, worker, arrived, counted, points_a, points_b, log_size, log_gz)
             VALUES ($1, $2, $3, now(), $4, $5, $6, $7, $8)
             ON CONFLICT (set_id, attempt) DO NOTHING",
            &[
                &id,
                &to_i32(attempt),
                &name,
                &holds,
                &(outcome.points[0] as i32),
                &(outcome.points[1] as i32),
                &(text_len as i64),
                &gz,
            ],
        )
        .map_err(|e| backend(place, "cannot keep a set's log", e))?;
        let recorded = if holds {
            Recorded::Counted
        } else {
            // The same attempt's result may have been committed already, its answer
            // lost with the connection: then it is not a duplicate.
            let counted: bool = tx
                .query_one(
                    "SELECT counted FROM results WHERE set_id = $1 AND attempt = $2",
                    &[&id, &to_i32(attempt)],
                )
                .map_err(|e| backend(place, "cannot read a result", e))?
                .get(0);
            if counted {
                Recorded::Counted
            } else {
                Recorded::Duplicate
            }
        };
        Ok(recorded)
        })
    }

    /// Notes this worker alive, with `in_flight` sets being played.
    pub fn heartbeat(&mut self, beat: &Heartbeat) -> Result<(), StoreError> {
        let place = self.place.clone();
        let name = self.name.clone();
        let mut leaves = beat.leaves.clone();
        leaves.sort();
        self.c()
            .execute(
                "INSERT INTO workers (name, host, pid, concurrency, started, last_seen, in_flight,
                                      problem, leaves)
                 VALUES ($1, $2, $3, $4, now(), now(), $5, $6, $7)
                 ON CONFLICT (name) DO UPDATE SET host = $2, pid = $3, concurrency = $4,
                     last_seen = now(), in_flight = $5, stopped = NULL, problem = $6,
                     leaves = $7",
                &[
                    &name,
                    &host_name(),
                    &(std::process::id() as i32),
                    &(beat.concurrency as i32),
                    &(beat.in_flight as i32),
                    &beat.problem,
                    &leaves,
                ],
            )
            .map(|_| ())
            .map_err(|e| backend(&place, "cannot note a worker's heartbeat", e))
    }

    /// Notes that this worker stopped cleanly.
    pub fn goodbye(&mut self) -> Result<(), StoreError> {
        let place = self.place.clone();
        let name = self.name.clone();
        self.c()
            .execute(
                "UPDATE workers SET stopped = now(), last_seen = now(), in_flight = 0 WHERE name = $1",
                &[&name],
            )
            .map(|_| ())
            .map_err(|e| backend(&place, "cannot note a worker's end", e))
    }

    /// Every worker the store has heard of, by name.
    pub fn workers(&mut self) -> Result<Vec<WorkerRow>, StoreError> {
        let place = self.place.clone();
        let rows = self
            .c()
            .query(
                "SELECT w.name, w.host, w.pid, w.concurrency,
                        EXTRACT(EPOCH FROM now() - w.last_seen)::float8,
                        (SELECT count(*) FROM sets s
                          WHERE s.worker = w.name AND s.status = 'running' AND s.lease_until >= now()),
                        (SELECT count(*) FROM results r
                          WHERE r.worker = w.name AND r.counted AND r.arrived > now() - interval '1 hour'),
                        (SELECT count(*) FROM results r WHERE r.worker = w.name AND r.counted),
                        (SELECT count(*) FROM results r WHERE r.worker = w.name AND NOT r.counted),
                        w.stopped IS NOT NULL, w.problem, w.leaves
                 FROM workers w ORDER BY w.name",
                &[],
            )
            .map_err(|e| backend(&place, "cannot read the workers", e))?;
        Ok(rows
            .iter()
            .map(|r| WorkerRow {
                name: r.get(0),
                host: r.get(1),
                pid: r.get(2),
                concurrency: r.get(3),
                seen_ago: r.get(4),
                in_flight: r.get(5),
                last_hour: r.get(6),
                finished: r.get(7),
                duplicates: r.get(8),
                stopped: r.get(9),
                problem: r.get(10),
                leaves: r.get(11),
            })
            .collect())
    }

    /// [`stuck_reason`] for this store now: its workers, the bots of its pending sets,
    /// the sets being played.
    pub fn stuck(&mut self) -> Result<Option<String>, StoreError> {
        let rows = self.workers()?;
        let place = self.place.clone();
        let pending: Vec<(String, String)> = self
            .c()
            .query(
                "SELECT DISTINCT bot_a, bot_b FROM sets WHERE status = 'pending' ORDER BY 1, 2",
                &[],
            )
            .map_err(|e| backend(&place, "cannot read the pending sets", e))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let running: i64 = self
            .c()
            .query_one(
                "SELECT count(*) FROM sets WHERE status = 'running' AND lease_until >= now()",
                &[],
            )
            .map_err(|e| backend(&place, "cannot count the sets in play", e))?
            .get(0);
        Ok(stuck_reason(&rows, &pending, running.max(0) as u64))
    }

    /// The log of set `id`: the counted attempt's, else the latest that reached the
    /// store; `None` when no result of the set arrived.
    pub fn log(&mut self, id: SetId) -> Result<Option<StoredLog>, StoreError> {
        let Some(packed) = self.packed_log(id)? else {
            return Ok(None);
        };
        let text = decompress(&packed.gz).map_err(|e| {
            invalid(
                &self.place,
                format!("the log of set {id} cannot be unpacked: {e}"),
            )
        })?;
        Ok(Some(StoredLog {
            key: packed.key,
            attempt: packed.attempt,
            text,
        }))
    }

    /// The log of set `id` as [`PgStore::log`] chooses it, still packed.
    pub fn packed_log(&mut self, id: SetId) -> Result<Option<PackedLog>, StoreError> {
        let place = self.place.clone();
        let row = self
            .c()
            .query_opt(
                "SELECT s.round, s.bot_a, s.bot_b, r.attempt, r.log_gz
                 FROM results r JOIN sets s ON s.id = r.set_id
                 WHERE r.set_id = $1
                 ORDER BY r.counted DESC, r.attempt DESC LIMIT 1",
                &[&id],
            )
            .map_err(|e| backend(&place, "cannot read a set's log", e))?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(PackedLog {
            key: SetKey {
                round: to_u32(row.get(0)),
                a: row.get(1),
                b: row.get(2),
            },
            attempt: to_u32(row.get(3)),
            gz: row.get(4),
        }))
    }

    /// The ids of the sets whose result counted, in the order they finished.
    pub fn done_ids(&mut self) -> Result<Vec<SetId>, StoreError> {
        let place = self.place.clone();
        let rows = self
            .c()
            .query(
                "SELECT id FROM sets WHERE status = 'done' ORDER BY done_seq",
                &[],
            )
            .map_err(|e| backend(&place, "cannot list the finished sets", e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// How many results arrived too late to count.
    pub fn duplicates(&mut self) -> Result<u64, StoreError> {
        let place = self.place.clone();
        let n: i64 = self
            .c()
            .query_one("SELECT count(*) FROM results WHERE NOT counted", &[])
            .map_err(|e| backend(&place, "cannot count the duplicates", e))?
            .get(0);
        Ok(n as u64)
    }
}

/// The games, faults and totals of a set, and its status `done`, inside `tx`.
fn write_outcome(
    tx: &mut Transaction<'_>,
    place: &str,
    id: SetId,
    outcome: &SetOutcome,
) -> Result<(), StoreError> {
    let games = tx
        .prepare(
            "INSERT INTO games (set_id, game, first, winner, points_a, points_b, reason, plies, is_double, faulted)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .map_err(|e| backend(place, "cannot record a set's games", e))?;
    for g in &outcome.games {
        tx.execute(
            &games,
            &[
                &id,
                &to_i32(g.game),
                &side_to_sql(g.first),
                &g.winner.map(side_to_sql),
                &to_i32(g.points[0]),
                &to_i32(g.points[1]),
                &g.reason.as_str(),
                &to_i32(g.plies),
                &g.double,
                &seats_to_text(&g.faulted),
            ],
        )
        .map_err(|e| backend(place, "cannot record a set's games", e))?;
    }
    let faults = tx
        .prepare(
            "INSERT INTO faults (set_id, game, ply, bot, kind, detail) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .map_err(|e| backend(place, "cannot record a set's faults", e))?;
    for f in &outcome.faults {
        tx.execute(
            &faults,
            &[
                &id,
                &to_i32(f.game),
                &to_i32(f.ply),
                &side_to_sql(f.bot),
                &f.kind.as_str(),
                &f.detail,
            ],
        )
        .map_err(|e| backend(place, "cannot record a set's faults", e))?;
    }
    // The counter's row stays locked until this transaction ends: numbers become
    // visible in order.
    let seq: i64 = tx
        .query_one("UPDATE done_counter SET n = n + 1 RETURNING n", &[])
        .map_err(|e| backend(place, "cannot number a set's result", e))?
        .get(0);
    tx.execute(
        "UPDATE sets SET status = 'done', finished = clock_timestamp(), log = $2,
             points_a = $3, points_b = $4, winner = $5,
             moves_a = $6, moves_b = $7, move_ms_a = $8, move_ms_b = $9, lease_until = NULL,
             done_seq = $10
         WHERE id = $1",
        &[
            &id,
            &outcome.log.to_string(),
            &to_i32(outcome.points[0]),
            &to_i32(outcome.points[1]),
            &outcome.winner.map(side_to_sql),
            &(outcome.moves[0] as i64),
            &(outcome.moves[1] as i64),
            &outcome.move_ms[0],
            &outcome.move_ms[1],
            &seq,
        ],
    )
    .map_err(|e| backend(place, "cannot mark a set done", e))?;
    Ok(())
}

impl Claims for PgStore {
    fn requeue(&mut self, claims: &[Claim]) -> Result<usize, StoreError> {
        self.transaction("the stopped sets", |tx, place| {
            let mut put_back = 0;
            for claim in claims {
                put_back += tx
                    .execute(
                        &format!(
                            "UPDATE sets SET status = 'pending', worker = NULL, lease_until = NULL,
                             log = NULL, started = NULL
                         WHERE {HOLDS}"
                        ),
                        &[&claim.id, &to_i32(claim.attempt)],
                    )
                    .map_err(|e| backend(place, "cannot put stopped sets back", e))?
                    as usize;
            }
            Ok(put_back)
        })
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn lease(&self) -> Option<Duration> {
        Some(self.lease)
    }

    fn renew_claims(&mut self, held: &[Claim]) -> Result<Vec<bool>, StoreError> {
        let lease = self.lease;
        held.iter()
            .map(|c| self.renew(c.id, c.attempt, lease))
            .collect()
    }

    fn is_outage(&self, error: &StoreError) -> bool {
        self.is_lost() || unreachable(error)
    }

    fn record_played(
        &mut self,
        set: &ClaimedSet,
        outcome: &SetOutcome,
        log: &[u8],
    ) -> Result<Recorded, StoreError> {
        self.record_attempt(set.id, set.attempts, outcome, log)
    }

    fn reconnect_if_lost(&mut self) -> Result<(), StoreError> {
        if self.is_lost() {
            self.reconnect()?;
        }
        Ok(())
    }

    fn set_log(&mut self, claim: Claim, log: &LogPlace) -> Result<bool, StoreError> {
        let place = self.place.clone();
        self.c()
            .execute(
                &format!("UPDATE sets SET log = $3 WHERE {HOLDS}"),
                &[&claim.id, &to_i32(claim.attempt), &log.to_string()],
            )
            .map(|changed| changed == 1)
            .map_err(|e| backend(&place, "cannot note a set's log", e))
    }

    fn record(&mut self, claim: Claim, outcome: &SetOutcome) -> Result<bool, StoreError> {
        let id = claim.id;
        self.transaction("a set's result", |tx, place| {
            let holds = tx
                .query_opt(
                    &format!("SELECT id FROM sets WHERE {HOLDS} FOR UPDATE"),
                    &[&id, &to_i32(claim.attempt)],
                )
                .map_err(|e| backend(place, "cannot read a set", e))?
                .is_some();
            // Done already, or claimed again since: a stale claim records nothing.
            if !holds {
                return Ok(false);
            }
            write_outcome(tx, place, id, outcome)?;
            Ok(true)
        })
    }
}

impl Reads for PgStore {
    fn settings(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let rows = self
            .c()
            .query("SELECT key, value FROM settings", &[])
            .map_err(|e| backend(&self.place, "cannot read the settings", e))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    fn bots(&self) -> Result<Vec<BotRow>, StoreError> {
        let mut client = self.c();
        let rows = client
            .query(
                "SELECT name, command, active FROM bots ORDER BY added, name",
                &[],
            )
            .map_err(|e| backend(&self.place, "cannot read the bots", e))?;
        Ok(rows
            .iter()
            .map(|r| BotRow {
                name: r.get(0),
                command: r.get(1),
                active: r.get(2),
            })
            .collect())
    }

    fn finished_sets(&self, query: &FinishedQuery) -> Result<Vec<(u64, FinishedSet)>, StoreError> {
        let selection = selection(query);
        let ids = &selection.ids;
        let owned: Vec<Box<dyn postgres::types::ToSql + Sync>> = selection
            .params
            .into_iter()
            .map(|p| -> Box<dyn postgres::types::ToSql + Sync> {
                match p {
                    Param::Int(n) => Box::new(n),
                    Param::Text(t) => Box::new(t),
                }
            })
            .collect();
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
            owned.iter().map(|p| &**p).collect();
        let mut client = self.c();
        let place = &self.place;
        // One snapshot for the three reads.
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| backend(place, "cannot start a read", e))?;
        let err = |e| backend(place, "cannot read the finished sets", e);
        let sets = tx
            .query(
                &format!(
                    "SELECT id, round, bot_a, bot_b, seed, points_a, points_b, winner,
                            moves_a, moves_b, move_ms_a, move_ms_b, log, done_seq, pruned,
                            to_char(finished AT TIME ZONE 'UTC',
                                    'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')
                     FROM sets WHERE id IN ({ids}) ORDER BY done_seq {}",
                    selection.order
                ),
                &params,
            )
            .map_err(err)?
            .iter()
            .map(|r| SetRowText {
                id: r.get(0),
                seq: r.get::<_, i64>(13) as u64,
                key: SetKey {
                    round: to_u32(r.get(1)),
                    a: r.get(2),
                    b: r.get(3),
                },
                seed: r.get::<_, i64>(4) as u64,
                points: [
                    r.get::<_, Option<i32>>(5).map_or(0, to_u32),
                    r.get::<_, Option<i32>>(6).map_or(0, to_u32),
                ],
                winner: r.get::<_, Option<i16>>(7).map(i64::from),
                moves: [
                    r.get::<_, Option<i64>>(8).unwrap_or(0) as u64,
                    r.get::<_, Option<i64>>(9).unwrap_or(0) as u64,
                ],
                move_ms: [
                    r.get::<_, Option<f64>>(10).unwrap_or(0.0),
                    r.get::<_, Option<f64>>(11).unwrap_or(0.0),
                ],
                log: r.get(12),
                pruned: r.get(14),
                finished: r.get(15),
            })
            .collect();
        let games = tx
            .query(
                &format!(
                    "SELECT set_id, game, first, winner, points_a, points_b, reason, plies, is_double, faulted
                     FROM games WHERE set_id IN ({ids})
                     ORDER BY set_id, game"
                ),
                &params,
            )
            .map_err(err)?
            .iter()
            .map(|r| GameRowText {
                set_id: r.get(0),
                game: to_u32(r.get(1)),
                first: i64::from(r.get::<_, i16>(2)),
                winner: r.get::<_, Option<i16>>(3).map(i64::from),
                points: [to_u32(r.get(4)), to_u32(r.get(5))],
                reason: r.get(6),
                plies: to_u32(r.get(7)),
                double: r.get(8),
                faulted: r.get(9),
            })
            .collect();
        let faults = tx
            .query(
                &format!(
                    "SELECT set_id, game, ply, bot, kind, detail
                     FROM faults WHERE set_id IN ({ids})
                     ORDER BY set_id, id"
                ),
                &params,
            )
            .map_err(err)?
            .iter()
            .map(|r| FaultRowText {
                set_id: r.get(0),
                game: to_u32(r.get(1)),
                ply: to_u32(r.get(2)),
                bot: i64::from(r.get::<_, i16>(3)),
                kind: r.get(4),
                detail: r.get(5),
            })
            .collect();
        tx.commit()
            .map_err(|e| backend(place, "cannot end a read", e))?;
        FinishedRows {
            sets,
            games,
            faults,
        }
        .assemble(place)
    }

    fn progress(&self) -> Result<Progress, StoreError> {
        let mut client = self.c();
        let r = client
            .query_one(
                // Through indexes: the schedule's sets (`sets_scheduled`), the running
                // ones (`sets_to_play`), and every counted set as the counter (numbers
                // are given without gaps).
                "SELECT
                    (SELECT count(*) FROM sets WHERE scheduled),
                    (SELECT count(*) FROM sets WHERE scheduled AND status = 'done'),
                    (SELECT count(*) FROM sets WHERE status = 'running'),
                    (SELECT count(*) FROM sets s
                        JOIN bots a ON a.name = s.bot_a
                        JOIN bots b ON b.name = s.bot_b
                        WHERE s.scheduled AND s.status = 'pending' AND a.active AND b.active),
                    (SELECT n FROM done_counter)",
                &[],
            )
            .map_err(|e| backend(&self.place, "cannot count the sets", e))?;
        Ok(Progress {
            scheduled: r.get::<_, i64>(0) as u64,
            done: r.get::<_, i64>(1) as u64,
            running: r.get::<_, i64>(2) as u64,
            pending: r.get::<_, i64>(3) as u64,
            done_elsewhere: (r.get::<_, i64>(4) - r.get::<_, i64>(1)).max(0) as u64,
        })
    }

    fn running(&self) -> Result<u64, StoreError> {
        let n: i64 = self
            .c()
            .query_one("SELECT count(*) FROM sets WHERE status = 'running'", &[])
            .map_err(|e| backend(&self.place, "cannot count the running sets", e))?
            .get(0);
        Ok(n as u64)
    }

    fn running_sets(&self, limit: usize) -> Result<Vec<RunningSet>, StoreError> {
        let rows = self
            .c()
            .query(
                "SELECT round, bot_a, bot_b, worker,
                        COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - started)::float8, 0)
                 FROM sets WHERE status = 'running' ORDER BY started, id LIMIT $1",
                &[&i64::try_from(limit).unwrap_or(i64::MAX)],
            )
            .map_err(|e| backend(&self.place, "cannot list the running sets", e))?;
        Ok(rows
            .iter()
            .map(|r| RunningSet {
                key: SetKey {
                    round: to_u32(r.get(0)),
                    a: r.get(1),
                    b: r.get(2),
                },
                worker: r.get(3),
                for_s: r.get::<_, f64>(4).max(0.0),
            })
            .collect())
    }

    fn rating_history(&self) -> Result<Vec<RatingPoint>, StoreError> {
        let rows = self
            .c()
            .query(
                "SELECT number, bot, value, std_error FROM rating_history ORDER BY number, bot",
                &[],
            )
            .map_err(|e| backend(&self.place, "cannot read the rating history", e))?;
        Ok(rating_points(
            rows.iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3))),
        ))
    }

    fn worker_rows(&mut self) -> Result<Vec<WorkerRow>, StoreError> {
        self.workers()
    }

    fn stuck(&mut self) -> Result<Option<String>, StoreError> {
        PgStore::stuck(self)
    }

    fn stored_log(&mut self, id: SetId) -> Result<Option<PackedLog>, StoreError> {
        self.packed_log(id)
    }
}

impl Schedule for PgStore {
    fn save_settings(&mut self, settings: &BTreeMap<String, String>) -> Result<(), StoreError> {
        self.transaction("the settings", |tx, place| {
            for (k, v) in settings {
                tx.execute(
                    "INSERT INTO settings (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    &[k, v],
                )
                .map_err(|e| backend(place, "cannot write the settings", e))?;
            }
            Ok(())
        })
    }

    fn sync(&mut self, bots: &[BotEntry], sets: &[PlannedSet]) -> Result<SyncReport, StoreError> {
        self.transaction("the schedule", |tx, place| {
            let err = |e| backend(place, "cannot update the schedule", e);
            // One sync at a time (two `hus league` runs on the same store).
            tx.execute("LOCK TABLE bots IN EXCLUSIVE MODE", &[])
                .map_err(err)?;
            let mut report = SyncReport::default();
            let known: HashMap<String, (String, bool)> = tx
                .query("SELECT name, command, active FROM bots", &[])
                .map_err(err)?
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2))))
                .collect();
            for change in bot_changes(&known, bots, &mut report) {
                match change {
                BotChange::Add(bot) => tx.execute(
                    "INSERT INTO bots (name, command, active, added) VALUES ($1, $2, true, now())",
                    &[&bot.name, &bot.command],
                ),
                BotChange::Keep(bot) => tx.execute(
                    "UPDATE bots SET command = $2, active = true WHERE name = $1",
                    &[&bot.name, &bot.command],
                ),
                BotChange::Retire(name) => {
                    tx.execute("UPDATE bots SET active = false WHERE name = $1", &[&name])
                }
            }
            .map_err(err)?;
            }
            tx.execute("UPDATE sets SET scheduled = false WHERE scheduled", &[])
                .map_err(err)?;
            let insert = tx
                .prepare(
                    "INSERT INTO sets (round, bot_a, bot_b, seed, scheduled, status)
                 VALUES ($1, $2, $3, $4, true, 'pending')
                 ON CONFLICT (round, bot_a, bot_b) DO NOTHING",
                )
                .map_err(err)?;
            let mark = tx
            .prepare(
                "UPDATE sets SET scheduled = true WHERE round = $1 AND bot_a = $2 AND bot_b = $3",
            )
            .map_err(err)?;
            for set in sets {
                let k = &set.key;
                let round = to_i32(k.round);
                let added = tx
                    .execute(&insert, &[&round, &k.a, &k.b, &seed_to_sql(set.seed)])
                    .map_err(err)?;
                if added == 1 {
                    report.added_sets += 1;
                } else {
                    tx.execute(&mark, &[&round, &k.a, &k.b]).map_err(err)?;
                }
            }
            Ok(report)
        })
    }

    /// Puts back the running sets whose runner is gone: those this process's name
    /// holds (a league run restarted under the same name) and those whose lease has
    /// expired. Sets that live workers hold keep running.
    fn requeue_running(&mut self) -> Result<Vec<Requeued>, StoreError> {
        let name = self.name.clone();
        self.transaction("the interrupted sets", |tx, place| {
            let rows = tx
                .query(
                    "UPDATE sets SET status = 'pending', worker = NULL, lease_until = NULL,
                     log = NULL, started = NULL
                 WHERE status = 'running' AND (worker = $1 OR worker IS NULL OR lease_until < now())
                 RETURNING id, round, bot_a, bot_b",
                    &[&name],
                )
                .map_err(|e| backend(place, "cannot put interrupted sets back", e))?;
            let mut found: Vec<(i64, Requeued)> = rows
                .iter()
                .map(|r| {
                    (
                        r.get(0),
                        Requeued {
                            key: SetKey {
                                round: to_u32(r.get(1)),
                                a: r.get(2),
                                b: r.get(3),
                            },
                            log: None,
                        },
                    )
                })
                .collect();
            found.sort_by_key(|(id, _)| *id);
            Ok(found.into_iter().map(|(_, r)| r).collect())
        })
    }

    fn claim_next_except(
        &mut self,
        pairs: &[(String, String)],
    ) -> Result<Option<ClaimedSet>, StoreError> {
        self.claim_except(self.lease, &[], pairs)
    }

    fn schedule_and_claim(
        &mut self,
        set: &PlannedSet,
        replaces: Option<&SetKey>,
    ) -> Result<Option<ClaimedSet>, StoreError> {
        let name = self.name.clone();
        self.transaction("a claim", |tx, place| {
            let err = |e| backend(place, "cannot schedule and claim a set", e);
            if let Some(r) = replaces {
                tx.execute(
                "UPDATE sets SET scheduled = false WHERE round = $1 AND bot_a = $2 AND bot_b = $3",
                &[&to_i32(r.round), &r.a, &r.b],
            )
            .map_err(err)?;
            }
            let k = &set.key;
            let round = to_i32(k.round);
            tx.execute(
                "INSERT INTO sets (round, bot_a, bot_b, seed, scheduled, status)
             VALUES ($1, $2, $3, $4, true, 'pending')
             ON CONFLICT (round, bot_a, bot_b) DO UPDATE SET scheduled = true",
                &[&round, &k.a, &k.b, &seed_to_sql(set.seed)],
            )
            .map_err(err)?;
            let row = tx
                .query_opt(
                    "UPDATE sets s SET status = 'running', attempts = s.attempts + 1, worker = $4,
                     lease_until = now() + $5 * interval '1 millisecond',
                     started = now(), log = NULL
                 FROM bots a, bots b
                 WHERE s.round = $1 AND s.bot_a = $2 AND s.bot_b = $3 AND s.status = 'pending'
                   AND a.name = s.bot_a AND b.name = s.bot_b AND a.active AND b.active
                 RETURNING s.id, s.seed, s.attempts",
                    &[&round, &k.a, &k.b, &name, &(self.lease.as_millis() as f64)],
                )
                .map_err(err)?;
            Ok(row.map(|row| ClaimedSet {
                id: row.get(0),
                key: k.clone(),
                seed: row.get::<_, i64>(1) as u64,
                attempts: to_u32(row.get(2)),
            }))
        })
    }

    fn prune_logs(&mut self, up_to: u64) -> Result<Vec<LogPlace>, StoreError> {
        self.transaction("the pruned logs", |tx, place| {
            let err = |e| backend(place, "cannot prune logs", e);
            // One pruner at a time: the mark is read and moved under the settings' lock.
            tx.execute("LOCK TABLE settings IN EXCLUSIVE MODE", &[])
                .map_err(err)?;
            let after: i64 = tx
                .query_opt(
                    "SELECT value FROM settings WHERE key = $1",
                    &[&PRUNED_SETTING],
                )
                .map_err(err)?
                .and_then(|r| r.get::<_, String>(0).parse().ok())
                .unwrap_or(0);
            let up_to = i64::try_from(up_to).unwrap_or(i64::MAX);
            if up_to <= after {
                return Ok(Vec::new());
            }
            let logs: Vec<Option<String>> = tx
                .query(
                    "SELECT log FROM sets WHERE done_seq > $1 AND done_seq <= $2 AND NOT pruned
                 ORDER BY done_seq",
                    &[&after, &up_to],
                )
                .map_err(err)?
                .iter()
                .map(|r| r.get(0))
                .collect();
            // Checked before anything changes: a log that names no place prunes nothing.
            let logs = stored_logs(place, logs)?;
            tx.execute(
                "UPDATE sets SET pruned = TRUE WHERE done_seq > $1 AND done_seq <= $2",
                &[&after, &up_to],
            )
            .map_err(err)?;
            // The logs the store keeps go too (every result that arrived for those sets).
            tx.execute(
                "UPDATE results SET log_gz = ''::bytea, log_size = 0
             WHERE set_id IN (SELECT id FROM sets WHERE done_seq > $1 AND done_seq <= $2)",
                &[&after, &up_to],
            )
            .map_err(err)?;
            tx.execute(
                "INSERT INTO settings (key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&PRUNED_SETTING, &up_to.to_string()],
            )
            .map_err(err)?;
            Ok(logs)
        })
    }

    fn record_ratings(&mut self, point: &RatingPoint) -> Result<bool, StoreError> {
        self.transaction("the ratings", |tx, place| {
        let err = |e| backend(place, "cannot record the ratings", e);
        // One writer of the history at a time (a server; workers never write it).
        tx.execute("LOCK TABLE rating_history IN EXCLUSIVE MODE", &[])
            .map_err(err)?;
        let last: Option<i64> = tx
            .query_one("SELECT max(number) FROM rating_history", &[])
            .map_err(err)?
            .get(0);
        let n = point.number;
        match history_step(last.map(|l| l.max(0) as u64), n) {
            HistoryStep::Skip => return Ok(false),
            HistoryStep::Keep => {}
            // Each bucket of the new stride keeps its first point.
            HistoryStep::ThinAndKeep(stride) => {
                tx.execute(
                    "DELETE FROM rating_history WHERE number NOT IN
                         (SELECT min(number) FROM rating_history GROUP BY number / $1)",
                    &[&(stride as i64)],
                )
                .map_err(err)?;
            }
        }
        for (bot, value, std_error) in &point.ratings {
            tx.execute(
                "INSERT INTO rating_history (number, bot, value, std_error) VALUES ($1, $2, $3, $4)",
                &[&(n as i64), bot, value, std_error],
            )
            .map_err(err)?;
        }
        Ok(true)
        })
    }
}

/// A store error that waiting may cure (the server down or unreachable), as opposed to
/// a bad URL, a refused login, a newer schema, or a TLS handshake that failed on
/// something other than the network (a certificate, a server without TLS).
pub fn unreachable(e: &StoreError) -> bool {
    let StoreError::Backend { cause, .. } = e else {
        return false;
    };
    match cause.downcast_ref::<postgres::Error>() {
        Some(pg) if is_tls_refusal(pg) => false,
        Some(pg) => match pg.code() {
            // Server shutting down or starting up, too many connections.
            Some(code) => {
                let c = code.code();
                c.starts_with("57P") || c.starts_with("08") || c == "53300"
            }
            None => true,
        },
        None => false,
    }
}

/// The columns of a [`VersionRow`], in its fields' order, the times in the form of
/// `versions::stored_time`.
const VERSION_COLUMNS: &str = "bot, number, author, hash,
    to_char(submitted AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
    to_char(changed AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
    state, output, detail";
/// The columns of a list of versions: the build's output and the detail left out (up
/// to 256 KiB each; a list's size must not grow with them).
const LIST_COLUMNS: &str = "bot, number, author, hash,
    to_char(submitted AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
    to_char(changed AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
    state, ''::text, ''::text";

/// The rows read with [`VERSION_COLUMNS`] ([`StoreError::Invalid`] for a state this
/// code never writes).
fn version_rows(place: &str, rows: &[postgres::Row]) -> Result<Vec<VersionRow>, StoreError> {
    rows.iter()
        .map(|r| {
            Ok(VersionRow {
                bot: r.get(0),
                number: to_u32(r.get(1)),
                author: r.get(2),
                hash: r.get(3),
                submitted: r.get(4),
                changed: r.get(5),
                state: stored_state(place, r.get(6))?,
                output: r.get(7),
                detail: r.get(8),
            })
        })
        .collect()
}

impl Versions for PgStore {
    fn add_version(&mut self, version: &NewVersion) -> Result<u32, StoreError> {
        let submitted = stored_time(&self.place, &version.submitted)?;
        self.transaction("the new version", |tx, place| {
            let err = |e| backend(place, "cannot add the version", e);
            // Two servers numbering the same bot's versions at once: one waits.
            tx.batch_execute("LOCK TABLE versions IN SHARE ROW EXCLUSIVE MODE")
                .map_err(err)?;
            tx.execute(
                "INSERT INTO archives (hash, bytes) VALUES ($1, $2)
                 ON CONFLICT (hash) DO UPDATE SET bytes = excluded.bytes
                 WHERE octet_length(archives.bytes) = 0",
                &[&version.hash, &version.archive],
            )
            .map_err(err)?;
            let number: i32 = tx
                .query_one(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE bot = $1",
                    &[&version.bot],
                )
                .map_err(err)?
                .get(0);
            tx.execute(
                "INSERT INTO versions (bot, number, author, hash, submitted, changed, state,
                                       output, detail)
                 VALUES ($1, $2, $3, $4, $5::text::timestamptz, $5::text::timestamptz, $6,
                         '', '')",
                &[
                    &version.bot,
                    &number,
                    &version.author,
                    &version.hash,
                    &submitted,
                    &VersionState::Queued.as_str(),
                ],
            )
            .map_err(err)?;
            Ok(to_u32(number))
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
        let now = stored_time(&self.place, now)?;
        self.transaction("the version's state", |tx, place| {
            tx.execute(
                "UPDATE versions SET state = $3, changed = $4::text::timestamptz,
                        output = COALESCE($5, output), detail = COALESCE($6, detail)
                 WHERE bot = $1 AND number = $2",
                &[
                    &bot,
                    &to_i32(number),
                    &state.as_str(),
                    &now,
                    &output.map(cut_text),
                    &detail.map(cut_text),
                ],
            )
            .map(|changed| changed == 1)
            .map_err(|e| backend(place, "cannot set the version's state", e))
        })
    }

    fn activate_version(
        &mut self,
        bot: &str,
        number: u32,
        now: &str,
    ) -> Result<Option<u32>, StoreError> {
        let now = stored_time(&self.place, now)?;
        let number = to_i32(number);
        self.transaction("the activation", |tx, place| {
            let err = |e| backend(place, "cannot activate the version", e);
            // The version's row is locked: a second activation of it waits here.
            let exists = tx
                .query_opt(
                    "SELECT 1 FROM versions WHERE bot = $1 AND number = $2 FOR UPDATE",
                    &[&bot, &number],
                )
                .map_err(err)?;
            if exists.is_none() {
                return Err(no_such_version(place, bot, to_u32(number)));
            }
            let retired = tx
                .query_opt(
                    "UPDATE versions SET state = 'retired', changed = $3::text::timestamptz
                     WHERE bot = $1 AND number <> $2 AND state = 'active'
                     RETURNING number",
                    &[&bot, &number, &now],
                )
                .map_err(err)?
                .map(|r| to_u32(r.get(0)));
            tx.execute(
                "UPDATE versions SET state = 'active', changed = $3::text::timestamptz
                 WHERE bot = $1 AND number = $2 AND state <> 'active'",
                &[&bot, &number, &now],
            )
            .map_err(err)?;
            Ok(retired)
        })
    }

    fn versions_of(&self, bot: &str) -> Result<Vec<VersionRow>, StoreError> {
        let rows = self
            .c()
            .query(
                &format!("SELECT {LIST_COLUMNS} FROM versions WHERE bot = $1 ORDER BY number"),
                &[&bot],
            )
            .map_err(|e| backend(&self.place, "cannot read the versions", e))?;
        version_rows(&self.place, &rows)
    }

    fn version(&self, bot: &str, number: u32) -> Result<Option<VersionRow>, StoreError> {
        let rows = self
            .c()
            .query(
                &format!("SELECT {VERSION_COLUMNS} FROM versions WHERE bot = $1 AND number = $2"),
                &[&bot, &to_i32(number)],
            )
            .map_err(|e| backend(&self.place, "cannot read the version", e))?;
        Ok(version_rows(&self.place, &rows)?.pop())
    }

    fn versions_in(&self, states: &[VersionState]) -> Result<Vec<VersionRow>, StoreError> {
        let states: Vec<&str> = states.iter().map(|s| s.as_str()).collect();
        let rows = self
            .c()
            .query(
                &format!(
                    "SELECT {LIST_COLUMNS} FROM versions WHERE state = ANY($1)
                     ORDER BY bot, number"
                ),
                &[&states],
            )
            .map_err(|e| backend(&self.place, "cannot read the versions", e))?;
        version_rows(&self.place, &rows)
    }

    fn archive(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = self
            .c()
            .query_opt(
                "SELECT bytes FROM archives WHERE hash = $1 AND octet_length(bytes) > 0",
                &[&hash],
            )
            .map_err(|e| backend(&self.place, "cannot read the archive", e))?;
        Ok(row.map(|r| r.get(0)))
    }

    fn drop_refused_archive(&mut self, hash: &str, kept_refusal: &str) -> Result<bool, StoreError> {
        self.c()
            .execute(
                "UPDATE archives SET bytes = ''::bytea
                 WHERE hash = $1 AND octet_length(bytes) > 0
                 AND NOT EXISTS (SELECT 1 FROM versions WHERE hash = $1
                     AND NOT (state = 'build failed'
                              OR (state = 'rejected'
                                  AND left(detail, length($2::text)) <> $2::text)))",
                &[&hash, &kept_refusal],
            )
            .map(|n| n == 1)
            .map_err(|e| backend(&self.place, "cannot empty a refused archive", e))
    }

    fn submitted_since(&self, author: &str, since: &str) -> Result<Vec<String>, StoreError> {
        let since = stored_time(&self.place, since)?;
        let rows = self
            .c()
            .query(
                "SELECT to_char(submitted AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')
                 FROM versions WHERE author = $1 AND submitted >= $2::text::timestamptz
                 ORDER BY submitted",
                &[&author, &since],
            )
            .map_err(|e| backend(&self.place, "cannot read the submissions", e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}

impl GateBatches for PgStore {
    fn gate_clock(&mut self) -> Result<f64, StoreError> {
        self.c()
            .query_one("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8", &[])
            .map(|r| r.get(0))
            .map_err(|e| backend(&self.place, "cannot read the database's clock", e))
    }

    fn queue_gate_batches(&mut self, batches: &[GateBatch]) -> Result<(), StoreError> {
        self.transaction("the gate's batches", |tx, place| {
            for b in batches {
                tx.execute(
                    "INSERT INTO gate_batches (test, batch, candidate, active, seed, games, pairs,
                                               state)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued')
                     ON CONFLICT (test, batch) DO NOTHING",
                    &[
                        &b.test,
                        &to_i32(b.batch),
                        &b.candidate,
                        &b.active,
                        &(b.seed as i64),
                        &to_i32(b.games),
                        &to_i32(b.pairs),
                    ],
                )
                .map_err(|e| backend(place, "cannot queue the gate's batches", e))?;
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
        let raw = self.transaction("a gate batch's claim", |tx, place| {
            let err = |e| backend(place, "cannot claim a gate batch", e);
            tx.execute(
                "UPDATE gate_batches SET state = 'queued'
                 WHERE state = 'running' AND lease_until < $1",
                &[&now],
            )
            .map_err(err)?;
            let row = tx
                .query_opt(
                    "UPDATE gate_batches
                     SET state = 'running', worker = $1, attempts = attempts + 1,
                         lease_until = $2
                     WHERE (test, batch) = (SELECT test, batch FROM gate_batches
                                            WHERE state = 'queued'
                                              AND ($3::text IS NULL OR test = $3::text)
                                            ORDER BY batch, test LIMIT 1
                                            FOR UPDATE SKIP LOCKED)
                     RETURNING test, batch, candidate, active, seed, games, pairs, attempts",
                    &[&worker, &(now + lease), &test],
                )
                .map_err(err)?;
            Ok(row.map(|r| RawClaim {
                test: r.get(0),
                batch: i64::from(r.get::<_, i32>(1)),
                candidate: r.get(2),
                active: r.get(3),
                seed: r.get(4),
                games: i64::from(r.get::<_, i32>(5)),
                pairs: i64::from(r.get::<_, i32>(6)),
                attempts: i64::from(r.get::<_, i32>(7)),
            }))
        })?;
        raw.map(|r| r.check(&self.place)).transpose()
    }

    fn renew_gate_batch(
        &mut self,
        test: &str,
        batch: u32,
        attempt: u32,
        until: f64,
    ) -> Result<bool, StoreError> {
        self.c()
            .execute(
                "UPDATE gate_batches SET lease_until = $4
                 WHERE test = $1 AND batch = $2 AND attempts = $3 AND state = 'running'",
                &[&test, &to_i32(batch), &to_i32(attempt), &until],
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
        let c = stored_counts(done.pentanomial);
        let state = match done.error {
            Some(_) => BatchState::Failed,
            None => BatchState::Done,
        };
        self.transaction("a gate batch's result", |tx, place| {
            let err = |e| backend(place, "cannot record a gate batch", e);
            // Two batches of a test ending at once are numbered one after the other.
            tx.execute("LOCK TABLE gate_batches IN SHARE ROW EXCLUSIVE MODE", &[])
                .map_err(err)?;
            tx.execute(
                "UPDATE gate_batches
                 SET state = $4, c0 = $5, c1 = $6, c2 = $7, c3 = $8, c4 = $9, played = $10,
                     error = $11, log = $12, lease_until = NULL,
                     ended = (SELECT COALESCE(MAX(ended), 0) + 1 FROM gate_batches
                              WHERE test = $1)
                 WHERE test = $1 AND batch = $2 AND attempts = $3 AND state = 'running'",
                &[
                    &test,
                    &to_i32(batch),
                    &to_i32(attempt),
                    &state.as_str(),
                    &c[0],
                    &c[1],
                    &c[2],
                    &c[3],
                    &c[4],
                    &to_i32(done.games),
                    &done.error.as_deref().unwrap_or(""),
                    &done.log,
                ],
            )
            .map(|n| n == 1)
            .map_err(err)
        })
    }

    fn gate_batch_rows(&self, test: &str) -> Result<Vec<GateBatchRow>, StoreError> {
        let rows = self
            .c()
            .query(
                "SELECT batch, state, worker, attempts, c0, c1, c2, c3, c4, played, error, ended
                 FROM gate_batches WHERE test = $1 ORDER BY batch",
                &[&test],
            )
            .map_err(|e| backend(&self.place, "cannot read the gate's batches", e))?;
        rows.iter()
            .map(|r| {
                RawBatchRow {
                    batch: i64::from(r.get::<_, i32>(0)),
                    state: r.get(1),
                    worker: r.get(2),
                    attempts: i64::from(r.get::<_, i32>(3)),
                    counts: [r.get(4), r.get(5), r.get(6), r.get(7), r.get(8)],
                    games: i64::from(r.get::<_, i32>(9)),
                    error: r.get(10),
                    ended: r.get::<_, Option<i32>>(11).map(i64::from),
                }
                .check(&self.place)
            })
            .collect()
    }

    fn gate_batch_log(&self, test: &str, batch: u32) -> Result<Option<Vec<u8>>, StoreError> {
        self.c()
            .query_opt(
                "SELECT log FROM gate_batches WHERE test = $1 AND batch = $2",
                &[&test, &to_i32(batch)],
            )
            .map(|row| row.and_then(|r| r.get::<_, Option<Vec<u8>>>(0)))
            .map_err(|e| backend(&self.place, "cannot read a gate batch's log", e))
    }

    fn end_gate_test(&mut self, test: &str) -> Result<usize, StoreError> {
        self.c()
            .execute("DELETE FROM gate_batches WHERE test = $1", &[&test])
            .map(|n| n as usize)
            .map_err(|e| backend(&self.place, "cannot end a gate test", e))
    }

    fn clear_gate_batches(&mut self) -> Result<usize, StoreError> {
        self.c()
            .execute("DELETE FROM gate_batches", &[])
            .map(|n| n as usize)
            .map_err(|e| backend(&self.place, "cannot clear the gate's batches", e))
    }
}

#[cfg(test)]
mod stuck_tests {
    use super::{stuck_reason, WorkerRow};

    fn worker(name: &str, leaves: &[&str], seen_ago: f64, stopped: bool) -> WorkerRow {
        WorkerRow {
            name: name.into(),
            host: "h".into(),
            pid: 1,
            concurrency: 1,
            seen_ago,
            in_flight: 0,
            last_hour: 0,
            finished: 0,
            duplicates: 0,
            stopped,
            problem: (!leaves.is_empty()).then(|| format!("cannot start {}", leaves[0])),
            leaves: leaves.iter().map(|b| b.to_string()).collect(),
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn stuck_only_when_every_live_worker_gave_up_every_pending_set() {
        let pending = pairs(&[("a", "p"), ("p", "b")]);
        let bad = worker("w1", &["p"], 1.0, false);
        assert_eq!(
            stuck_reason(std::slice::from_ref(&bad), &pending, 0).as_deref(),
            Some(
                "the league is stuck: 2 sets pending, and every live worker has given them up: \
                 w1 leaves p's sets (cannot start p)"
            )
        );
        // A set in play, nothing pending, or no live worker: not stuck.
        assert_eq!(stuck_reason(std::slice::from_ref(&bad), &pending, 1), None);
        assert_eq!(stuck_reason(std::slice::from_ref(&bad), &[], 0), None);
        assert_eq!(stuck_reason(&[], &pending, 0), None);
        // A live worker that can play one of them: not stuck.
        let good = worker("w2", &[], 1.0, false);
        assert_eq!(stuck_reason(&[bad.clone(), good], &pending, 0), None);
        // One that stopped, or has been silent past the live window, does not count.
        let gone = worker("w3", &[], 1.0, true);
        let silent = worker("w4", &[], super::LIVE_WORKER_S + 1.0, false);
        assert!(stuck_reason(&[bad, gone, silent], &pending, 0).is_some());
    }
}
