#!/usr/bin/env python3
"""Chaos run of a shared league (issue 34): PostgreSQL, `hus serve` and three `hus
worker`s, with faults injected at random, then a check that nothing was lost or
counted twice and that the standings are those of the same league on one machine.

    python3 tests/bench/chaos.py [--minutes 10] [--seed 1] [--bots 6] [--rounds 20]
        [--games 4] [--delay-ms 20] [--lease 6] [--gap 2-6] [--faults KIND,...]
        [--each-once] [--hus PATH] [--keep] [--json]

What runs, all on 127.0.0.1 (a run is repeated exactly by its seed, up to the
machine's timing):

- A throw-away PostgreSQL cluster (tests/bench/workers_bench.py's `Cluster`: Debian's
  initdb/pg_ctl in a temporary directory under /var/tmp, a free loopback port, run as
  `nobody` when this runs as root).
- A league file of BOTS deterministic bots (tests/bots/paced.py: a seeded random
  mover that sleeps DELAY_MS before each move, so a set lasts seconds and a fault
  lands mid-set; the same set replayed from its start is played exactly alike), a
  round-robin of ROUNDS rounds, GAMES games a set from openings/hus-8.txt, league
  seed SEED, 10 s a move (no healthy bot comes near it, so a time-out can only be
  the referee's). It is put in the store (`hus league --store URL --no-play`).
- `hus serve --store URL --concurrency 1` and three `hus worker --store URL --lease
  LEASE` (each with a scratch directory of the run's own, TMPDIR).
- Faults, one at a time, GAP seconds apart (uniform in the range), drawn with the
  seed until MINUTES minutes have passed or the schedule is almost done (fewer than
  two sets pending per player, read every 0.5 s): each KIND of --faults (default
  all four) once first, in an order drawn by the seed, then a kind drawn at random
  each time:
  - `worker-kill`: SIGKILL a worker, start a new one (a new name) at once;
  - `worker-stop`: SIGSTOP a worker for LEASE + 4 s (past its lease, so another
    may take its set over), then SIGCONT;
  - `pg-restart`: PostgreSQL stopped at once (`pg_ctl stop -m immediate`, as a
    crash) and started again after 1 to 4 s;
  - `server-kill`: SIGKILL `hus serve`, start it again at once (its own sets then
    wait for their lease, 30 s, and are played again by whoever claims them).
  With --each-once, each KIND exactly once, in the order --faults gives, GAP apart,
  and no more, whether sets are pending or not: the e2e test's faults, whose number
  then does not depend on the machine's speed (it kills the server first, so that
  its set's 30 s lease runs out while the other faults are injected).
- Then the server is restarted with `--concurrency 0` (a dashboard: it starts no
  set of its own, so it adds none past the file's schedule), the workers finish the
  schedule, and everything is stopped with SIGTERM. The server chooses a set past
  the schedule only when none is pending (docs/server.md, "Which set next"), so
  without --each-once the store normally holds the file's schedule alone; a set
  past it that was played anyway (a pair held back after a failure, or the end of
  an --each-once run) is compared with the one machine set by set (check 3 below).

The checks (each failure is printed; the exit status is 1 if any fails):

1. Every set of the file's schedule is done exactly once: its row is `done` with
   exactly one counted result (`lost` counts those not done, `counted_twice` those
   with more than one); results that arrived too late are kept and not counted
   (`duplicates`), and every done set has one counted result.
2. Every finished set's log (`hus export`) verifies with `hus replay` (exit 0).
3. Each finished set was played exactly as on one machine: its games (each move,
   fault, restart, game end and the set's end, times left out) equal those of the
   same set in `hus league FILE --dir REF` (SQLite, no faults), played beside the
   chaos (its bots mostly sleep); for a set past the schedule the one machine plays
   that many rounds first, in the same directory.
4. `hus standings --store URL --format json` equals a recomputation from the
   exported logs (per bot: points, sets and games won/drawn/lost, faults by kind,
   moves; the first mover's record), and, when no set past the file's schedule was
   played, the whole JSON equals the one machine's (ratings and pairs included;
   times per move and the progress counts left out).
5. No worker's scratch directory is left behind (a killed worker's is removed by the
   next worker to start there).

It prints one line per fault and, at the end, the figures: sets played (done),
results stored, duplicates, counted twice, lost, faults injected by kind, unexpected
exits of the server or a worker, the run's wall time; with --json, one JSON object
on stdout instead. The e2e test `chaos_with_every_fault_once_loses_and_doubles_nothing`
(tests/e2e/chaos.rs) runs this script with a small league and each fault once.

The hus binary: --hus PATH (default target/release/hus, built with `cargo build
--release -p hus`). Everything it starts is stopped at the end and its temporary
directories are removed, unless --keep or a check failed (then their path is printed).
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workers_bench import Cluster  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACED = os.path.join(ROOT, "tests", "bots", "paced.py")
BOOK = os.path.join(ROOT, "openings", "hus-8.txt")
KINDS = ("worker-kill", "worker-stop", "pg-restart", "server-kill")
WORKERS = 3
# How long the end waits for the next set of the schedule to finish, at most (a set
# held by a killed server waits for its 30 s lease): longer without one is a hang.
STALL_S = 300


START = time.monotonic()


def say(msg):
    """A line on stderr, with the seconds since the start (to read beside the logs)."""
    print(f"chaos: [{time.monotonic() - START:6.1f} s] {msg}", file=sys.stderr, flush=True)


class ChaosCluster(Cluster):
    """The bench's cluster, which can also be stopped as by a crash and started again."""

    def pg_ctl(self, *args):
        self.owner([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l",
                    os.path.join(self.root, "log"), "-w", "-t", "120", *args])

    def crash(self):
        self.pg_ctl("-m", "immediate", "stop")

    def start(self):
        self.pg_ctl("start")

    def query(self, db, sql):
        """Rows of `sql` in database `db`, each a list of strings (psql's unaligned output)."""
        out = subprocess.run(
            [os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-F", "\t",
             "-v", "ON_ERROR_STOP=1", "-d", self.url(db), "-c", sql],
            check=True, capture_output=True, text=True).stdout
        return [line.split("\t") for line in out.splitlines() if line]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def league_text(a, rounds, concurrency):
    text = (f'rules = "hus"\nwidth = 8\ngames = {a.games}\nmove_time = "10s"\n'
            f'rounds = {rounds}\nseed = {a.seed}\nconcurrency = {concurrency}\n'
            f'openings = "{BOOK}"\n')
    for i in range(a.bots):
        text += (f'\n[[bot]]\nname = "p{i + 1}"\n'
                 f'command = "python3 {PACED} {i + 1} {a.delay_ms}"\n')
    return text


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


