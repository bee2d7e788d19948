#!/usr/bin/env python3
"""A Hus bot that looks one move ahead, using the rules in hus_rules.py.

Run it as:   python3 sample-bots/python/greedy_bot.py [SEED]

For every legal move it plays the move on a copy of the board and keeps the move that
leaves the best (my seeds - opponent's seeds). A move after which the opponent cannot
move at all wins the game at once and is preferred to everything else (a double win,
taking every seed, first of all). Ties are broken at random.

It is built like random_bot.py (read that first); the differences are that it reads
the preset and width from the hello message, refuses to play rules it does not know,
and builds a hus_rules.Position from each turn's "you"/"opponent" arrays. Should
anything about a turn surprise it, it logs to stderr and plays a random legal move
rather than lose by sending nothing.

Cost: one move is at most about 3000 seed placements (the 3000-seed rule) and
hus_rules sows whole laps at once, so even 32 legal moves at width 16 take a few
milliseconds.
"""

import json
import random
import sys

import hus_rules  # lives next to this file; Python puts the script's folder on sys.path

BOT_NAME = "python-greedy"


def log(*args):
    print(f"[{BOT_NAME}]", *args, file=sys.stderr, flush=True)


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def score(after):
    """How good `after` (the position once my move is played) is for me, player 0.

    The opponent is to move in `after`. Bigger tuples are better.
    """
    if not hus_rules.legal_moves(after):
        # End rule 1: the opponent cannot move and loses; with no seeds, doubly.
        return (2 if after.seeds(1) == 0 else 1, 0)
    return (0, after.seeds(0) - after.seeds(1))


def choose_move(preset, width, turn):
    legal = turn["legal"]
    # The turn shows both sides in their own numbering, which is exactly how
    # hus_rules stores a position: me as player 0, to move.
    you, opponent = turn["you"], turn["opponent"]
    if len(you) != 2 * width or len(opponent) != 2 * width:
        raise ValueError(f"expected {2 * width} pits a side")
    pos = hus_rules.Position(preset, width, (tuple(you), tuple(opponent)), 0)
    if sorted(legal) != hus_rules.legal_moves(pos):
        log("the referee's legal moves differ from mine:", legal, hus_rules.legal_moves(pos))

    best, best_moves = None, []
    for pit in legal:
        after, _report = hus_rules.play(pos, pit)
        value = score(after)
        if best is None or value > best:
            best, best_moves = value, [pit]
        elif value == best:
            best_moves.append(pit)
    return random.choice(best_moves)


def main():
    if len(sys.argv) > 1:
        random.seed(sys.argv[1])
    preset = width = None

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            log("ignoring a line that is not JSON:", line[:200])
            continue
        if not isinstance(message, dict):
            continue
        kind = message.get("type")

        if kind == "hello":
            rules = message.get("rules")
            rules = rules if isinstance(rules, dict) else {}
            preset, width = rules.get("preset"), rules.get("width")
            try:
                hus_rules.check_preset_width(preset, width)
            except ValueError as err:
                # Better to refuse than to play by rules we do not know.
                log(f"cannot play these rules: {err}")
                sys.exit(1)
            if rules.get("max_sown_per_move", hus_rules.MAX_SOWN) != hus_rules.MAX_SOWN:
                log("warning: max_sown_per_move differs from", hus_rules.MAX_SOWN)
            send({"type": "ready", "name": BOT_NAME})
        elif kind == "turn":
            legal = message.get("legal")
            if not legal:
                log("turn without legal moves?", line[:200])
                continue
            try:
                pit = choose_move(preset, width, message)
            except (ValueError, TypeError, KeyError) as err:
                log(f"falling back to a random move: {err!r}")
                pit = random.choice(legal)
            send({"type": "move", "pit": pit})
        elif kind == "bye":
            break


if __name__ == "__main__":
    main()
