//! `hus worker` against a real PostgreSQL (tests/support/pg.rs): three workers play a
//! league, one is killed with SIGKILL mid-set and its set is played again by another
//! after its lease; the database restarts under running workers; a worker in its own
//! network namespace is cut off mid-set. Each time the final standings equal those of
//! `hus league` on one machine with the same seed and deterministic bots, every set is
//! counted once, and nothing is lost.
//!
//! Timing margins come from the lease (LEASE_S): a killed worker's set is free again
//! one lease after its last renewal. The waits for workers to finish are guards
//! against a hang, not verdicts.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::pg::Postgres;

/// The lease the workers take, in seconds. A healthy worker renews every quarter of
/// it, so it loses a set only if it stalls for three quarters of a lease (3 s): long
/// enough for a loaded 2-core machine, where the tests assert that no healthy worker
/// loses a set (no duplicate, the killed set played exactly twice).
const LEASE_S: &str = "4";
/// LEASE_S as a duration.
const LEASE: Duration = Duration::from_secs(4);
/// How long a worker may take to finish the whole league before the test calls it hung.
const HANG: Duration = Duration::from_secs(240);

fn hus_bin() -> &'static str {
    env!("CARGO_BIN_EXE_hus")
}

/// A deterministic bot that sleeps `delay_ms` before each move: sets last seconds.
fn paced(seed: u32, delay_ms: u32) -> String {
    format!(
        "python3 {} {seed} {delay_ms}",
        root().join("tests/bots/paced.py").display()
    )
}

/// Six sets of two games between four deterministic, paced bots.
fn write_league(dir: &Path) -> PathBuf {
    let mut text = String::from(
        "rules = \"hus\"\nwidth = 8\ngames = 2\nmove_time = \"10s\"\nrounds = 1\nseed = 4242\nconcurrency = 2\n",
    );
    for (i, name) in ["p1", "p2", "p3", "p4"].iter().enumerate() {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{}\"\n",
            paced(i as u32 + 1, 15)
        ));
    }
    let path = dir.join("L.toml");
    std::fs::write(&path, text).expect("write league file");
    path
}

