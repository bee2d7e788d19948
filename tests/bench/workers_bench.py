#!/usr/bin/env python3
"""Benchmarks of `hus worker` on PostgreSQL (not tests: figures for docs/deploy.md).

    python3 tests/bench/workers_bench.py [--runs R] [--bots N] [--games G] [--sets-store S]

Builds the release binaries (hus, alphabeta-bot, the league crate's store_cost
example), makes a throw-away PostgreSQL cluster (Debian's binaries, run as `nobody`
when this runs as root, on a free port in a temporary directory; stopped at the end),
then:

throughput: a league of instant bots (`alphabeta-bot --first-legal`, as the league
    bench uses; N bots, default 8, round-robin, 1 round, G games per set, default 10:
    28 sets, 280 games) is put in a fresh database (`hus league --store --no-play`)
    and played by 1, 2 and 4 `hus worker --until-done` processes (concurrency 1 each),
    in turn, R times (default 3). Reports the median sets/s and games/s (wall time from
    the first worker's start to the last one's exit) and the ratios to 1 worker, with
    the CPU seconds of the workers (and their bots) and of the database server.

store cost: what the store does per finished set without any game (league example
    store_cost: claim, heartbeat, renewal, result with a real compressed log), S sets
    (default 2000) by 1 and by 4 connections at once: results per second, median and
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


def league_file(path, bots, games):
    with open(path, "w") as f:
        f.write(f'rules = "hus"\nwidth = 8\ngames = {games}\nmove_time = "1s"\n'
                f'rounds = 1\nseed = 1\nconcurrency = 1\n')
        for i in range(bots):
            f.write(f'\n[[bot]]\nname = "b{i}"\ncommand = "{ALPHABETA} --first-legal"\n')


def children_cpu():
    r = os.times()
    return r.children_user + r.children_system


def throughput(cluster, workers, bots, games, n, tmp):
    url = cluster.create(f"w{workers}_{n}")
    path = os.path.join(tmp, f"L{workers}_{n}.toml")
    league_file(path, bots, games)
    subprocess.run([HUS, "league", path, "--store", url, "--no-play", "--quiet"], check=True)
    cpu0, srv0 = children_cpu(), cluster.cpu_s()
    start = time.monotonic()
    procs = [subprocess.Popen([HUS, "worker", "--store", url, "--until-done", "--quiet",
                               "--name", f"w{i}"]) for i in range(workers)]
    for p in procs:
        if p.wait() != 0:
            sys.exit(f"a worker failed: {p.returncode}")
    wall = time.monotonic() - start
    sets = bots * (bots - 1) // 2
    return {"workers": workers, "wall_s": wall, "sets_per_s": sets / wall,
            "games_per_s": sets * games / wall, "worker_cpu_s": children_cpu() - cpu0,
            "server_cpu_s": cluster.cpu_s() - srv0, "sets": sets}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bots", type=int, default=8)
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--sets-store", type=int, default=2000)
    a = ap.parse_args()
    build()
    cluster = Cluster()
    tmp = tempfile.mkdtemp()
    try:
        runs = {1: [], 2: [], 4: []}
        for n in range(a.runs):
            for w in (1, 2, 4):
                r = throughput(cluster, w, a.bots, a.games, n, tmp)
                runs[w].append(r)
                print(json.dumps(r), file=sys.stderr)
        base = statistics.median(r["sets_per_s"] for r in runs[1])
        print(f"throughput ({a.bots} bots, {a.bots * (a.bots - 1) // 2} sets of {a.games} games, "
              f"instant bots, median of {a.runs}):")
        for w, rs in runs.items():
            sps = statistics.median(r["sets_per_s"] for r in rs)
            print(f"  {w} worker(s): {sps:.2f} sets/s, "
                  f"{statistics.median(r['games_per_s'] for r in rs):.1f} games/s, "
                  f"x{sps / base:.2f} of 1 worker; CPU s per set: workers "
                  f"{statistics.median(r['worker_cpu_s'] / r['sets'] for r in rs):.3f}, "
                  f"server {statistics.median(r['server_cpu_s'] / r['sets'] for r in rs):.4f}")
        # The store alone.
        logs = os.path.join(tmp, "match-logs")
        subprocess.run([HUS, "match", f"{ALPHABETA} --depth 2", f"{ALPHABETA} --first-legal",
                        "--games", "7", "--seed", "3", "--log-dir", logs],
                       check=True, stdout=subprocess.DEVNULL)
        log = [os.path.join(logs, f) for f in os.listdir(logs) if f.endswith(".jsonl")][0]
        print(f"store cost per finished set (claim, heartbeat, renewal, result with a "
              f"{os.path.getsize(log)}-byte log of 7 games, {a.sets_store} sets):")
        for threads in (1, 4):
            url = cluster.create(f"cost{threads}")
            srv0 = cluster.cpu_s()
            out = subprocess.run([STORE_COST, url, log, str(a.sets_store), str(threads)],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            srv = (cluster.cpu_s() - srv0) / r["sets"] * 1000
            print(f"  {threads} connection(s): {r['results_per_s']:.0f} results/s, "
                  f"median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f} ms per set; "
                  f"server CPU {srv:.2f} ms per set")
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