# --- Logs -----------------------------------------------------------------------------

def read_log(path):
    if path.endswith(".zst"):
        text = run(["zstdcat", path])
    else:
        with open(path) as f:
            text = f.read()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def key_of(stem):
    """(round, a, b) from a log's stem `rROUND-A-vs-B` (the bots' names have no `-`)."""
    head, b = stem.split("-vs-")
    r, a = head.split("-", 1)
    return (int(r[1:]), a, b)


def logs_in(directory):
    """{key: path} of the finished sets' logs in a directory (plain or zstd)."""
    found = {}
    for name in os.listdir(directory):
        for ext in (".jsonl", ".jsonl.zst"):
            if name.endswith(ext) and ".partial" not in name:
                found[key_of(name[:-len(ext)])] = os.path.join(directory, name)
    return found


def play_of(records):
    """What a set's log says was played, without times, pids and paths: the games'
    starts, moves, faults, restarts and ends, and the set's end."""
    keep = {
        "game-start": ("game", "first", "position"),
        "move": ("game", "ply", "bot", "pit", "position"),
        "fault": ("game", "ply", "bot", "kind", "detail"),
        "restart": ("bot", "game"),
        "game-end": ("game", "reason", "winner", "faulted", "double", "points", "plies"),
        "set-end": ("games_played", "points", "wins", "draws", "winner", "faults"),
    }
    out = []
    for rec in records:
        fields = keep.get(rec.get("type"))
        if fields:
            out.append([rec["type"]] + [rec.get(f) for f in fields])
    return out


