#!/usr/bin/env python3
"""Time-limit accuracy of `hus match` under load, and time-out detection latency.

    python3 tests/bench/timing.py [--moves 1000] [--late 100] [--limit-ms 100] [--no-load]

While two CPU-bound "busy bot" processes keep both cores of the machine busy:
  1. a bot that answers every move at 90% of its limit plays until it has made
     --moves moves: none may be forfeited;
  2. a bot that answers its first move of each game at 110% of the limit plays
     --late games: every one must be forfeited for a time-out;
and from the time-outs of (2) it reports how long after the deadline each was
declared (the fault's `ms` minus the limit): median and worst.
Exits non-zero if (1) or (2) fails. Needs a release build
(`cargo build --release -p hus`); takes about two minutes with the defaults.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HUS = os.path.join(ROOT, "target", "release", "hus")
MISBEHAVE = "python3 " + os.path.join(ROOT, "tests", "bots", "misbehave.py")
RANDOM = "python3 " + os.path.join(ROOT, "sample-bots", "python", "random_bot.py")


def match(a, b, games, limit_ms, seed, log_dir):
    out = subprocess.run(
        [HUS, "match", a, b, "--games", str(games), "--seed", str(seed),
         "--move-time", "%dms" % limit_ms, "--json", "--log-dir", log_dir],
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def move_times(log_path, bot):
    """The measured time of every move of `bot` in a log."""
    with open(log_path) as f:
        records = [json.loads(line) for line in f]
    return [r["ms"] for r in records if r["type"] == "move" and r["bot"] == bot]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=1000)
    ap.add_argument("--late", type=int, default=100)
    ap.add_argument("--limit-ms", type=int, default=100)
    ap.add_argument("--no-load", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(HUS):
        sys.exit("build first: cargo build --release -p hus")

    busy = []
    if not args.no_load:
        for _ in range(2):
            busy.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
    ok = True
    try:
        with tempfile.TemporaryDirectory() as logs:
            # 1. answers at 90%: count its moves and its faults.
            moves = faults = games = 0
            times = []
            seed = 1
            start = time.time()
            while moves < args.moves:
                s = match(MISBEHAVE + " answer-all-at 0.9", RANDOM, 5, args.limit_ms, seed, logs)
                seed += 1
                moves += s["bots"][0]["moves"]
                faults += s["bots"][0]["faults"]
                times += move_times(s["log"], 0)
                for f in s["faults"]:
                    print("  forfeit at 90%%: %s after %s ms: %s" % (f["kind"], f["ms"], f["detail"]))
                games += s["games_played"]
            print("90%%: %d moves in %d games, %d forfeited (%.0f s)" % (moves, games, faults, time.time() - start))
            times.sort()
            if times:
                pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
                print("     its measured times: median %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms" % (
                    statistics.median(times), pick(0.99), pick(0.999), times[-1]))
            ok &= faults == 0

            # 2. answers at 110% on its first move of each game.
            s = match(MISBEHAVE + " answer-at 1.1", RANDOM, args.late, args.limit_ms, 7, logs)
            kinds = [f["kind"] for f in s["faults"] if f["bot"] == 0]
            timeouts = [f for f in s["faults"] if f["bot"] == 0 and f["kind"] == "time-out"]
            print("110%%: %d games, %d forfeited for time-out, other faults: %s" % (
                s["games_played"], len(timeouts), sorted(set(kinds) - {"time-out"}) or "none"))
            ok &= len(timeouts) == s["games_played"] == args.late

            late = sorted(f["ms"] - args.limit_ms for f in timeouts)
            if late:
                print("time-out declared after the deadline: median %.2f ms, worst %.2f ms (n=%d)" % (
                    statistics.median(late), late[-1], len(late)))
    finally:
        for p in busy:
            p.kill()
            p.wait()
    print("load: %s" % ("none" if args.no_load else "two busy processes on %d cores" % os.cpu_count()))
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
