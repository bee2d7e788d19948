#!/usr/bin/env python3
"""Soak benchmark of `hus serve`: what a set costs the server as its history grows
(docs/server.md, "Cost over time"). Not a test: figures.

    python3 tests/bench/serve_soak.py [--minutes 3] [--prefill-games N]
        [--store sqlite | pg | postgres://...] [--requests 200] [--bots 8]
        [--concurrency 2] [--no-build]

What runs, all on 127.0.0.1:

- `hus serve` (release build) on a league of BOTS instant bots (`hus random-bot
  --seed i`, distinct seeds), 2-game sets from openings/hus-8.txt, concurrency
  CONCURRENCY, for MINUTES minutes; then SIGTERM. Its store is a league directory
  (`--store sqlite`, the default), a throw-away PostgreSQL cluster (`--store pg`:
  Debian's initdb/pg_ctl in a temporary directory under /var/tmp, a free loopback
  port, run as `nobody` when this runs as root, as tests/support/pg.rs does; the
  default durability settings), or an existing empty database (`--store
  postgres://...`).
- With `--prefill-games N`, the store is first filled with N games by the league
  crate's example `prefill` (results drawn from known true ratings, written through
  the store's own `claim_next` and `record`); its time is reported. The server then
  starts on that history; its start (reading every finished set once) is timed
  separately and not counted in the minutes.

Every minute it prints: the sets finished (`finished_this_run` of /api/status); the
server process's CPU per set (utime + stime from /proc/PID/stat, its children, the
bots, excluded; the standings requests below are served by the same process and are
included: a few ms each at most); its RSS (VmRSS at the minute's end, and VmHWM, the
kernel's peak so far); disk per set (the growth of `du` of the league directory, and
with a throw-away cluster of its data directory, over the sets); and the latency of
GET /api/standings: REQUESTS sequential requests spread over the minute on one
kept-alive loopback connection, p50 and p99. At the end, a summary line (medians over
the minutes, the peak RSS, the percentiles of every request) and the trend: the slope
of CPU per set over the minutes (least squares), in ms per set per minute and as a
share of the median over the whole run.

Everything it starts stops by itself (the server at the end of the minutes, the
cluster after it) and its temporary directories are removed, also on Ctrl-C.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HUS = os.path.join(ROOT, "target", "release", "hus")
PREFILL = os.path.join(ROOT, "target", "release", "examples", "prefill")
BOOK = os.path.join(ROOT, "openings", "hus-8.txt")
TICK = os.sysconf("SC_CLK_TCK")
NOBODY = 65534


def build():
    for cmd in (["-p", "hus"], ["-p", "league", "--example", "prefill"]):
        subprocess.run(["cargo", "build", "--release", "-q", *cmd], cwd=ROOT, check=True,
                       stdout=sys.stderr)


def cpu_seconds(pid):
    """utime + stime of the process itself (children excluded), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def memory_kib(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0])
    return out


def du_kib(path):
    if path is None:
        return 0
    out = subprocess.run(["du", "-sk", path], capture_output=True, text=True)
    try:
        return int(out.stdout.split()[0])
    except (IndexError, ValueError):
        return 0


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def pg_bin():
    base = "/usr/lib/postgresql"
    versions = sorted((int(v), v) for v in os.listdir(base) if v.isdigit()) \
        if os.path.isdir(base) else []
    if not versions:
        sys.exit("serve_soak.py: PostgreSQL is not installed: run tests/setup.sh")
    return os.path.join(base, versions[-1][1], "bin")


class Cluster:
    """A throw-away PostgreSQL cluster on a free loopback port (tests/support/pg.rs)."""

    def __init__(self):
        self.bin = pg_bin()
        self.root = tempfile.mkdtemp(prefix="hus-pg-soak-", dir="/var/tmp")
        self.as_root = os.geteuid() == 0
        if self.as_root:
            os.chown(self.root, NOBODY, NOBODY)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.data = os.path.join(self.root, "data")
        self.running = False
        self.owner([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "hus",
                    "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"])
        with open(os.path.join(self.data, "postgresql.auto.conf"), "w") as f:
            f.write(f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{self.root}'\n")
        self.owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l",
                    os.path.join(self.root, "server.log"), "-w", "-t", "120", "start"])
        self.running = True

    def owner(self, cmd):
        def drop():
            if self.as_root:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
        subprocess.run(cmd, check=True, cwd=self.root, preexec_fn=drop,
                       stdout=subprocess.DEVNULL, env={**os.environ, "HOME": self.root})

    def psql(self, db, sql):
        subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
                        "-d", self.url(db), "-c", sql], check=True)

    def url(self, db):
        return f"postgres://hus@127.0.0.1:{self.port}/{db}"

    def stop(self):
        if self.running:
            self.owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast",
                        "-w", "stop"])
            self.running = False
        shutil.rmtree(self.root, ignore_errors=True)