def recompute(logs):
    """Standings figures per bot, and the first mover's record, from set logs
    ({(round, a, b): records})."""
    bots = {}

    def bot(name):
        return bots.setdefault(name, {
            "points": 0, "moves": 0,
            "sets": {"played": 0, "won": 0, "drawn": 0, "lost": 0},
            "games": {"played": 0, "won": 0, "drawn": 0, "lost": 0},
            "faults": {"total": 0, "by_kind": {}}})

    first = {"won": 0, "drawn": 0, "lost": 0}
    for (_, a, b), records in logs.items():
        names = (a, b)
        starts = {}
        for rec in records:
            t = rec.get("type")
            if t == "game-start":
                starts[rec["game"]] = rec["first"]
            elif t == "move":
                bot(names[rec["bot"]])["moves"] += 1
            elif t == "fault":
                f = bot(names[rec["bot"]])["faults"]
                f["total"] += 1
                f["by_kind"][rec["kind"]] = f["by_kind"].get(rec["kind"], 0) + 1
            elif t == "game-end":
                w = rec["winner"]
                for side in (0, 1):
                    g = bot(names[side])
                    g["points"] += rec["points"][side]
                    g["games"]["played"] += 1
                    g["games"]["drawn" if w is None else "won" if w == side else "lost"] += 1
                fm = starts[rec["game"]]
                first["drawn" if w is None else "won" if w == fm else "lost"] += 1
            elif t == "set-end":
                w = rec["winner"]
                for side in (0, 1):
                    s = bot(names[side])["sets"]
                    s["played"] += 1
                    s["drawn" if w is None else "won" if w == side else "lost"] += 1
    return {"bots": bots, "first_mover": first}


def figures_of(standings):
    """The figures `recompute` makes, from `hus standings --format json`."""
    bots = {}
    for b in standings["bots"]:
        if b["games"]["played"] == 0 and b["sets"]["played"] == 0:
            continue
        bots[b["name"]] = {
            "points": b["points"], "moves": b["moves"],
            "sets": {k: b["sets"][k] for k in ("played", "won", "drawn", "lost")},
            "games": {k: b["games"][k] for k in ("played", "won", "drawn", "lost")},
            "faults": {"total": b["faults"]["total"], "by_kind": b["faults"]["by_kind"]}}
    first = {k: standings["first_mover"][k] for k in ("won", "drawn", "lost")}
    return {"bots": bots, "first_mover": first}


def comparable(v):
    """Standings without what depends on the machine's speed or the run's history:
    every `*_ms` field and the progress counts; fractions to 9 decimals (a fit of
    the same games summed in another order may differ in its last bits)."""
    if isinstance(v, dict):
        return {k: comparable(x) for k, x in v.items()
                if not k.endswith("_ms") and k != "progress"}
    if isinstance(v, list):
        return [comparable(x) for x in v]
    if isinstance(v, float):
        return round(v, 9)
    return v


# --- The run --------------------------------------------------------------------------

