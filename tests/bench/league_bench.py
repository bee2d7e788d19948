#!/usr/bin/env python3
"""Benchmarks of `hus league` (not tests: figures for docs/league.md).

    python3 tests/bench/league_bench.py throughput [--runs R] [--bots N] [--games G] [--rounds K]
    python3 tests/bench/league_bench.py memory [--games-total N]
    python3 tests/bench/league_bench.py fairness [--games G] [--move-time MS]
    python3 tests/bench/league_bench.py serve [--runs R] [--bots N] [--games G] [--sets S]

Each builds the release binaries first (cargo build --release -p hus -p alphabeta-bot;
cargo's output goes to stderr) and works in a temporary directory.

throughput: the same league of instant bots (`alphabeta-bot --first-legal`; N bots,
    round-robin, K rounds, G games per set; default 4 bots, 4 rounds, 20 games: 24 sets,
    480 games) is played at concurrency 1 and at concurrency 2, alternately, R times
    (default 5), each in a fresh directory. For each run: the wall time (from outside),
    the CPU time of hus and all its bots (user + system, from the kernel's accounting of
    the waited-for process tree), games per second = games / wall time. Reports the
    median games/s at each concurrency, their ratio, and the medians of CPU seconds.

serve: `hus serve`'s time per set beside `hus league`'s, at concurrency 2, with the
    same instant bots as throughput (N bots, G games per set; default 4 bots, 20 games)
    and the same number of sets S (default 24: a round-robin of 4 bots in 4 rounds).
    Alternately, R times (default 5), each in a fresh directory: `hus league` plays
    its S sets to its end (wall time from outside, as throughput), then `hus serve`
    on the same league file (its own pairing, no end) is timed from its start to the
    stderr line of its S-th finished set, and stopped. Reports the median ms per set of
    each, sets per second, serve's median time over league's (1.0: the same speed per
    set; serve publishes a snapshot of the standings after every set, the league
    only prints a line), and the median of each run's ratio.

memory: the peak resident memory of the league process (GNU time's %M, the kernel's
    ru_maxrss: the largest of hus and the bots it waited for; the instant bots stay
    near 2 MB, far below hus), for a league of instant bots scheduled to N games in
    total (default 100,000: 46 bots, round-robin, 97 games per set, 1,035 sets) played
    to its end at concurrency 2 (its standings, read from the store at the end, hold
    every game), next to a league of about 1/100 of it (10 bots, 22 games per set, 45
    sets, 990 games); then the peak of `hus standings DIR --format json` on each. The
    growth per scheduled game is the difference of the peaks over the difference of the
    games. Needs /usr/bin/time (Debian package `time`).

fairness: the forfeit rate (games lost by time-out, and time-outs per move) at
    concurrency 1, 2 and 4 with four bots that each spin the CPU for 80% of their time
    per move (tests/bench/busy_bot.py), 100 ms per move (default), a round-robin of
    6 sets of G games (default 4); first, as the reference under the same machine load,
    one `hus match` of 6*G games between two such bots.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HUS = os.path.join(ROOT, "target", "release", "hus")
ALPHABETA = os.path.join(ROOT, "target", "release", "alphabeta-bot")
BUSY = os.path.join(ROOT, "tests", "bench", "busy_bot.py")


def build():
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "hus", "-p", "alphabeta-bot"],
        cwd=ROOT,
        check=True,
        stdout=sys.stderr,
    )


def league_file(path, head, bots):
    with open(path, "w") as f:
        f.write(head + "\n")
        for name, command in bots:
            f.write(f'\n[[bot]]\nname = "{name}"\ncommand = "{command}"\n')


def peak_kib(command):
    """Runs command under GNU time; returns (stdout bytes, peak resident KiB).

    Not Python's wait4: a child forked from Python keeps the interpreter's resident size
    as its peak until it execs, which would hide a small program's own figure."""
    with tempfile.NamedTemporaryFile("r") as out:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", out.name] + command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        if proc.returncode != 0:
            sys.exit(f"{command[:2]} failed ({proc.returncode}): {proc.stderr.decode()}")
        return proc.stdout, int(out.read().split()[-1])


def run_league(file, directory, measure_memory=False):
    """Runs `hus league` to its end; returns (wall s, standings, peak KiB or None)."""
    command = [HUS, "league", file, "--dir", directory, "--quiet", "--format", "json"]
    start = time.monotonic()
    if measure_memory:
        out, peak = peak_kib(command)
    else:
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            sys.exit(f"hus league failed ({proc.returncode}): {proc.stderr.decode()}")
        out, peak = proc.stdout, None
    wall = time.monotonic() - start
    return wall, json.loads(out), peak


