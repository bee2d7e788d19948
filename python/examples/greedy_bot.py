#!/usr/bin/env python3
"""A Hus bot on the engine package: sample-bots/python/greedy_bot.py in a third of its
lines, since `hus` knows the rules and `hus.bot` speaks the protocol.

Run it as:   python3 python/examples/greedy_bot.py [SEED]

For every legal move it looks at the position after it: a move after which the
opponent cannot move wins at once (a double win, taking every seed, first of all);
otherwise it keeps the move that leaves the best (my seeds - opponent's seeds) after the
opponent's best answer (two plies). Ties are broken at random (seeded by SEED).
"""

import random
import sys

import hus
import hus.bot

rng = random.Random(sys.argv[1] if len(sys.argv) > 1 else None)


def value(after: hus.Position) -> tuple:
    """How good `after` (my move played, the opponent to move) is for me, player 0."""
    answers = after.legal_moves()
    if not answers:
        return (2 if after.seeds_of(1) == 0 else 1, 0)
    # The opponent's best answer by the same seed count, from its side.
    worst = min(after.after(pit).seeds_of(0) - after.after(pit).seeds_of(1) for pit in answers)
    return (0, worst)


def choose(position: hus.Position) -> int:
    scored = [(value(position.after(pit)), pit) for pit in position.legal_moves()]
    best = max(score for score, _ in scored)
    return rng.choice([pit for score, pit in scored if score == best])


if __name__ == "__main__":
    sys.exit(hus.bot.run(choose, name="python-engine-greedy", seed=rng.randrange(2**32)))