class Chaos:
    def __init__(self, a, tmp):
        self.a = a
        self.tmp = tmp
        self.rng = random.Random(a.seed)
        self.cluster = ChaosCluster()
        self.url = self.cluster.create("chaos")
        self.scratch = os.path.join(tmp, "scratch")
        os.mkdir(self.scratch)
        self.file = os.path.join(tmp, "L.toml")
        with open(self.file, "w") as f:
            f.write(league_text(a, a.rounds, 4))
        self.port = free_port()
        self.server = None
        self.workers = [None] * WORKERS
        self.generation = 0
        self.faults = {k: 0 for k in KINDS}
        self.unexpected = []
        self.server_concurrency = 1
        self.cluster_up = True

    def err(self, name):
        return open(os.path.join(self.tmp, f"{name}.err"), "a")

    def start_server(self):
        with self.err("serve") as e:
            self.server = subprocess.Popen(
                [self.a.hus, "serve", self.file, "--dir", os.path.join(self.tmp, "serve"),
                 "--store", self.url, "--listen", f"127.0.0.1:{self.port}",
                 "--concurrency", str(self.server_concurrency)],
                stdout=subprocess.DEVNULL, stderr=e)

    def start_worker(self, i):
        self.generation += 1
        name = f"w{i + 1}-{self.generation}"
        env = dict(os.environ, TMPDIR=self.scratch)
        with self.err(name) as e:
            self.workers[i] = (name, subprocess.Popen(
                [self.a.hus, "worker", "--store", self.url, "--name", name,
                 "--lease", str(self.a.lease), "--concurrency", "1"],
                stdout=subprocess.DEVNULL, stderr=e, env=env))

    def check_alive(self):
        """A process that ended by itself is a finding: noted, and started again."""
        if self.server.poll() is not None:
            self.unexpected.append(f"hus serve exited by itself ({self.server.returncode})")
            say(self.unexpected[-1])
            self.start_server()
        for i, (name, p) in enumerate(self.workers):
            if p.poll() is not None:
                self.unexpected.append(f"worker {name} exited by itself ({p.returncode})")
                say(self.unexpected[-1])
                self.start_worker(i)

    def pending(self):
        return int(self.cluster.query(
            "chaos", "SELECT count(*) FROM sets WHERE status = 'pending' AND round <= "
            f"{self.a.rounds}")[0][0])

    def undone(self):
        return int(self.cluster.query(
            "chaos", "SELECT count(*) FROM sets WHERE status <> 'done' AND round <= "
            f"{self.a.rounds}")[0][0])

    def sleep(self, seconds, low=0):
        """Sleeps, watching that every process still runs; returns False at once if
        fewer than `low` sets of the schedule are pending (read every 0.5 s)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(min(0.5, max(0.0, end - time.monotonic())))
            if self.cluster_up:
                self.check_alive()
                if low and self.pending() < low:
                    return False
        return True

    def inject(self, kind):
        self.faults[kind] += 1
        if kind == "worker-kill":
            i = self.rng.randrange(WORKERS)
            name, p = self.workers[i]
            p.kill()
            p.wait()
            self.start_worker(i)
            say(f"SIGKILL {name}, started {self.workers[i][0]}")
        elif kind == "worker-stop":
            i = self.rng.randrange(WORKERS)
            name, p = self.workers[i]
            stop = self.a.lease + 4
            os.kill(p.pid, signal.SIGSTOP)
            say(f"SIGSTOP {name} for {stop} s")
            time.sleep(stop)
            os.kill(p.pid, signal.SIGCONT)
        elif kind == "pg-restart":
            down = self.rng.uniform(1, 4)
            self.cluster_up = False
            self.cluster.crash()
            say(f"PostgreSQL stopped (immediate) for {down:.1f} s")
            time.sleep(down)
            self.cluster.start()
            self.cluster_up = True
        elif kind == "server-kill":
            self.server.kill()
            self.server.wait()
            self.start_server()
            say("SIGKILL hus serve, started again")

    def play(self):
        a = self.a
        run([a.hus, "league", self.file, "--store", self.url, "--no-play", "--quiet"])
        self.cluster_up = True
        self.start_server()
        for i in range(WORKERS):
            self.start_worker(i)
        start = time.monotonic()
        first = list(a.faults)
        if not a.each_once:
            self.rng.shuffle(first)
        # The faults end while a few sets per player are still pending: the server
        # chooses a set past the schedule only when none is.
        low = 2 * (WORKERS + 1)
        lo, hi = a.gap
        if a.each_once:
            for kind in first:
                self.sleep(self.rng.uniform(lo, hi))
                self.inject(kind)
        while not a.each_once and time.monotonic() - start < a.minutes * 60:
            if not self.sleep(self.rng.uniform(lo, hi), low):
                break
            kind = first.pop(0) if first else self.rng.choice(a.faults)
            self.inject(kind)
        chaos_s = time.monotonic() - start
        # The end: the server as a dashboard only (SIGTERM gives its sets back).
        say(f"faults over after {chaos_s:.0f} s; hus serve goes on with --concurrency 0")
        self.server.send_signal(signal.SIGTERM)
        self.server.wait()
        self.server_concurrency = 0
        self.start_server()
        last, since = self.undone(), time.monotonic()
        while last > 0:
            self.sleep(0.5)
            now = self.undone()
            if now < last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since > STALL_S:
                self.unexpected.append(f"no set of the schedule finished for {STALL_S} s "
                                       f"after the faults ({last} not done)")
                break
        wall = time.monotonic() - start
        for _, p in self.workers:
            p.send_signal(signal.SIGTERM)
        self.server.send_signal(signal.SIGTERM)
        for name, p in self.workers + [("serve", self.server)]:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.unexpected.append(f"{name} still ran 60 s after SIGTERM")
                p.kill()
                p.wait()
        return chaos_s, wall

    def stop(self):
        for _, p in [w for w in self.workers if w] + [("serve", self.server)]:
            if p and p.poll() is None:
                p.kill()
                p.wait()
        try:
            self.cluster.stop()
        except subprocess.CalledProcessError:
            pass


def check(chaos, ref_dir, ref_standings):
    """The checks of the docstring; returns (figures, failures)."""
    a, c, tmp = chaos.a, chaos.cluster, chaos.tmp
    fail = []
    rows = c.query("chaos", """
        SELECT s.round, s.bot_a, s.bot_b, s.status, s.attempts,
               (SELECT count(*) FROM results r WHERE r.set_id = s.id AND r.counted),
               (SELECT count(*) FROM results r WHERE r.set_id = s.id AND NOT r.counted)
        FROM sets s""")
    sets = {(int(r[0]), r[1], r[2]): (r[3], int(r[4]), int(r[5]), int(r[6])) for r in rows}
    ref_logs = logs_in(os.path.join(ref_dir, "logs"))
    scheduled = [k for k in ref_logs if k[0] <= a.rounds]
    lost = [k for k in scheduled if sets.get(k, ("missing",))[0] != "done"]
    twice = [k for k, v in sets.items() if v[2] > 1]
    uncounted_done = [k for k, v in sets.items() if v[0] == "done" and v[2] != 1]
    counted_open = [k for k, v in sets.items() if v[0] != "done" and v[2] > 0]
    done = sorted(k for k, v in sets.items() if v[0] == "done")
    extra = [k for k in done if k[0] > a.rounds]
    if len(scheduled) != a.rounds * a.bots * (a.bots - 1) // 2:
        fail.append(f"the one machine's league has {len(scheduled)} sets in its schedule")
    for what, keys in (("lost (not done)", lost), ("counted twice", twice),
                       ("done without exactly one counted result", uncounted_done),
                       ("counted but not done", counted_open)):
        if keys:
            fail.append(f"sets {what}: {keys}")
    # 2. The logs.
    exp = os.path.join(tmp, "export")
    run([a.hus, "export", "--store", chaos.url, "--out", exp])
    exported = logs_in(exp)
    if sorted(exported) != done:
        fail.append(f"hus export wrote {len(exported)} logs for {len(done)} done sets")
    for k, path in sorted(exported.items()):
        r = subprocess.run([a.hus, "replay", path], capture_output=True, text=True)
        if r.returncode != 0:
            fail.append(f"hus replay {path}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    # 3. Each set as on one machine (sets past the schedule: the one machine plays
    # more rounds first, in the same directory).
    if extra:
        top = max(k[0] for k in extra)
        more = os.path.join(tmp, "L-more.toml")
        with open(more, "w") as f:
            f.write(league_text(a, top, 4))
        run([a.hus, "league", more, "--dir", ref_dir, "--quiet"])
        ref_logs = logs_in(os.path.join(ref_dir, "logs"))
    chaos_logs = {k: read_log(p) for k, p in exported.items()}
    differ = [k for k in sorted(chaos_logs)
              if k not in ref_logs or play_of(chaos_logs[k]) != play_of(read_log(ref_logs[k]))]
    if differ:
        fail.append(f"sets played otherwise than on one machine: {differ}")
        for k in differ[:3]:
            mine, theirs = play_of(chaos_logs[k]), play_of(read_log(ref_logs[k]))
            at = next((i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y),
                      min(len(mine), len(theirs)))
            fail.append(f"  {k}: first difference at record {at}: "
                        f"{mine[at] if at < len(mine) else None} here, "
                        f"{theirs[at] if at < len(theirs) else None} on one machine")
    # 4. The standings.
    standings = json.loads(run([a.hus, "standings", "--store", chaos.url, "--format", "json"]))
    mine = figures_of(standings)
    theirs = recompute(chaos_logs)
    if mine != theirs:
        fail.append(f"hus standings {json.dumps(mine, sort_keys=True)} but the logs give "
                    f"{json.dumps(theirs, sort_keys=True)}")
    same_as_one_machine = None
    if not extra:
        same_as_one_machine = comparable(standings) == comparable(ref_standings)
        if not same_as_one_machine:
            fail.append("hus standings differ from the one machine's:\n"
                        f"  here:        {json.dumps(comparable(standings), sort_keys=True)}\n"
                        f"  one machine: {json.dumps(comparable(ref_standings), sort_keys=True)}")
    # 5. Scratch directories.
    left = sorted(os.listdir(chaos.scratch))
    if left:
        fail.append(f"scratch directories left behind: {left}")
    fail.extend(chaos.unexpected)
    figures = {
        "seed": a.seed, "sets_scheduled": len(scheduled), "sets_done": len(done),
        "sets_past_schedule": len(extra),
        "attempts": sum(v[1] for v in sets.values()),
        "results": sum(v[2] + v[3] for v in sets.values()),
        "duplicates": sum(v[3] for v in sets.values()),
        "counted_twice": len(twice), "lost": len(lost),
        "logs_verified": len(exported), "sets_as_one_machine": len(chaos_logs) - len(differ),
        "standings_as_logs": mine == theirs, "standings_as_one_machine": same_as_one_machine,
        "games": sum(b["games"]["played"] for b in theirs["bots"].values()) // 2,
        "faults": chaos.faults, "unexpected_exits": len(chaos.unexpected),
        "scratch_left": len(left),
    }
    return figures, fail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bots", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument("--lease", type=int, default=6)
    ap.add_argument("--gap", default="2-6", help="seconds between faults, LOW-HIGH")
    ap.add_argument("--faults", default=",".join(KINDS))
    ap.add_argument("--each-once", action="store_true",
                    help="each kind of --faults exactly once, whatever is pending, then the end")
    ap.add_argument("--hus", default=os.path.join(ROOT, "target", "release", "hus"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    a.gap = tuple(float(x) for x in a.gap.split("-"))
    a.faults = [k for k in a.faults.split(",") if k]
    bad = [k for k in a.faults if k not in KINDS]
    if bad or not a.faults:
        ap.error(f"--faults takes some of {', '.join(KINDS)}")
    if a.bots > 9:
        ap.error("--bots: at most 9")
    if not os.access(a.hus, os.X_OK):
        ap.error(f"no hus binary at {a.hus} (cargo build --release -p hus, or --hus PATH)")
    # SIGTERM (the e2e test's guard against a hang) ends the run through `finally`.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("chaos: stopped by SIGTERM"))
    tmp = tempfile.mkdtemp(prefix="hus-chaos-")
    chaos = ref = None
    failed = True
    try:
        # The one machine: SQLite, no faults, the same file.
        say(f"the same league on one machine ({a.rounds * a.bots * (a.bots - 1) // 2} sets)")
        ref_dir, ref_file = os.path.join(tmp, "one-machine"), os.path.join(tmp, "L1.toml")
        with open(ref_file, "w") as f:
            f.write(league_text(a, a.rounds, 4))
        # Beside the chaos run: its bots mostly sleep.
        ref = subprocess.Popen([a.hus, "league", ref_file, "--dir", ref_dir, "--format",
                                "json", "--quiet"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        chaos = Chaos(a, tmp)
        say(f"seed {a.seed}: PostgreSQL on port {chaos.cluster.port}, hus serve on "
            f"127.0.0.1:{chaos.port}, {WORKERS} workers; faults " +
            ("each once" if a.each_once else f"for {a.minutes} min"))
        chaos_s, wall = chaos.play()
        out, err = ref.communicate()
        if ref.returncode != 0:
            raise SystemExit(f"hus league on one machine failed ({ref.returncode}): {err}")
        ref_standings = json.loads(out)
        figures, fail = check(chaos, ref_dir, ref_standings)
        figures["chaos_s"] = round(chaos_s, 1)
        figures["wall_s"] = round(wall, 1)
        failed = bool(fail)
        if a.json:
            print(json.dumps(figures))
        else:
            f = figures
            print(f"seed {f['seed']}: {f['sets_done']} sets played ({f['sets_scheduled']} "
                  f"scheduled, {f['sets_past_schedule']} past it), {f['games']} games, "
                  f"{f['attempts']} attempts, {f['results']} results stored: "
                  f"{f['duplicates']} duplicates kept and not counted, "
                  f"{f['counted_twice']} counted twice, {f['lost']} lost")
            print(f"faults in {f['chaos_s']} s: " +
                  ", ".join(f"{k} {n}" for k, n in f["faults"].items()) +
                  f"; {f['unexpected_exits']} unexpected exits; wall {f['wall_s']} s")
            print(f"logs verified by hus replay: {f['logs_verified']}; sets played as on one "
                  f"machine: {f['sets_as_one_machine']}; standings as the logs: "
                  f"{f['standings_as_logs']}; as one machine: {f['standings_as_one_machine']}")
        for line in fail:
            say(f"FAILED: {line}")
        return 1 if failed else 0
    finally:
        if ref and ref.poll() is None:
            ref.terminate()
            ref.wait()
        if chaos:
            chaos.stop()
        if a.keep or failed:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