/// The standings without the figures that depend on the machine's speed.
fn comparable(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.retain(|k, _| !k.ends_with("_ms"));
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

/// `hus league` on one machine, SQLite, the same file: the reference standings.
fn single_machine(file: &Path, dir: &Path) -> Value {
    let out = Command::new(hus_bin())
        .args([
            "league",
            &file.display().to_string(),
            "--format",
            "json",
            "--quiet",
            "--dir",
        ])
        .arg(dir.join("single"))
        .output()
        .expect("hus league runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    comparable(json(&out.stdout))
}

fn standings(url: &str) -> Value {
    let out = Command::new(hus_bin())
        .args(["standings", "--store", url, "--format", "json"])
        .output()
        .expect("hus standings runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    comparable(json(&out.stdout))
}

/// Puts the league in the store, for the workers: through the league file's `store`
/// key (a copy of the file with the key, beside it), without `--store`.
fn queue(file: &Path, url: &str) {
    let text = std::fs::read_to_string(file).expect("league file");
    let keyed = file.with_extension("store.toml");
    std::fs::write(&keyed, format!("store = \"{url}\"\n{text}")).expect("write league file");
    let out = Command::new(hus_bin())
        .args(["league", &keyed.display().to_string(), "--no-play"])
        .output()
        .expect("hus league runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn worker(prefix: &[&str], url: &str, name: &str, stderr: &Path) -> Child {
    let (program, pre) = match prefix.split_first() {
        Some((p, rest)) => (p.to_string(), rest.to_vec()),
        None => (hus_bin().to_string(), Vec::new()),
    };
    let mut cmd = Command::new(program);
    cmd.args(pre);
    if !prefix.is_empty() {
        cmd.arg(hus_bin());
    }
    cmd.args([
        "worker",
        "--store",
        url,
        "--name",
        name,
        "--lease",
        LEASE_S,
        "--until-done",
    ])
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(stderr).expect("stderr file"))
    .spawn()
    .expect("hus worker starts")
}

/// Waits for a worker to finish by itself; kills it and fails after HANG.
fn finish(child: &mut Child, name: &str, stderr: &Path) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(
                status.success(),
                "worker {name}: {status}\n{}",
                std::fs::read_to_string(stderr).unwrap_or_default()
            );
            return;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "worker {name} still runs after {HANG:?}:\n{}",
                std::fs::read_to_string(stderr).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Polls `sql` (one value) until `done` accepts it; fails after HANG.
fn wait_for(pg: &Postgres, db: &str, sql: &str, done: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let v = pg.psql(db, sql);
        if done(&v) {
            return v;
        }
        assert!(start.elapsed() < HANG, "{sql} still gives {v:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn db_name(url: &str) -> String {
    url.rsplit('/').next().unwrap_or_default().to_string()
}

/// Every set is counted once, with its two games; `duplicates` results came too late.
fn assert_counted_once(pg: &Postgres, db: &str, duplicates: Option<&str>) {
    assert_eq!(
        pg.psql(db, "SELECT count(*) FROM sets WHERE status = 'done'"),
        "6"
    );
    assert_eq!(
        pg.psql(db, "SELECT count(*) FROM results WHERE counted"),
        "6"
    );
    assert_eq!(
        pg.psql(
            db,
            "SELECT count(*) FROM (SELECT set_id FROM results WHERE counted GROUP BY set_id HAVING count(*) > 1) d"
        ),
        "0"
    );
    assert_eq!(pg.psql(db, "SELECT count(*) FROM games"), "12");
    if let Some(d) = duplicates {
        assert_eq!(
            pg.psql(db, "SELECT count(*) FROM results WHERE NOT counted"),
            d
        );
    }
}

#[test]
fn three_workers_one_killed_mid_set_give_the_standings_of_one_machine() {
    let tmp = LogDir::new().cut_ok();
    let file = write_league(tmp.path());
    let pg = Postgres::start();
    let url = pg.fresh_db();
    let db = db_name(&url);
    queue(&file, &url);
    let err: Vec<PathBuf> = (1..=3)
        .map(|i| tmp.path().join(format!("w{i}.err")))
        .collect();
    // w1 (and w4, below) keep their scratch directories in a temporary directory of the
    // test's own, which no other test's worker cleans.
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).expect("mkdir");
    let in_scratch = format!("TMPDIR={}", scratch.display());
    let mut w1 = worker(&["env", &in_scratch], &url, "w1", &err[0]);
    let w1_pid = w1.id();
    let held = wait_for(
        &pg,
        &db,
        "SELECT coalesce(min(id), 0) FROM sets WHERE worker = 'w1' AND status = 'running'",
        |v| v != "0",
    );
    let mut w2 = worker(&[], &url, "w2", &err[1]);
    let mut w3 = worker(&[], &url, "w3", &err[2]);
    // Mid-set: w1's sets last seconds (paced bots); it holds one.
    std::thread::sleep(Duration::from_millis(500));
    w1.kill().expect("SIGKILL w1");
    let _ = w1.wait();
    let killed = pg.psql(
        &db,
        "SELECT id FROM sets WHERE worker = 'w1' AND status = 'running'",
    );
    assert!(
        !killed.is_empty(),
        "w1 held no set when killed (it held {held})"
    );
    finish(&mut w2, "w2", &err[1]);
    finish(&mut w3, "w3", &err[2]);

    // The killed set was played again, by another worker, once.
    let row = pg.psql(
        &db,
        &format!("SELECT attempts, worker IN ('w2', 'w3'), status FROM sets WHERE id = {killed}"),
    );
    assert_eq!(row, "2|t|done");
    assert_counted_once(&pg, &db, Some("0"));
    assert_eq!(standings(&url), single_machine(&file, tmp.path()));

    // hus workers: w1 died without a goodbye; the others stopped; six sets in all.
    let out = Command::new(hus_bin())
        .args(["workers", "--store", &url, "--format", "json"])
        .output()
        .expect("hus workers");
    // The shape of the server's /api/workers: {"workers": [...], "stuck": ...}; every
    // set is done, so nothing is stuck.
    let shown = json(&out.stdout);
    assert_eq!(
        shown
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect::<Vec<_>>()),
        Some(vec!["stuck", "workers"]),
        "{shown}"
    );
    assert_eq!(shown["stuck"], Value::Null, "{shown}");
    let list = &shown["workers"];
    let rows: Vec<(String, bool, i64)> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap_or("").to_string(),
                w["stopped"].as_bool().unwrap_or(false),
                w["in_flight"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("w1".to_string(), false, 0),
            ("w2".to_string(), true, 0),
            ("w3".to_string(), true, 0)
        ]
    );
    let finished: i64 = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|w| w["sets_finished"].as_i64().unwrap_or(0))
        .sum();
    assert_eq!(finished, 6);

    // The killed set's log comes out of the store and verifies.
    let out_dir = tmp.path().join("exported");
    let out = Command::new(hus_bin())
        .args(["export", "--store", &url, "--set", &killed, "--out"])
        .arg(&out_dir)
        .output()
        .expect("hus export");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_dir(&out_dir)
        .expect("exported")
        .flatten()
        .next()
        .expect("one log")
        .path();
    let out = Command::new(hus_bin())
        .arg("replay")
        .arg(&log)
        .output()
        .expect("hus replay");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("verified: 2 games"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // w1's scratch directory (hus-worker-PID-...), left behind by the SIGKILL, is removed
    // by the next worker that starts there (w4, which finds nothing left to play).
    let left = || -> Vec<String> {
        std::fs::read_dir(&scratch)
            .expect("the scratch directory")
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect()
    };
    let of_w1 = left();
    assert_eq!(of_w1.len(), 1, "{of_w1:?}");
    assert!(
        of_w1[0].starts_with(&format!("hus-worker-{w1_pid}-")),
        "{of_w1:?}"
    );
    let err4 = tmp.path().join("w4.err");
    let mut w4 = worker(&["env", &in_scratch], &url, "w4", &err4);
    finish(&mut w4, "w4", &err4);
    assert_eq!(left(), Vec::<String>::new());
}

#[test]
fn a_database_restart_under_running_workers_loses_and_doubles_nothing() {
    let tmp = LogDir::new();
    let file = write_league(tmp.path());
    let mut pg = Postgres::start();
    let url = pg.fresh_db();
    let db = db_name(&url);
    queue(&file, &url);
    let err: Vec<PathBuf> = (1..=2)
        .map(|i| tmp.path().join(format!("w{i}.err")))
        .collect();
    let mut w1 = worker(&[], &url, "w1", &err[0]);
    let mut w2 = worker(&[], &url, "w2", &err[1]);
    wait_for(
        &pg,
        &db,
        "SELECT count(*) FROM sets WHERE status = 'running'",
        |v| v == "2",
    );
    // Down at once (as a crash), for a lease, then up again.
    pg.down();
    std::thread::sleep(LEASE);
    pg.up();
    finish(&mut w1, "w1", &err[0]);
    finish(&mut w2, "w2", &err[1]);
    assert_counted_once(&pg, &db, None);
    assert_eq!(standings(&url), single_machine(&file, tmp.path()));
    let said = std::fs::read_to_string(&err[0]).unwrap_or_default()
        + &std::fs::read_to_string(&err[1]).unwrap_or_default();
    assert!(said.contains("the store is unreachable"), "{said}");
    assert!(said.contains("the store is back after"), "{said}");
}

/// A network namespace with a veth pair to the host, removed when dropped.
struct Netns {
    name: String,
    host_if: String,
    host_ip: String,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Netns {
    fn new() -> Netns {
        // Two tests of this process may each have one at once: names and addresses
        // differ by a count (an interface's name has at most 15 bytes).
        static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let k = MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 10;
        let pid = std::process::id();
        let n = (pid + k * 101) % 200 + 20;
        let name = format!("hus-test-{pid}-{k}");
        let host_if = format!("hush{}{k}", pid % 10_000);
        let ns_if = format!("husn{}{k}", pid % 10_000);
        let host_ip = format!("10.213.{n}.1");
        let ns_ip = format!("10.213.{n}.2");
        ip(&["netns", "add", &name]);
        let ns = Netns {
            name,
            host_if,
            host_ip,
        };
        ip(&[
            "link",
            "add",
            &ns.host_if,
            "type",
            "veth",
            "peer",
            "name",
            &ns_if,
        ]);
        ip(&["link", "set", &ns_if, "netns", &ns.name]);
        ip(&[
            "addr",
            "add",
            &format!("{}/24", ns.host_ip),
            "dev",
            &ns.host_if,
        ]);
        ip(&["link", "set", &ns.host_if, "up"]);
        ip(&[
            "netns",
            "exec",
            &ns.name,
            "ip",
            "addr",
            "add",
            &format!("{ns_ip}/24"),
            "dev",
            &ns_if,
        ]);
        ip(&["netns", "exec", &ns.name, "ip", "link", "set", &ns_if, "up"]);
        ip(&["netns", "exec", &ns.name, "ip", "link", "set", "lo", "up"]);
        ns
    }

    fn cut(&self) {
        ip(&["link", "set", &self.host_if, "down"]);
    }

    fn mend(&self) {
        ip(&["link", "set", &self.host_if, "up"]);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_if])
            .output();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_worker_cut_off_the_network_loses_its_set_to_another_after_the_lease() {
    if !is_root() {
        eprintln!("skipped: network namespaces need root (CI runs as root)");
        return;
    }
    let tmp = LogDir::new();
    let file = write_league(tmp.path());
    let pg = Postgres::start();
    let url = pg.fresh_db();
    let db = db_name(&url);
    queue(&file, &url);
    let ns = Netns::new();
    // The namespaced worker reaches the server only over the veth pair.
    let far_url = pg.url_at(&ns.host_ip, &db);
    let err_far = tmp.path().join("far.err");
    let err_near = tmp.path().join("near.err");
    let mut far = worker(
        &["ip", "netns", "exec", &ns.name],
        &far_url,
        "far",
        &err_far,
    );
    let held = wait_for(
        &pg,
        &db,
        "SELECT coalesce(min(id), 0) FROM sets WHERE worker = 'far' AND status = 'running'",
        |v| v != "0",
    );
    // Its address in the store is the namespace's.
    assert_eq!(
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_stat_activity WHERE client_addr::text LIKE '10.213.%'"
        ),
        "1"
    );
    ns.cut();
    let mut near = worker(&[], &url, "near", &err_near);
    // One lease after far's last renewal, near takes the set over.
    wait_for(
        &pg,
        &db,
        &format!("SELECT worker || ':' || attempts FROM sets WHERE id = {held}"),
        |v| v == "near:2",
    );
    ns.mend();
    finish(&mut near, "near", &err_near);
    finish(&mut far, "far", &err_far);
    assert_counted_once(&pg, &db, None);
    assert_eq!(
        pg.psql(
            &db,
            &format!("SELECT attempts, worker FROM sets WHERE id = {held}")
        ),
        "2|near"
    );
    assert_eq!(standings(&url), single_machine(&file, tmp.path()));
}

#[test]
fn a_worker_that_cannot_start_a_bot_gives_its_sets_to_the_others_unforfeited() {
    let tmp = LogDir::new();
    // p4 is a program found through PATH, which only the worker "good" has.
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).expect("bin dir");
    let wrapper = bin.join("hus-test-paced-p4");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec {} \"$@\"\n", paced(4, 15)),
    )
    .expect("write the wrapper");
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let file = write_league(tmp.path());
    let text = std::fs::read_to_string(&file).expect("league file");
    std::fs::write(&file, text.replace(&paced(4, 15), "hus-test-paced-p4")).expect("rewrite");
    let pg = Postgres::start();
    let url = pg.fresh_db();
    let db = db_name(&url);
    queue(&file, &url);
    let path = std::env::var("PATH").unwrap_or_default();
    let spawn = |name: &str, path: &str, err: &Path| {
        Command::new(hus_bin())
            .args([
                "worker",
                "--store",
                &url,
                "--name",
                name,
                "--lease",
                LEASE_S,
                "--until-done",
            ])
            .env("PATH", path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(err).expect("stderr file"))
            .spawn()
            .expect("hus worker starts")
    };
    let err_bad = tmp.path().join("bad.err");
    let err_good = tmp.path().join("good.err");
    let mut bad = spawn("bad", &path, &err_bad);
    // "bad" plays what it can and gives back p4's sets; they wait, pending, unforfeited.
    wait_for(
        &pg,
        &db,
        "SELECT count(*) FROM sets WHERE status = 'done' OR bot_a = 'p4' OR bot_b = 'p4'",
        |v| v == "6",
    );
    wait_for(
        &pg,
        &db,
        "SELECT count(*) FROM sets WHERE status = 'pending' AND (bot_a = 'p4' OR bot_b = 'p4')",
        |v| v == "3",
    );
    let said = std::fs::read_to_string(&err_bad).unwrap_or_default();
    assert!(
        said.contains("cannot play round 1, ")
            && said.contains("the set is given back to the other workers"),
        "{said}"
    );
    // Nobody can play what is left, and it is said: `hus workers` names bad's problem
    // and the bot it leaves, the league is stuck (bad is live, it gave up all three
    // pending sets), and `hus standings` says so too.
    let workers = |format: &str| {
        let out = Command::new(hus_bin())
            .args(["workers", "--store", &url, "--format", format])
            .output()
            .expect("hus workers runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let listed = loop {
        let listed = json(workers("json").as_bytes());
        if listed["stuck"].is_string() {
            break listed;
        }
        assert!(Instant::now() < deadline, "never stuck: {listed}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let bad_row = &listed["workers"][0];
    assert_eq!(bad_row["name"], "bad");
    assert_eq!(bad_row["leaves"], serde_json::json!(["p4"]));
    let problem = bad_row["problem"].as_str().expect("a problem").to_string();
    assert!(problem.starts_with("cannot play round 1, "), "{problem}");
    assert!(problem.contains("hus-test-paced-p4"), "{problem}");
    let stuck = format!(
        "the league is stuck: 3 sets pending, and every live worker has given them up: bad leaves p4's sets ({problem})"
    );
    assert_eq!(listed["stuck"], stuck.as_str());
    let text = workers("text");
    assert!(
        text.ends_with(&format!(
            "bad: {problem}; it leaves p4's sets to the other workers\n{stuck}\n"
        )),
        "{text}"
    );
    let out = Command::new(hus_bin())
        .args(["standings", "--store", &url])
        .output()
        .expect("hus standings runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("hus standings: {stuck}\n")
    );
    let mut good = spawn("good", &format!("{}:{path}", bin.display()), &err_good);
    finish(&mut good, "good", &err_good);
    finish(&mut bad, "bad", &err_bad);
    // Played by good: nothing is pending, nothing is stuck.
    assert_eq!(json(workers("json").as_bytes())["stuck"], Value::Null);
    assert_counted_once(&pg, &db, Some("0"));
    assert_eq!(
        pg.psql(
            &db,
            "SELECT count(*) FROM sets WHERE (bot_a = 'p4' OR bot_b = 'p4') AND worker = 'good'"
        ),
        "3"
    );
    assert_eq!(pg.psql(&db, "SELECT count(*) FROM faults"), "0");
}

/// `--no-play` and `--lease` only mean something with a PostgreSQL store: without
/// `--store` and without a `store` key in the file, `hus league` refuses them by name
/// before touching the league's directory.
#[test]
fn no_play_without_a_store_is_refused_by_name() {
    let tmp = LogDir::new();
    let file = write_league(tmp.path());
    for extra in [["--no-play"].as_slice(), ["--lease", "5"].as_slice()] {
        let out = Command::new(hus_bin())
            .arg("league")
            .arg(&file)
            .args(extra)
            .output()
            .expect("hus league runs");
        assert!(!out.status.success(), "{extra:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(
                "--no-play and --lease need a PostgreSQL store (--store URL, or a store key in"
            ),
            "{err}"
        );
        assert!(!tmp.path().join("L").exists(), "the directory was made");
    }
}

/// A database that takes only TLS (`hostssl`), with a certificate made for the test:
/// the league is put in it, played by a worker and read by `hus standings`, all with
/// `sslmode=verify-full` and the test's CA; the standings are those of one machine. The
/// wrong CA, and no TLS at all, are refused with the reason, at once (the worker does
/// not wait for a database that will never take it).
#[test]
fn a_worker_and_the_standings_reach_a_tls_only_database_with_verify_full() {
    let certs = crate::pg::Certs::make();
    let pg = Postgres::start_tls(&certs);
    let db = db_name(&pg.fresh_db());
    let verified = |ca: &str| {
        format!(
            "{}?sslmode=verify-full&sslrootcert={}",
            pg.url_at("localhost", &db),
            certs.path(ca).display()
        )
    };
    let url = verified("ca.pem");
    let tmp = LogDir::new();
    let mut text = String::from(
        "rules = \"hus\"\nwidth = 8\ngames = 2\nmove_time = \"10s\"\nrounds = 1\nseed = 77\nconcurrency = 2\n",
    );
    for (i, name) in ["r1", "r2", "r3"].iter().enumerate() {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{}\"\n",
            hus_random(i as u64 + 1).replace('\'', "")
        ));
    }
    let file = tmp.path().join("L.toml");
    std::fs::write(&file, text).expect("write league file");
    let reference = single_machine(&file, tmp.path());
    // The URL with its TLS parameters goes through the league file's store key too.
    queue(&file, &url);
    let err = tmp.path().join("w.err");
    let mut w = worker(&[], &url, "w", &err);
    finish(&mut w, "w", &err);
    assert_eq!(standings(&url), reference);
    assert_eq!(
        pg.psql(&db, "SELECT count(*) FROM sets WHERE status = 'done'"),
        "3"
    );

    let place = format!("the league store postgres://hus@localhost:{}/{db}", pg.port);
    let other = verified("other-ca.pem");
    for args in [
        ["standings", "--store", &other].as_slice(),
        ["worker", "--store", &other, "--until-done"].as_slice(),
    ] {
        let out = hus(args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.starts_with(&format!(
                "error: {place}: cannot connect: error performing TLS handshake: "
            )) && said.contains("certificate verify failed")
                && !said.contains("trying again"),
            "{args:?}: {said}"
        );
    }
    let plain = format!("{}?sslmode=disable", pg.url_at("127.0.0.1", &db));
    let out = hus(&["standings", "--store", &plain]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    let place = place.replace("@localhost:", "@127.0.0.1:");
    assert!(
        said.contains(&format!(
            "{place}: cannot connect: FATAL: no pg_hba.conf entry for host \"127.0.0.1\", user \"hus\", database \"{db}\", no encryption"
        )),
        "{said}"
    );
}

