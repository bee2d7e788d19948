#!/usr/bin/env python3
"""A league as fast as a match? `hus league` against one `hus match` of the same games
(a benchmark, not a test: figures for docs/league.md, Speed).

    python3 tests/bench/league_vs_match.py [--runs R] [--bots N] [--rounds K] [--games G]
                                           [--hus PATH] [--no-build] [--no-serve] [--json]

Builds the release binary first (cargo build --release -p hus; cargo's output goes to
stderr) unless --no-build or --hus PATH (another build of hus, say an older one, to
compare).

Each of R runs (default 5) plays, one after the other, in fresh temporary directories:
  a. `hus league` of N instant bots (default 4 copies of `hus random-bot`), round-robin,
     K rounds (default 6: with 4 bots, 36 sets), G games a set (default 20: 720 games),
     concurrency 1, to its end;
  b. one `hus match "hus random-bot" "hus random-bot" --games S*G` (the same 720 games),
     its log in the temporary directory;
  c. unless --no-serve, `hus serve` on the same league file (its own pairing, no end,
     `--listen 127.0.0.1:0`), from its start until its stderr has said S sets finished,
     then stopped (SIGTERM) and waited for.
Each is timed from outside (wall), with the CPU time of its whole process tree (user +
system of the waited-for children: the referee and its bots). A league's games/s is
its games over its wall time; the match's likewise; the server's its S*G games over
the time to its S-th finished set, and its CPU (stop included) per set. After each league: the bytes of its
logs directory (the finished sets' logs and stderr files, as they are left) per set.

Reports the medians over the runs: games/s of each, their ratio (league / match; 1.0:
a league costs nothing beyond its games), the median of the per-run ratios, CPU
milliseconds per set of each (the match's per G games), the server's games/s and CPU
per set, and the league's disk bytes per set. The load average before and after is printed: on a small shared machine the
figures move with the load, so compare runs made close together.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def opt(args, name, default):
    if name in args:
        return args[args.index(name) + 1]
    return default


def tree(command):
    """Runs command to its end; returns (wall s, CPU s of its process tree, stdout)."""
    before = os.times()
    start = time.monotonic()
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.monotonic() - start
    after = os.times()
    if proc.returncode != 0:
        sys.exit(f"{command[:2]} failed ({proc.returncode}): {proc.stderr.decode()}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, proc.stdout


def run_serve(hus, file, directory, sets):
    """Runs `hus serve` until it has finished `sets` sets, then stops it; returns (wall s
    to the line of the last one, CPU s of its process tree, its stop included)."""
    before = os.times()
    start = time.monotonic()
    server = subprocess.Popen(
        [hus, "serve", file, "--dir", directory, "--listen", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    finished = 0
    wall = None
    try:
        for line in server.stderr:
            if b" finished: " in line:
                finished += 1
                if finished == sets:
                    wall = time.monotonic() - start
                    break
    finally:
        server.terminate()
        server.communicate()
    if wall is None:
        sys.exit(f"hus serve ended after {finished} sets (status {server.returncode})")
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    shutil.rmtree(directory, ignore_errors=True)
    return wall, cpu


def dir_bytes(path):
    total = 0
    for base, _, files in os.walk(path):
        for f in files:
            total += os.lstat(os.path.join(base, f)).st_size
    return total


def main(args):
    runs = int(opt(args, "--runs", 5))
    bots = int(opt(args, "--bots", 4))
    rounds = int(opt(args, "--rounds", 6))
    games = int(opt(args, "--games", 20))
    hus = opt(args, "--hus", None)
    if hus is None:
        hus = os.path.join(ROOT, "target", "release", "hus")
        if "--no-build" not in args:
            subprocess.run(
                ["cargo", "build", "--release", "-q", "-p", "hus"],
                cwd=ROOT,
                check=True,
                stdout=sys.stderr,
            )
    hus = os.path.abspath(hus)
    bot = f"{hus} random-bot"
    sets = bots * (bots - 1) // 2 * rounds
    total = sets * games
    load = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            file = os.path.join(tmp, f"league-{run}.toml")
            with open(file, "w") as f:
                f.write(
                    f'games = {games}\nrounds = {rounds}\nmove_time = "1s"\nseed = {run + 1}\n'
                    "concurrency = 1\n"
                )
                for i in range(bots):
                    f.write(f'\n[[bot]]\nname = "b{i}"\ncommand = "{bot}"\n')
            directory = os.path.join(tmp, f"league-{run}")
            wall, cpu, out = tree(
                [hus, "league", file, "--dir", directory, "--quiet", "--format", "json"]
            )
            played = json.loads(out)["games_played"]
            if played != total:
                sys.exit(f"the league played {played} games, not {total}")
            disk = dir_bytes(os.path.join(directory, "logs"))
            match_dir = os.path.join(tmp, f"match-{run}")
            os.mkdir(match_dir)
            m_wall, m_cpu, _ = tree(
                [
                    hus, "match", bot, bot, "--games", str(total), "--seed", str(run + 1),
                    "--log-dir", match_dir, "--quiet",
                ]
            )
            if "--no-serve" not in args:
                s_wall, s_cpu = run_serve(hus, file, os.path.join(tmp, f"serve-{run}"), sets)
            row = {
                "league_games_per_s": played / wall,
                "match_games_per_s": total / m_wall,
                "ratio": (played / wall) / (total / m_wall),
                "league_cpu_ms_per_set": 1000 * cpu / sets,
                "match_cpu_ms_per_set": 1000 * m_cpu / sets,
                "league_disk_bytes_per_set": disk / sets,
            }
            if "--no-serve" not in args:
                row["serve_games_per_s"] = total / s_wall
                row["serve_cpu_ms_per_set"] = 1000 * s_cpu / sets
            rows.append(row)
            print(
                f"run {run + 1}: league {played} games in {wall:.2f} s "
                f"({row['league_games_per_s']:.0f}/s, CPU {cpu:.2f} s), "
                f"match {total} games in {m_wall:.2f} s "
                f"({row['match_games_per_s']:.0f}/s, CPU {m_cpu:.2f} s), "
                f"ratio {row['ratio']:.2f}, logs {disk} bytes",
                file=sys.stderr,
            )
            shutil.rmtree(directory, ignore_errors=True)
            shutil.rmtree(match_dir, ignore_errors=True)
    median = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    median["ratio_of_medians"] = median["league_games_per_s"] / median["match_games_per_s"]
    median.update(
        {"runs": runs, "sets": sets, "games": total, "load_before": load[0],
         "load_after": os.getloadavg()[0], "hus": hus}
    )
    if "--json" in args:
        print(json.dumps(median))
        return
    print(f"{sets} sets of {games} games ({total} games), {bots} bots, concurrency 1; "
          f"medians of {runs} runs ({hus})")
    print(f"  hus league : {median['league_games_per_s']:.0f} games/s, "
          f"{median['league_cpu_ms_per_set']:.0f} ms CPU a set, "
          f"{median['league_disk_bytes_per_set'] / 1000:.1f} KB of logs a set")
    print(f"  hus match  : {median['match_games_per_s']:.0f} games/s, "
          f"{median['match_cpu_ms_per_set']:.0f} ms CPU a {games} games")
    if "serve_games_per_s" in median:
        print(f"  hus serve  : {median['serve_games_per_s']:.0f} games/s, "
              f"{median['serve_cpu_ms_per_set']:.0f} ms CPU a set")
    print(f"  league/match: {median['ratio_of_medians']:.2f} "
          f"(median of the runs' ratios {median['ratio']:.2f})")
    print(f"  load average: {load[0]:.2f} before, {median['load_after']:.2f} after")


if __name__ == "__main__":
    main(sys.argv[1:])