def tree_cpu(fn):
    """CPU seconds (user + system) of the children waited for while fn runs."""
    before = os.times()
    result = fn()
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return result, cpu


def throughput(args):
    runs = int(opt(args, "--runs", 5))
    bots = int(opt(args, "--bots", 4))
    games = int(opt(args, "--games", 20))
    rounds = int(opt(args, "--rounds", 4))
    results = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            for concurrency in (1, 2):
                file = os.path.join(tmp, f"c{concurrency}-{run}.toml")
                league_file(
                    file,
                    f'games = {games}\nrounds = {rounds}\nmove_time = "1s"\nseed = 1\nconcurrency = {concurrency}',
                    [(f"b{i}", f"{ALPHABETA} --first-legal") for i in range(bots)],
                )
                directory = os.path.join(tmp, f"c{concurrency}-{run}")
                (wall, standings, _), cpu = tree_cpu(lambda: run_league(file, directory))
                played = standings["games_played"]
                results[concurrency].append((played / wall, wall, cpu))
                print(
                    f"run {run + 1} concurrency {concurrency}: {played} games in {wall:.2f} s "
                    f"({played / wall:.0f} games/s), CPU {cpu:.2f} s",
                    file=sys.stderr,
                )
    med = {c: statistics.median(r[0] for r in results[c]) for c in results}
    cpu = {c: statistics.median(r[2] for r in results[c]) for c in results}
    print(
        json.dumps(
            {
                "games_per_second": {"concurrency_1": round(med[1], 1), "concurrency_2": round(med[2], 1)},
                "ratio": round(med[2] / med[1], 2),
                "cpu_seconds": {"concurrency_1": round(cpu[1], 2), "concurrency_2": round(cpu[2], 2)},
                "runs": runs,
                "games_per_run": bots * (bots - 1) // 2 * rounds * games,
                "load_average": os.getloadavg(),
            }
        )
    )


