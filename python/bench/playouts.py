#!/usr/bin/env python3
"""Random playouts per second from Python: the `hus` package against the pure-Python
rules module sample-bots/python/hus_rules.py, in the same run.

A playout is a whole game from the starting position with every move drawn uniformly
from the legal pits, to the game's end (any end rule). Four ways, each run in turn:

  package, playouts(n)   hus.playouts(start, 1000, seed): a thousand games in one call,
                         in Rust without the GIL, on one thread (no plies counted)
  package, playout()     start.copy().playout(seed): one call per game, the moves
                         drawn and played in Rust (what a Monte Carlo search does)
  package, Python loop   the moves drawn in Python: random.choice(game.legal_moves()),
                         then game.play(pit), which returns each move's report
  hus_rules, Python loop the same loop over hus_rules.Game

Each way plays for --seconds of this process's CPU time per run (time.process_time:
on a shared machine, the time other processes take the core from it does not count;
everything runs on one thread); --runs runs; the medians of playouts per second (and
plies per second) are printed, with the package's speed over hus_rules'.

    python3 python/bench/playouts.py [--preset hus] [--width 8] [--runs 5] [--seconds 2]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Optional

import hus

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample-bots" / "python"))
import hus_rules  # type: ignore[import-not-found]  # noqa: E402  (beside the sample bots)


STARTS: dict = {}
#: Games per call of the playouts(n) way.
BATCH = 1000


def start_of(preset: str, width: int) -> hus.Game:
    start = STARTS.get((preset, width))
    if start is None:
        start = STARTS[(preset, width)] = hus.Game(preset=preset, width=width)
    return start


def package_playouts(preset: str, width: int, rng: random.Random) -> tuple[int, Optional[int]]:
    hus.playouts(start_of(preset, width), BATCH, seed=rng.getrandbits(64))
    return BATCH, None


def package_playout(preset: str, width: int, rng: random.Random) -> tuple[int, Optional[int]]:
    # A search copies the game it is at, then plays out the copy.
    game = start_of(preset, width).copy()
    game.playout(rng.getrandbits(64))
    return 1, game.plies


def package_loop(preset: str, width: int, rng: random.Random) -> tuple[int, Optional[int]]:
    game = hus.Game(preset=preset, width=width)
    while not game.is_over:
        game.play(rng.choice(game.legal_moves()))
    return 1, game.plies


def hus_rules_loop(preset: str, width: int, rng: random.Random) -> tuple[int, Optional[int]]:
    game = hus_rules.Game(hus_rules.start_position(preset, width))
    while game.end is None:
        game.play(rng.choice(game.legal_moves()))
    return 1, game.plies


WAYS = [
    ("package, playouts(n)", package_playouts),
    ("package, playout()", package_playout),
    ("package, Python loop", package_loop),
    ("hus_rules, Python loop", hus_rules_loop),
]


def measure(way, preset: str, width: int, seconds: float, seed: int) -> tuple[float, Optional[float]]:
    """Playouts per second and plies per second (None when not counted) of `way` over at
    least `seconds`."""
    rng = random.Random(seed)
    games = plies = 0
    counted = True
    began = time.process_time()
    while True:
        for _ in range(10):
            g, p = way(preset, width, rng)
            games += g
            if p is None:
                counted = False
            else:
                plies += p
        elapsed = time.process_time() - began
        if elapsed >= seconds:
            return games / elapsed, plies / elapsed if counted else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="hus", choices=hus.PRESETS)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    if args.runs < 1 or args.seconds <= 0:
        parser.error("--runs must be at least 1 and --seconds above 0")
    try:
        hus.Position.start(args.preset, args.width)
    except hus.RulesError as err:
        parser.error(f"--width: {err}")

    results: dict = {name: [] for name, _ in WAYS}
    for run in range(args.runs):
        for name, way in WAYS:
            results[name].append(measure(way, args.preset, args.width, args.seconds, seed=run))
        print(
            f"run {run + 1}: "
            + ", ".join(f"{name} {results[name][-1][0]:,.0f}/s" for name, _ in WAYS),
            file=sys.stderr,
        )

    medians = {
        name: (statistics.median(g for g, _ in r), None if r[0][1] is None else statistics.median(p for _, p in r))
        for name, r in results.items()
    }
    base = medians["hus_rules, Python loop"][0]
    print(f"{args.preset} at width {args.width}, medians of {args.runs} runs of {args.seconds:g} s of CPU time each")
    print(f"| way | playouts/s | plies/s | vs hus_rules |")
    print(f"|---|---|---|---|")
    for name, (games, plies) in medians.items():
        shown = "-" if plies is None else f"{plies:,.0f}"
        print(f"| {name} | {games:,.0f} | {shown} | {games / base:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