/// `hus league --no-play` run again after the file gained a bot says so, as it says
/// when one leaves; `hus standings` reads the store from HUS_STORE, and a database
/// that holds no league is said to hold none (not printed as an empty table).
#[test]
fn no_play_announces_added_and_removed_bots_and_standings_read_hus_store() {
    let url = crate::pg::fresh_shared_db();
    let tmp = LogDir::new();
    let place = url.clone();
    let standings_by_env = || {
        Command::new(hus_bin())
            .args(["standings", "--format", "json"])
            .env("HUS_STORE", &url)
            .output()
            .expect("hus standings runs")
    };
    let out = standings_by_env();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: the league store {place} holds no league yet: run `hus league LEAGUE.toml \
             --store URL` first, which puts the league's file and schedule in it\n"
        )
    );

    let file = tmp.path().join("L.toml");
    let write = |names: &[&str]| {
        let mut text = String::from("games = 1\nmove_time = \"5s\"\nseed = 5\n");
        for (i, name) in names.iter().enumerate() {
            text.push_str(&format!(
                "\n[[bot]]\nname = \"{name}\"\ncommand = \"{}\"\n",
                hus_random(i as u64 + 1).replace('\'', "")
            ));
        }
        std::fs::write(&file, text).expect("write league file");
    };
    // What the run says of the bots, and nothing else it says.
    let no_play = || -> Vec<String> {
        let out = Command::new(hus_bin())
            .arg("league")
            .arg(&file)
            .args(["--store", &url, "--no-play"])
            .env_remove("HUS_STORE")
            .output()
            .expect("hus league runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        err.lines()
            .filter(|l| l.contains(" is new in ") || l.contains(" is no longer in "))
            .map(str::to_string)
            .collect()
    };
    let shown = file.display();
    write(&["r1", "r2"]);
    assert_eq!(no_play(), Vec::<String>::new());
    write(&["r1", "r2", "r3"]);
    assert_eq!(
        no_play(),
        [format!(
            "hus league: r3 is new in {shown}: its sets join the schedule"
        )]
    );
    write(&["r1", "r3"]);
    assert_eq!(
        no_play(),
        [format!(
            "hus league: r2 is no longer in {shown}: its finished sets still count, it plays no more"
        )]
    );

    let out = standings_by_env();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = json(&out.stdout);
    assert_eq!(s["progress"]["sets_scheduled"], 1, "{s}");
    assert_eq!(s["progress"]["sets_pending"], 1, "{s}");
}