def league_text(bots, concurrency):
    text = (f'rules = "hus"\nwidth = 8\ngames = 2\nmove_time = "1s"\nseed = 24\n'
            f'concurrency = {concurrency}\nopenings = {json.dumps(BOOK)}\n')
    for i in range(1, bots + 1):
        command = f"{HUS} random-bot --seed {i}"
        text += f'\n[[bot]]\nname = "r{i}"\ncommand = {json.dumps(command)}\n'
    return text


def percentile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round((len(values) - 1) * q)))]


class Api:
    """GET requests on one kept-alive loopback connection (a new one if it was closed)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def get(self, path):
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.conn.request("GET", path)
                r = self.conn.getresponse()
                body = r.read()
                if r.status != 200:
                    raise RuntimeError(f"GET {path}: {r.status} {body[:200]!r}")
                return body
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise

    def status(self):
        return json.loads(self.get("/api/status"))


def slope(ys):
    """Least-squares slope of ys against 1, 2, ..."""
    n = len(ys)
    if n < 2:
        return 0.0
    xs = range(1, n + 1)
    mx, my = (n + 1) / 2, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def run(a, tmp, cluster):
    league = os.path.join(tmp, "soak.toml")
    with open(league, "w") as f:
        f.write(league_text(a.bots, a.concurrency))
    league_dir = os.path.join(tmp, "league")
    store = []
    db_dir = None
    if a.store == "pg":
        cluster.psql("postgres", "CREATE DATABASE soak")
        url = cluster.url("soak")
        store = ["--store", url]
        db_dir = cluster.data
    elif a.store.startswith("postgres"):
        store = ["--store", a.store]
    what = "SQLite" if not store else "PostgreSQL"
    print(f"hus serve soak: {a.bots} instant bots (hus random-bot), 2-game sets from "
          f"openings/hus-8.txt, concurrency {a.concurrency}, {what} store, "
          f"{a.minutes} minute(s); load average {load()}, {os.cpu_count()} cores", flush=True)
    if a.prefill_games:
        if a.store == "pg":
            # The prefill's commits need not wait for the disk (the server's will).
            cluster.psql("postgres", "ALTER DATABASE soak SET synchronous_commit = off")
        t0 = time.monotonic()
        out = subprocess.run([PREFILL, league, "--games", str(a.prefill_games),
                              *(store or ["--dir", league_dir])],
                             check=True, capture_output=True, text=True)
        took = time.monotonic() - t0
        if a.store == "pg":
            cluster.psql("postgres", "ALTER DATABASE soak RESET synchronous_commit")
        info = json.loads(out.stdout)
        print(f"prefill: {info['sets']:,} sets, {info['games']:,} games in {took:.0f} s "
              f"({info['sets_per_s']:,.0f} sets/s); store {du_kib(league_dir) // 1024:,} MB"
              f"{f', database {du_kib(db_dir) // 1024:,} MB' if db_dir else ''}", flush=True)

    env = {k: v for k, v in os.environ.items() if k != "HUS_STORE"}
    t0 = time.monotonic()
    server = subprocess.Popen(
        [HUS, "serve", league, "--dir", league_dir, "--listen", "127.0.0.1:0", "--quiet",
         *store],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        port = None
        deadline = time.time() + 600
        while port is None and time.time() < deadline:
            line = server.stderr.readline().decode()
            if not line:
                break
            m = re.search(r"dashboard on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            sys.exit("serve_soak.py: hus serve did not start")
        # Its stderr is drained by a thread so it never blocks on a full pipe.
        import threading
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
        api = Api(port)
        status = api.status()
        started = time.monotonic() - t0
        print(f"start: {started:.1f} s to the dashboard line, server CPU "
              f"{cpu_seconds(server.pid):.1f} s, RSS {memory_kib(server.pid)['VmRSS'] / 1024:.1f} MB"
              f", {status['sets_done']:,} sets in the store", flush=True)
        rows, every = [], []
        cpu0, sets0 = cpu_seconds(server.pid), status["finished_this_run"]
        disk0 = du_kib(league_dir) + du_kib(db_dir)
        disk_start, sets_start = disk0, sets0
        interval = 60.0 / max(a.requests, 1)
        for minute in range(1, a.minutes + 1):
            end = time.monotonic() + 60
            lat = []
            for i in range(a.requests):
                target = end - 60 + (i + 0.5) * interval
                pause = target - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                t = time.perf_counter()
                api.get("/api/standings")
                lat.append((time.perf_counter() - t) * 1000)
            pause = end - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            if server.poll() is not None:
                sys.exit(f"serve_soak.py: hus serve exited ({server.returncode})")
            cpu, sets = cpu_seconds(server.pid), api.status()["finished_this_run"]
            disk = du_kib(league_dir) + du_kib(db_dir)
            mem = memory_kib(server.pid)
            n = sets - sets0
            row = {
                "minute": minute, "sets": n,
                "cpu_ms_per_set": (cpu - cpu0) * 1000 / n if n else float("nan"),
                "rss_mb": mem["VmRSS"] / 1024, "hwm_mb": mem["VmHWM"] / 1024,
                "disk_kb_per_set": (disk - disk0) / n if n else float("nan"),
                "p50_ms": percentile(lat, 0.5), "p99_ms": percentile(lat, 0.99),
                "load": load().split()[0],
            }
            rows.append(row)
            every += lat
            print(f"minute {minute}: {n:,} sets, server CPU {row['cpu_ms_per_set']:.2f} ms/set, "
                  f"RSS {row['rss_mb']:.1f} MB (peak {row['hwm_mb']:.1f}), disk "
                  f"{row['disk_kb_per_set']:.2f} KB/set, /api/standings p50 {row['p50_ms']:.1f} "
                  f"p99 {row['p99_ms']:.1f} ms, load {row['load']}", flush=True)
            cpu0, sets0, disk0 = cpu, sets, disk
        total = sets0 - sets_start
        cpus = [r["cpu_ms_per_set"] for r in rows]
        med = statistics.median(cpus)
        s = slope(cpus)
        hwm = memory_kib(server.pid)["VmHWM"] / 1024
        print(f"summary: {what}, {status['sets_done']:,} sets ({status['sets_done'] * 2:,} games) "
              f"before; {total:,} sets in {a.minutes} min, median "
              f"{statistics.median(r['sets'] for r in rows):,.0f} sets/min; server CPU median "
              f"{med:.2f} ms/set; RSS peak (VmHWM) {hwm:.1f} MB; disk "
              f"{(disk0 - disk_start) / max(total, 1):.2f} KB/set; /api/standings p50 "
              f"{percentile(every, 0.5):.1f} ms, p99 {percentile(every, 0.99):.1f} ms "
              f"({len(every)} requests); trend {s:+.3f} ms/set per minute "
              f"({s * max(a.minutes - 1, 1) / med * 100 if med else 0:+.0f}% of the median "
              f"over the run); load average {load()}", flush=True)
        print(json.dumps({"store": what, "games_before": status["sets_done"] * 2,
                          "minutes": rows, "hwm_mb": hwm, "slope": s}), file=sys.stderr)
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=int, default=3)
    ap.add_argument("--prefill-games", type=int, default=0,
                    help="games written to the store before the server starts")
    ap.add_argument("--store", default="sqlite",
                    help="sqlite (a league directory), pg (a throw-away cluster), or postgres://... "
                         "(an existing empty database)")
    ap.add_argument("--requests", type=int, default=200,
                    help="GET /api/standings per minute, sequential")
    ap.add_argument("--bots", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    if a.minutes < 1 or a.bots < 2 or a.requests < 1:
        sys.exit("serve_soak.py: --minutes and --requests at least 1, --bots at least 2")
    if a.store not in ("sqlite", "pg") and not a.store.startswith(("postgres://", "postgresql://")):
        sys.exit("serve_soak.py: --store is sqlite, pg or a postgres:// URL")
    if not a.no_build:
        build()
    tmp = tempfile.mkdtemp(prefix="hus-soak-")
    cluster = None
    # A SIGTERM stops the run as Ctrl-C does: the finally clauses clean up.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        if a.store == "pg":
            cluster = Cluster()
        run(a, tmp, cluster)
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
