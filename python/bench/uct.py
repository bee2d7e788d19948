#!/usr/bin/env python3
"""Playouts per second of a UCT search in Python, its leaves judged three ways, in turn
in each run:

  Python rollouts        a random game from the leaf played in Python: random.choice
                         over game.legal_moves(), then game.play(pit), to the end
  playout() per leaf     leaf.copy().playout(seed): one random game per leaf, in Rust
  playouts(n) per leaf   hus.playouts(leaf, n, seed): n random games per leaf in one
                         call, in Rust without the GIL (one thread)

The tree is the same code for all three (python/examples/mcts_bot.py's UCT, from the
starting position, one tree per run growing for the whole run). Each way searches for
--seconds of this process's CPU time per run (time.process_time: on a shared machine the
time other processes take does not count); --runs runs; the medians of playouts per
second and of tree iterations per second are printed.

    python3 python/bench/uct.py [--preset hus] [--width 8] [--runs 5] [--seconds 2] [--n 32]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time

import hus


def python_rollout(game: hus.Game, rng: random.Random, n: int) -> tuple[float, int]:
    """One random game in Python: the score for the player to move at ``game``."""
    mover = game.to_move
    game = game.copy()
    while not game.is_over:
        game.play(rng.choice(game.legal_moves()))
    winner = game.end.winner
    return (1.0 if winner == mover else 0.5 if winner is None else 0.0), 1


def rust_playout(game: hus.Game, rng: random.Random, n: int) -> tuple[float, int]:
    mover = game.to_move
    winner = game.copy().playout(rng.getrandbits(64)).winner
    return (1.0 if winner == mover else 0.5 if winner is None else 0.0), 1


def rust_playouts(game: hus.Game, rng: random.Random, n: int) -> tuple[float, int]:
    wins, draws, _ = hus.playouts(game, n, seed=rng.getrandbits(64))
    return wins + draws / 2, n


WAYS = [
    ("Python rollouts", python_rollout),
    ("playout() per leaf", rust_playout),
    ("playouts(n) per leaf", rust_playouts),
]


def node(game: hus.Game) -> dict:
    return {"game": game, "children": {}, "n": 0, "w": 0.0}


def search(start: hus.Game, evaluate, n: int, seconds: float, seed: int) -> tuple[float, float]:
    """UCT from ``start`` for ``seconds`` of CPU time: playouts and iterations per second."""
    rng = random.Random(seed)
    root = node(start.copy())
    playouts = iterations = 0
    began = time.process_time()
    while True:
        leaf, path = root, [root]
        while not leaf["game"].is_over:
            untried = [p for p in leaf["game"].legal_moves() if p not in leaf["children"]]
            if untried:
                pit = rng.choice(untried)
                game = leaf["game"].copy()
                game.play(pit)
                leaf["children"][pit] = leaf = node(game)
                path.append(leaf)
                break
            parent = leaf
            leaf = max(
                parent["children"].values(),
                key=lambda c: c["w"] / c["n"] + 1.4 * math.sqrt(math.log(parent["n"]) / c["n"]),
            )
            path.append(leaf)
        score, count = evaluate(leaf["game"], rng, n)
        for step in reversed(path):
            step["n"] += count
            step["w"] += count - score
            score = count - score
        playouts += count
        iterations += 1
        elapsed = time.process_time() - began
        if elapsed >= seconds:
            return playouts / elapsed, iterations / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="hus", choices=hus.PRESETS)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--n", type=int, default=32, help="playouts per leaf of playouts(n) (default 32)")
    args = parser.parse_args()
    if args.runs < 1 or args.seconds <= 0 or args.n < 1:
        parser.error("--runs and --n must be at least 1 and --seconds above 0")
    try:
        start = hus.Game(preset=args.preset, width=args.width)
    except hus.RulesError as err:
        parser.error(f"--width: {err}")

    results: dict = {name: [] for name, _ in WAYS}
    for run in range(args.runs):
        for name, way in WAYS:
            results[name].append(search(start, way, args.n, args.seconds, seed=run))
        print(
            f"run {run + 1}: " + ", ".join(f"{name} {results[name][-1][0]:,.0f}/s" for name, _ in WAYS),
            file=sys.stderr,
        )
    medians = {
        name: (statistics.median(p for p, _ in r), statistics.median(i for _, i in r)) for name, r in results.items()
    }
    base = medians["Python rollouts"][0]
    print(
        f"UCT from the start of {args.preset} at width {args.width}, n = {args.n}; "
        f"medians of {args.runs} runs of {args.seconds:g} s of CPU time each"
    )
    print("| leaves judged by | playouts/s | iterations/s | playouts/s vs Python rollouts |")
    print("|---|---|---|---|")
    for name, (playouts, iterations) in medians.items():
        print(f"| {name} | {playouts:,.0f} | {iterations:,.0f} | {playouts / base:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