/// Issue 35, part 6: a version exists only in the store. `hus serve --store URL
/// --concurrency 0` (it plays nothing itself) takes `tiny` through `hus submit`, builds
/// and validates it and enters it as `tiny.v1`; a worker in a network namespace of its
/// own, with a build cache of its own that has never seen the version's files, claims
/// its sets, fetches the archive by hash from the store, builds it in its sandbox and
/// plays rated sets of `tiny.v1`, whose logs pass `hus replay`.
///
/// The waits are bounded by HANG, guards against a hang rather than verdicts.
#[test]
fn a_worker_plays_an_uploaded_version_that_exists_only_in_the_store() {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        eprintln!("skipped: network namespaces need root (CI runs as root)");
        return;
    }
    if !Path::new("/usr/bin/bwrap").is_file() {
        eprintln!("skipped: bubblewrap (bwrap) is not installed");
        return;
    }
    let tmp = LogDir::new();
    // The sandbox's user (nobody) must pass through to the built trees.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut text = String::from(
        "rules = \"hus\"\nwidth = 8\ngames = 2\nmove_time = \"10s\"\nrounds = 1\nseed = 35\n",
    );
    for (i, name) in ["r1", "r2"].iter().enumerate() {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{}\"\n",
            hus_random(i as u64 + 1).replace('\'', "")
        ));
    }
    let file = tmp.path().join("U.toml");
    std::fs::write(&file, text).expect("write league file");
    let dir = tmp.path().join("U");
    // The author's bot: the Python random mover.
    let bot = python_upload(tmp.path(), "tiny", "random_bot.py");
    let token = tmp.path().join("ann.token");
    author_token(&file, &dir, "tiny", &token);

    let pg = Postgres::start();
    let url = pg.fresh_db();
    let db = db_name(&url);
    let mut server = StoreServer::start(&file, &dir, &url);

    // The author submits; hus submit follows the version until it is active.
    server.submit(&bot, "tiny", &token);
    assert_eq!(
        pg.psql(
            &db,
            "SELECT bot || '.v' || number || ' ' || state FROM versions"
        ),
        "tiny.v1 active"
    );
    let hash = pg.psql(&db, "SELECT hash FROM versions");

    // A worker in its own network namespace, with a cache of its own.
    let ns = Netns::new();
    let far_url = pg.url_at(&ns.host_ip, &db);
    let cache = tmp.path().join("far-cache");
    let err_far = tmp.path().join("far.err");
    // nsenter, not `ip netns exec`: the worker enters only the network namespace and
    // keeps the machine's mounts (`ip netns exec` mounts a /sys of its own, without
    // the cgroup hierarchy the sandbox bounds a build's processes with as root).
    let mut far = Command::new("nsenter")
        .args([
            &format!("--net=/var/run/netns/{}", ns.name),
            hus_bin(),
            "worker",
            "--store",
            &far_url,
        ])
        .args(["--name", "far", "--lease", LEASE_S, "--prune-every", "1s"])
        .arg("--uploads-dir")
        .arg(&cache)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_far).expect("stderr file"))
        .spawn()
        .expect("hus worker starts");
    let sets_of_v1 = "SELECT count(*) FROM sets s JOIN results r ON r.set_id = s.id AND r.counted \
         WHERE s.status = 'done' AND s.worker = 'far' AND 'tiny.v1' IN (s.bot_a, s.bot_b)";
    let start = Instant::now();
    while !pg
        .psql(&db, sets_of_v1)
        .parse::<u32>()
        .is_ok_and(|n| n >= 2)
    {
        let gave_up = std::fs::read_to_string(&err_far)
            .unwrap_or_default()
            .contains("cannot play tiny.v1");
        if start.elapsed() > HANG || gave_up || far.try_wait().expect("wait").is_some() {
            let _ = far.kill();
            let _ = server.child.kill();
            panic!(
                "no two rated sets of tiny.v1 by far: {}\nfar: {}\nserver: {}",
                pg.psql(&db, "SELECT string_agg(bot_a || '-' || bot_b || ':' || status || ':' || coalesce(worker, ''), ', ') FROM sets"),
                std::fs::read_to_string(&err_far).unwrap_or_default(),
                server.said()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }

    // Built once, on this worker, from the store's archive: its own cache names the hash.
    let notes = || -> Vec<String> {
        std::fs::read_dir(&cache)
            .expect("the worker's cache")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".built"))
            .collect()
    };
    assert_eq!(notes(), vec![format!("{hash}.built")]);

    // A second version replaces the first: the worker builds it, plays it, and takes
    // the first's tree out of its cache once no set plays it (`--prune-every 1s`).
    std::fs::write(bot.join("NOTES"), "version two\n").expect("write");
    server.submit(&bot, "tiny", &token);
    let hash2 = pg.psql(&db, "SELECT hash FROM versions WHERE number = 2");
    let removed =
        format!("the build of {hash} is no longer played: removed from this machine's cache");
    let start = Instant::now();
    loop {
        let far_said = std::fs::read_to_string(&err_far).unwrap_or_default();
        if far_said.contains(&removed) && far_said.contains("tiny.v2 is built here") {
            break;
        }
        if start.elapsed() > HANG || far.try_wait().expect("wait").is_some() {
            let _ = far.kill();
            let _ = server.child.kill();
            panic!(
                "far never removed tiny.v1's build: {far_said}\nserver: {}",
                server.said()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(notes(), vec![format!("{hash2}.built")]);
    let dirs: Vec<String> = std::fs::read_dir(&cache)
        .expect("the worker's cache")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        dirs.len() == 1 && dirs[0].starts_with(&hash2[..16]),
        "{dirs:?}"
    );

    // Stopped by a signal: each ends within a lease (its sets stopped and given back).
    sigterm(&far);
    let _ = far.wait();
    sigterm(&server.child);
    let _ = server.child.wait();

    let far_said = std::fs::read_to_string(&err_far).unwrap_or_default();
    assert!(
        far_said.contains(
            "tiny.v1 is an uploaded version not yet played here: fetching it by hash from the store and building it in the sandbox"
        ) && far_said.contains("tiny.v1 is built here and plays from now on"),
        "{far_said}"
    );
    // No set of the version failed or was forfeited; its sets are in the standings.
    assert_eq!(pg.psql(&db, "SELECT count(*) FROM faults"), "0");
    // Every set the worker played, the version's among them, passes hus replay.
    let exported = tmp.path().join("exported");
    let out = Command::new(hus_bin())
        .args(["export", "--store", &url, "--out"])
        .arg(&exported)
        .output()
        .expect("hus export runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logs_of_v1: Vec<PathBuf> = std::fs::read_dir(&exported)
        .expect("exported")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("tiny.v1"))
        .collect();
    let of_v1 = logs_of_v1.len();
    assert!(of_v1 >= 2, "{of_v1} logs of tiny.v1");
    // Each names the version and the hash the worker built it from.
    for log in &logs_of_v1 {
        let header = read_log(log).into_iter().next().expect("a header");
        let versions: Vec<&Value> = header["bots"]
            .as_array()
            .expect("bots")
            .iter()
            .filter_map(|b| b.get("version"))
            .collect();
        assert_eq!(
            versions,
            vec![&serde_json::json!({"bot": "tiny", "number": 1, "sha256": hash})],
            "{}",
            log.display()
        );
    }
    let checked = replay_all(&exported, &[0]).expect("every log verifies");
    assert!(checked >= of_v1, "{checked}");
}

/// The SPRT gate on a store (docs/upload.md, "The SPRT gate"): `hus serve --store URL
/// --concurrency 0` plays nothing itself, so a worker plays every batch of the gate's
/// test of a clearly stronger version (the greedy bot over the random one), each
/// version prepared from the store; the server counts the batches, accepts the
/// version, keeps each batch's log (sent by the worker through the store), which
/// passes `hus replay`, and the LLR after each batch is the `ratings` crate's on their
/// games. The test's batches leave the store when it ends.
///
/// The waits are bounded by HANG, guards against a hang rather than verdicts.
#[test]
fn a_gate_on_a_store_is_played_by_a_worker_and_accepts_a_stronger_version() {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        eprintln!("skipped: the sandbox of uploaded bots needs root here (CI runs as root)");
        return;
    }
    if !Path::new("/usr/bin/bwrap").is_file() {
        eprintln!("skipped: bubblewrap (bwrap) is not installed");
        return;
    }
    // Outside /tmp (the sandbox has its own), and open to the sandbox's user.
    let tmp = LogDir::new_in(env!("CARGO_TARGET_TMPDIR"));
    let base = std::fs::canonicalize(tmp.path()).expect("canonical");
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let book = root().join("openings/hus-8.txt");
    let mut text = format!(
        "rules = \"hus\"\nwidth = 8\ngames = 2\nmove_time = \"10s\"\nready_time = \"30s\"\n\
         rounds = 1\nseed = 35\nopenings = {:?}\n\
         gate = \"sprt elo0=0 elo1=30 games=400 batch=4\"\n",
        book.display().to_string()
    );
    for (i, name) in ["r1", "r2"].iter().enumerate() {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{}\"\n",
            hus_random(i as u64 + 1).replace('\'', "")
        ));
    }
    let file = base.join("G.toml");
    std::fs::write(&file, text).expect("write league file");
    let dir = base.join("G");
    // Two versions to send: the random mover, then the greedy bot.
    let random = python_upload(&base, "random", "random_bot.py");
    let greedy = python_upload(&base, "greedy", "greedy_bot.py");
    let token = base.join("ann.token");
    author_token(&file, &dir, "gb", &token);

    let pg = Postgres::start();
    let url = pg.fresh_db();
    let db = db_name(&url);
    let mut server = StoreServer::start(&file, &dir, &url);
    let addr = server.addr.clone();
    let cache = base.join("w1-cache");
    let err_w1 = base.join("w1.err");
    let mut w1 = Command::new(hus_bin())
        .args(["worker", "--store", &url])
        .args(["--name", "w1", "--lease", LEASE_S, "--uploads-dir"])
        .arg(&cache)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_w1).expect("stderr file"))
        .spawn()
        .expect("hus worker starts");
    let submit = |d: &Path| {
        Command::new(hus_bin())
            .args(["submit", &format!("http://{addr}")])
            .arg(d)
            .args(["--bot", "gb", "--no-wait", "--token-file"])
            .arg(&token)
            .output()
            .expect("hus submit runs")
    };
    let states = "SELECT string_agg(bot || '.v' || number || ' ' || state, ', ' ORDER BY number) \
                  FROM versions";
    let wait_settled = |n: u32| -> String {
        let start = Instant::now();
        loop {
            let state = pg.psql(
                &db,
                &format!("SELECT state FROM versions WHERE bot = 'gb' AND number = {n}"),
            );
            if ["active", "rejected", "build failed", "retired"].contains(&state.as_str()) {
                return state;
            }
            assert!(
                start.elapsed() < HANG,
                "gb.v{n} still {state:?}: {}\nserver: {}\nw1: {}",
                pg.psql(&db, states),
                server.said(),
                std::fs::read_to_string(&err_w1).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let out = submit(&random);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(wait_settled(1), "active");
    let out = submit(&greedy);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v2 = wait_settled(2);
    let w1_said = std::fs::read_to_string(&err_w1).unwrap_or_default();
    assert_eq!(
        v2,
        "active",
        "{}\nserver: {}\nw1: {w1_said}",
        pg.psql(&db, "SELECT detail FROM versions WHERE number = 2"),
        server.said()
    );
    assert_eq!(pg.psql(&db, states), "gb.v1 retired, gb.v2 active");
    // The test ended: its batches left the store.
    assert_eq!(pg.psql(&db, "SELECT count(*) FROM gate_batches"), "0");

    sigterm(&w1);
    let _ = w1.wait();
    sigterm(&server.child);
    let _ = server.child.wait();

    // The test as the server kept it: every batch by the worker, each log replays.
    let gate = dir.join("uploads/gate");
    let result = gate.join("gb.v2-vs-gb.v1.json");
    let test: Value =
        serde_json::from_str(&std::fs::read_to_string(&result).expect("the test's result file"))
            .expect("json");
    assert_eq!(test["verdict"], "accepted", "{test}");
    let batches = test["batches"].as_array().expect("batches");
    assert!(!batches.is_empty(), "{test}");
    assert!(
        batches.iter().all(|b| b["by"] == "w1"),
        "the server plays no batch with --concurrency 0: {test}"
    );
    let sprt = ratings::Sprt::new(0.0, 30.0, 0.05, 0.05).expect("valid");
    let pairs = crate::sprt::check_gate_batches(&gate, &test, &sprt);
    assert_eq!(pairs, 4 * batches.len() as u64, "{test}");
    assert!(
        w1_said.contains("played batch 0 of the gate's gb.v2-vs-gb.v1"),
        "{w1_said}"
    );
}

/// `hus token --author ann --bots BOTS` for the league `file` in `dir`, written to
/// `out`.
fn author_token(file: &Path, dir: &Path, bots: &str, out: &Path) {
    let made = Command::new(hus_bin())
        .args(["token", "--author", "ann", "--bots", bots, "--league"])
        .arg(file)
        .arg("--dir")
        .arg(dir)
        .arg("--out")
        .arg(out)
        .output()
        .expect("hus token runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
}

/// `hus serve FILE --dir DIR --store URL --concurrency 0` on a free loopback port: its
/// sets and gates are the workers' to play. What it says is kept.
struct StoreServer {
    child: std::process::Child,
    /// Where its dashboard and API listen (`127.0.0.1:PORT`).
    addr: String,
    said: std::sync::Arc<std::sync::Mutex<String>>,
}

impl StoreServer {
    fn start(file: &Path, dir: &Path, url: &str) -> StoreServer {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(hus_bin())
            .args(["serve", &file.display().to_string(), "--dir"])
            .arg(dir)
            .args([
                "--listen",
                "127.0.0.1:0",
                "--store",
                url,
                "--concurrency",
                "0",
            ])
            .env_remove("HUS_LOG")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hus serve starts");
        let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().expect("piped stderr");
        let keep = said.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("dashboard on http://").nth(1) {
                    let _ = tx.send(rest.split('/').next().unwrap_or_default().to_string());
                }
                let mut all = keep.lock().unwrap_or_else(|e| e.into_inner());
                all.push_str(&line);
                all.push('\n');
            }
        });
        let mut server = StoreServer {
            child,
            addr: String::new(),
            said,
        };
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(addr) => server.addr = addr,
            Err(_) => {
                let _ = server.child.kill();
                panic!("hus serve never said where it listens: {}", server.said());
            }
        }
        server
    }

    /// `hus submit` of `source` as `bot`, followed until the version is active.
    fn submit(&self, source: &Path, bot: &str, token: &Path) {
        let out = Command::new(hus_bin())
            .args(["submit", &format!("http://{}", self.addr)])
            .arg(source)
            .args(["--bot", bot, "--wait", "4m", "--token-file"])
            .arg(token)
            .output()
            .expect("hus submit runs");
        assert!(
            out.status.success(),
            "hus submit: {}\n{}\nserver: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.said()
        );
    }

    /// What it has said so far.
    fn said(&self) -> String {
        self.said.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
