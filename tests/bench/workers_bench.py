#!/usr/bin/env python3
"""Benchmarks of `hus worker` on PostgreSQL (not tests: figures for docs/deploy.md).

    python3 tests/bench/workers_bench.py [--runs R] [--bots N] [--rounds K] [--games G]
                                         [--concurrency C] [--sets-store S] [--no-build]
                                         [--workers 1,2,4] [--no-throughput | --no-store-cost]
                                         [--pin]

Builds the release binaries (hus, alphabeta-bot, the league crate's store_cost
example), makes a throw-away PostgreSQL cluster (Debian's binaries, run as `nobody`
when this runs as root, on a free port in a temporary directory; the default
durability settings, fsync and synchronous_commit on; stopped at the end), then:

throughput: a league of instant bots (`alphabeta-bot --first-legal`, as the league
    bench uses; N bots, default 8, round-robin, K rounds, default 6, G games per set,
    default 10: 168 sets, 1680 games) is put in a fresh database (`hus league --store
    --no-play`) and played by 1, 2 and 4 `hus worker --until-done` processes
    (`--concurrency C` each, default 1), in turn, R times (default 3). What it
    measures: the wall time from the first worker's start to the last one's exit, so
    it includes each worker's start-up (connecting, reading the league from the store)
    and the end of the league (a worker with nothing left waits for the sets still in
    play elsewhere); with the default size those are under 0.2 s of 7-13 s. Reports
    the median sets/s and games/s and the ratios to 1 worker, the CPU seconds per set
    of the workers (with their bots) and of the database server, the cores they kept
    busy (CPU seconds over wall seconds), and the load average before the runs. Each
    run prints a JSON line on stderr with every worker's own wall time and sets.
    With --pin, worker i (and the bots it starts, which inherit it) runs on core
    i mod the cores (`taskset -c`), the database on any core: one worker then gets one
    core, as a worker machine with a core per worker would give it, and the ratios say
    whether workers add up when each has a core (without --pin, one worker spreads over
    every core of the machine, and the ratios say how much of the machine is left).

store cost: what the store does per finished set without any game (league example
    store_cost: claim, heartbeat, renewal, result with a real compressed log), S sets
    (default 2000) by 1 and by 4 connections at once, with synchronous_commit on (the
    default: a commit waits for its WAL flush) and off (a crash of the database may
    lose the last few hundred milliseconds of commits): results per second, median and
    90th percentile ms per set; and the database server's CPU milliseconds per set
    (from /proc), whence how many worker cores one PostgreSQL core can feed.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HUS = os.path.join(ROOT, "target", "release", "hus")
ALPHABETA = os.path.join(ROOT, "target", "release", "alphabeta-bot")
STORE_COST = os.path.join(ROOT, "target", "release", "examples", "store_cost")
TICK = os.sysconf("SC_CLK_TCK")


def build():
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "hus", "-p", "alphabeta-bot"],
        cwd=ROOT, check=True, stdout=sys.stderr,
    )
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "league", "--example", "store_cost"],
        cwd=ROOT, check=True, stdout=sys.stderr,
    )


def pg_bin():
    versions = sorted(
        (int(v), v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit()
    )
    if not versions:
        sys.exit("PostgreSQL is not installed: run tests/setup.sh")
    return os.path.join("/usr/lib/postgresql", versions[-1][1], "bin")


class Cluster:
    def __init__(self):
        self.bin = pg_bin()
        self.root = tempfile.mkdtemp(prefix="hus-pg-bench-", dir="/var/tmp")
        self.root_user = os.geteuid() == 0
        if self.root_user:
            os.chown(self.root, 65534, 65534)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.data = os.path.join(self.root, "data")
        self.owner([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "hus",
                    "--auth=trust", "--no-sync", "--locale=C"])
        # Production-like durability: fsync on, synchronous_commit on (the defaults).
        with open(os.path.join(self.data, "postgresql.auto.conf"), "w") as f:
            f.write(f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{self.root}'\n")
        self.owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l",
                    os.path.join(self.root, "log"), "-w", "start"])

    def owner(self, cmd):
        def drop():
            if self.root_user:
                os.setgid(65534)
                os.setuid(65534)
        subprocess.run(cmd, check=True, cwd=self.root, preexec_fn=drop,
                       stdout=subprocess.DEVNULL)

    def url(self, db):
        return f"postgres://hus@127.0.0.1:{self.port}/{db}"

    def create(self, db):
        subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-d", self.url("postgres"),
                        "-c", f"CREATE DATABASE {db}"], check=True)
        return self.url(db)

    def cpu_s(self):
        """CPU seconds of every server process so far (the postmaster's children are
        counted when they exit: the postmaster's cutime/cstime)."""
        total = 0
        pid = open(os.path.join(self.data, "postmaster.pid")).readline().strip()
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                stat = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            ppid = fields[1]
            if p == pid:
                total += sum(int(x) for x in fields[11:15])
            elif ppid == pid:
                total += int(fields[11]) + int(fields[12])
        return total / TICK

    def stop(self):
        self.owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop"])
        shutil.rmtree(self.root, ignore_errors=True)


def league_file(path, bots, rounds, games):
    with open(path, "w") as f:
        f.write(f'rules = "hus"\nwidth = 8\ngames = {games}\nmove_time = "1s"\n'
                f'rounds = {rounds}\nseed = 1\nconcurrency = 1\n')
        for i in range(bots):
            f.write(f'\n[[bot]]\nname = "b{i}"\ncommand = "{ALPHABETA} --first-legal"\n')


def children_cpu():
    r = os.times()
    return r.children_user + r.children_system


def throughput(cluster, workers, a, n, tmp):
    url = cluster.create(f"w{workers}_{n}")
    path = os.path.join(tmp, f"L{workers}_{n}.toml")
    league_file(path, a.bots, a.rounds, a.games)
    subprocess.run([HUS, "league", path, "--store", url, "--no-play", "--quiet"], check=True)
    cpu0, srv0 = children_cpu(), cluster.cpu_s()
    start = time.monotonic()
    def pin(i):
        return ["taskset", "-c", str(i % os.cpu_count())] if a.pin else []
    procs = [subprocess.Popen(pin(i) + [HUS, "worker", "--store", url, "--until-done",
                                        "--quiet", "--concurrency", str(a.concurrency),
                                        "--name", f"w{i}"])
             for i in range(workers)]
    own = {}
    pending = set(range(workers))
    while pending:
        for i in list(pending):
            if procs[i].poll() is not None:
                if procs[i].returncode != 0:
                    sys.exit(f"a worker failed: {procs[i].returncode}")
                own[f"w{i}"] = round(time.monotonic() - start, 3)
                pending.discard(i)
        time.sleep(0.005)
    wall = time.monotonic() - start
    worker_cpu, server_cpu = children_cpu() - cpu0, cluster.cpu_s() - srv0
    listed = json.loads(subprocess.run([HUS, "workers", "--store", url, "--format", "json"],
                                       check=True, capture_output=True, text=True).stdout)
    per = {w["name"]: {"exit_s": own.get(w["name"]), "sets": w["sets_finished"],
                       "duplicates": w["duplicates"]} for w in listed}
    sets = a.rounds * a.bots * (a.bots - 1) // 2
    if sum(w["sets"] for w in per.values()) != sets:
        sys.exit(f"the workers finished {per}, not {sets} sets")
    return {"workers": workers, "wall_s": round(wall, 3), "sets_per_s": sets / wall,
            "games_per_s": sets * a.games / wall, "worker_cpu_s": worker_cpu,
            "server_cpu_s": server_cpu, "cores_busy": (worker_cpu + server_cpu) / wall,
            "sets": sets, "per_worker": per}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bots", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--sets-store", type=int, default=2000)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-store-cost", action="store_true")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--pin", action="store_true",
                    help="worker i and its bots on core i (taskset); see the docstring")
    a = ap.parse_args()
    if not a.no_build:
        build()
    counts = [int(w) for w in a.workers.split(",")]
    print(f"load average before: {' '.join(open('/proc/loadavg').read().split()[:3])}; "
          f"{os.cpu_count()} cores")
    cluster = Cluster()
    tmp = tempfile.mkdtemp()
    try:
        runs = {w: [] for w in counts}
        for n in range(0 if a.no_throughput else a.runs):
            for w in counts:
                r = throughput(cluster, w, a, n, tmp)
                runs[w].append(r)
                print(json.dumps(r), file=sys.stderr)
        sets = a.rounds * a.bots * (a.bots - 1) // 2
        if a.no_throughput:
            runs = {}
        else:
            base = statistics.median(r["sets_per_s"] for r in runs[counts[0]])
            print(f"throughput ({a.bots} bots, {a.rounds} round(s): {sets} sets of {a.games} "
                  f"games, instant bots, worker concurrency {a.concurrency}, median of "
                  f"{a.runs}{', each worker pinned to a core' if a.pin else ''}):")
        for w, rs in runs.items():
            sps = statistics.median(r["sets_per_s"] for r in rs)
            print(f"  {w} worker(s): {sps:.2f} sets/s, "
                  f"{statistics.median(r['games_per_s'] for r in rs):.1f} games/s, "
                  f"x{sps / base:.2f} of {counts[0]} worker(s), wall "
                  f"{statistics.median(r['wall_s'] for r in rs):.2f} s; CPU s per set: workers "
                  f"{statistics.median(r['worker_cpu_s'] / r['sets'] for r in rs):.4f}, "
                  f"server {statistics.median(r['server_cpu_s'] / r['sets'] for r in rs):.4f}; "
                  f"cores busy {statistics.median(r['cores_busy'] for r in rs):.2f}")
        print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
        if a.no_store_cost:
            return
        # The store alone.
        logs = os.path.join(tmp, "match-logs")
        subprocess.run([HUS, "match", f"{ALPHABETA} --depth 2", f"{ALPHABETA} --first-legal",
                        "--games", "7", "--seed", "3", "--log-dir", logs],
                       check=True, stdout=subprocess.DEVNULL)
        log = [os.path.join(logs, f) for f in os.listdir(logs) if f.endswith(".jsonl")][0]
        print(f"store cost per finished set (claim, heartbeat, renewal, result with a "
              f"{os.path.getsize(log)}-byte log of 7 games, {a.sets_store} sets):")
        for sync in ("on", "off"):
            for threads in (1, 4):
                db = f"cost{threads}_{sync}"
                url = cluster.create(db)
                subprocess.run([os.path.join(cluster.bin, "psql"), "-X", "-q", "-d", url, "-c",
                                f"ALTER DATABASE {db} SET synchronous_commit = {sync}"],
                               check=True)
                srv0 = cluster.cpu_s()
                out = subprocess.run([STORE_COST, url, log, str(a.sets_store), str(threads)],
                                     check=True, capture_output=True, text=True).stdout
                r = json.loads(out)
                srv = (cluster.cpu_s() - srv0) / r["sets"] * 1000
                print(f"  synchronous_commit {sync}, {threads} connection(s): "
                      f"{r['results_per_s']:.0f} results/s, "
                      f"median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f} ms per set; "
                      f"server CPU {srv:.2f} ms per set", flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
