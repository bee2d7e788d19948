#!/usr/bin/env python3
"""A Hus bot that plays a random legal move: the template to copy for your own bot.

Run it under the referee as:   python3 sample-bots/python/random_bot.py [SEED]

How a bot talks to the referee (protocol v1):
  * The referee writes one JSON object per line to our stdin; we answer with one JSON
    object per line on stdout. Every line ends with "\\n".
  * stdout belongs to the protocol. A stray print() there is a malformed line and
    loses the game. Write debugging output to stderr (see `log` below).
  * Answer quickly: the "turn" message says how many milliseconds we have
    ("time_ms"); being late loses the game.

The messages we receive, in order:
  hello   once: the rules ("rules": preset, width, ...) and the time control.
          We must answer {"type":"ready","name":...}.
  game    a new game starts ("first": do we move first, "you"/"opponent": the pits).
  turn    our move: "legal" lists the pits we may choose; "you"/"opponent" are both
          sides' pits, each in that side's own numbering. We must answer
          {"type":"move","pit":N} with N taken from "legal".
  result  a game is over (outcome, reason, points). Nothing to answer.
  bye     the set is over. Nothing to answer; exit.
Anything else (a message type or a field we do not know) is ignored, so that newer
referees can add things without breaking old bots.

Only the Python standard library is used.
"""

import json
import random
import sys

BOT_NAME = "python-random"


def log(*args):
    """Debug output goes to stderr, never stdout (stdout is for the protocol only)."""
    print(f"[{BOT_NAME}]", *args, file=sys.stderr, flush=True)


def send(message):
    """Write one protocol line and flush it at once.

    Without the flush the line can sit in Python's output buffer while the referee
    waits for it, and we lose on time.
    """
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def choose_move(turn):
    """The one function to rewrite: return one pit from turn["legal"].

    turn["you"] and turn["opponent"] hold 2*W seed counts each. Pits 0..W-1 are a
    side's front row and W..2W-1 its back row, in that side's sowing order; across
    from my front pit i are the opponent's front pit W-1-i and back pit W+i.
    """
    return random.choice(turn["legal"])


def main():
    # An optional seed on the command line makes the bot's games reproducible.
    if len(sys.argv) > 1:
        random.seed(sys.argv[1])

    # Reading line by line: each iteration returns as soon as a whole line arrived.
    # The loop ends at EOF (the referee closed our stdin), and so does the bot.
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue  # blank lines are allowed and mean nothing
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
            log("hello: preset", rules.get("preset"), "width", rules.get("width"))
            send({"type": "ready", "name": BOT_NAME})
        elif kind == "turn":
            if message.get("legal"):
                send({"type": "move", "pit": choose_move(message)})
            else:
                log("turn without legal moves?", line[:200])
        elif kind == "result":
            log("game", message.get("game"), "->", message.get("outcome"),
                "by", message.get("reason"))
        elif kind == "bye":
            break  # the set is over
        # "game" and unknown message types need no answer.


if __name__ == "__main__":
    main()