def serve(args):
    runs = int(opt(args, "--runs", 5))
    bots = int(opt(args, "--bots", 4))
    games = int(opt(args, "--games", 20))
    sets = int(opt(args, "--sets", 24))
    pairs = bots * (bots - 1) // 2
    rounds = -(-sets // pairs)
    if rounds * pairs != sets:
        sys.exit(f"--sets {sets}: a multiple of the {pairs} pairs of {bots} bots")
    results = {"league": [], "serve": []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            file = os.path.join(tmp, f"s{run}.toml")
            league_file(
                file,
                f'games = {games}\nrounds = {rounds}\nmove_time = "1s"\nseed = 1\nconcurrency = 2',
                [(f"b{i}", f"{ALPHABETA} --first-legal") for i in range(bots)],
            )
            wall, standings, _ = run_league(file, os.path.join(tmp, f"league-{run}"))
            played = standings["progress"]["sets_done"]
            if played != sets:
                sys.exit(f"hus league played {played} sets, not {sets}")
            results["league"].append(wall / sets)
            wall = run_serve(file, os.path.join(tmp, f"serve-{run}"), sets)
            results["serve"].append(wall / sets)
            print(
                f"run {run + 1}: league {1000 * results['league'][-1]:.1f} ms per set, "
                f"serve {1000 * results['serve'][-1]:.1f} ms per set",
                file=sys.stderr,
            )
    med = {k: statistics.median(v) for k, v in results.items()}
    print(
        json.dumps(
            {
                "ms_per_set": {k: round(1000 * v, 1) for k, v in med.items()},
                "sets_per_second": {k: round(1 / v, 2) for k, v in med.items()},
                "serve_over_league": round(med["serve"] / med["league"], 2),
                # Each run's serve over the league just before it: less at the mercy of
                # a load that changes during the runs.
                "median_of_run_ratios": round(
                    statistics.median(s / l for s, l in zip(results["serve"], results["league"])), 2
                ),
                "runs": runs,
                "sets_per_run": sets,
                "games_per_set": games,
                "concurrency": 2,
                "load_average": os.getloadavg(),
            }
        )
    )


def run_serve(file, directory, sets):
    """Runs `hus serve` until it has finished `sets` sets; returns the wall seconds from
    its start to the line of the last one."""
    start = time.monotonic()
    server = subprocess.Popen(
        [HUS, "serve", file, "--dir", directory, "--listen", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    finished = 0
    try:
        for line in server.stderr:
            if b" finished: " in line:
                finished += 1
                if finished == sets:
                    return time.monotonic() - start
        sys.exit(f"hus serve ended after {finished} sets (status {server.wait()})")
    finally:
        server.terminate()
        server.wait()


def memory(args):
    total = int(opt(args, "--games-total", 100_000))
    # 46 bots: 1,035 pairs; 97 games per set: 100,395 games.
    shapes = [("large", 46, max(1, round(total / 1035))), ("small", 10, max(1, round(total / 100 / 45)))]
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, bots, games in shapes:
            file = os.path.join(tmp, f"{label}.toml")
            league_file(
                file,
                f'games = {games}\nmove_time = "1s"\nseed = 1\nconcurrency = 2',
                [(f"b{i}", f"{ALPHABETA} --first-legal") for i in range(bots)],
            )
            directory = os.path.join(tmp, label)
            wall, standings, peak = run_league(file, directory, measure_memory=True)
            played = standings["games_played"]
            start = time.monotonic()
            _, standings_peak = peak_kib([HUS, "standings", directory, "--format", "json"])
            report[label] = {
                "bots": bots,
                "games": played,
                "sets": standings["progress"]["sets_done"],
                "wall_seconds": round(wall, 1),
                "league_peak_kib": peak,
                "standings_peak_kib": standings_peak,
                "standings_seconds": round(time.monotonic() - start, 2),
                "store_bytes": os.path.getsize(os.path.join(directory, "league.sqlite")),
            }
            print(f"{label}: {report[label]}", file=sys.stderr)
    large, small = report["large"], report["small"]
    games = large["games"] - small["games"]
    report["league_bytes_per_game"] = round(
        (large["league_peak_kib"] - small["league_peak_kib"]) * 1024 / games, 1
    )
    report["standings_bytes_per_game"] = round(
        (large["standings_peak_kib"] - small["standings_peak_kib"]) * 1024 / games, 1
    )
    print(json.dumps(report))


def fairness(args):
    games = int(opt(args, "--games", 4))
    move_ms = int(opt(args, "--move-time", 100))
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [HUS, "match", f"python3 {BUSY} 0.8 1", f"python3 {BUSY} 0.8 2", "--games", str(6 * games),
             "--move-time", f"{move_ms}ms", "--seed", "1", "--json", "--log-dir", tmp],
            stdout=subprocess.PIPE,
            check=True,
        )
        summary = json.loads(proc.stdout)
        moves = sum(b["moves"] for b in summary["bots"])
        timeouts = sum(1 for f in summary["faults"] if f["kind"] == "time-out")
        report["hus_match"] = {
            "games": summary["games_played"],
            "moves": moves,
            "time_outs": timeouts,
            "faults": len(summary["faults"]),
            "forfeit_rate_per_game": round(len(summary["faults"]) / summary["games_played"], 4),
            "time_outs_per_1000_moves": round(1000 * timeouts / max(moves, 1), 2),
            "load_average": os.getloadavg(),
        }
        print(f"hus match: {report['hus_match']}", file=sys.stderr)
        for concurrency in (1, 2, 4):
            file = os.path.join(tmp, f"c{concurrency}.toml")
            league_file(
                file,
                f'games = {games}\nmove_time = "{move_ms}ms"\nseed = 1\nconcurrency = {concurrency}',
                [(f"busy{i}", f"python3 {BUSY} 0.8 {i}") for i in range(4)],
            )
            directory = os.path.join(tmp, f"c{concurrency}")
            wall, standings, _ = run_league(file, directory)
            moves = sum(b["moves"] for b in standings["bots"])
            timeouts = sum(b["faults"]["by_kind"].get("time-out", 0) for b in standings["bots"])
            faults = sum(b["faults"]["total"] for b in standings["bots"])
            report[f"concurrency_{concurrency}"] = {
                "games": standings["games_played"],
                "moves": moves,
                "time_outs": timeouts,
                "faults": faults,
                "forfeit_rate_per_game": round(faults / standings["games_played"], 4),
                "time_outs_per_1000_moves": round(1000 * timeouts / max(moves, 1), 2),
                "wall_seconds": round(wall, 1),
                "load_average": os.getloadavg(),
            }
            print(f"concurrency {concurrency}: {report[f'concurrency_{concurrency}']}", file=sys.stderr)
    print(json.dumps(report))


def opt(args, name, default):
    if name in args:
        return args[args.index(name) + 1]
    return default


def main():
    args = sys.argv[1:]
    modes = {"throughput": throughput, "memory": memory, "fairness": fairness, "serve": serve}
    if not args or args[0] not in modes:
        sys.exit(__doc__)
    build()
    modes[args[0]](args[1:])


if __name__ == "__main__":
    main()
