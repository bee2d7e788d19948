#!/usr/bin/env python3
"""A bot that uses a fixed share of its time on every move, spinning the CPU, for the
league's fairness benchmark (tests/bench/league_bench.py fairness).

    python3 busy_bot.py FRACTION [SEED]

On each turn it computes (a busy loop, not a sleep) until FRACTION of the turn's time_ms
has passed since it read the turn, then answers a random legal pit. A bot like this
loses on time only when the machine makes it or the referee late.
"""
import json
import random
import sys
import time

fraction = float(sys.argv[1]) if len(sys.argv) > 1 else 0.8
rng = random.Random(sys.argv[2] if len(sys.argv) > 2 else 0)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    start = time.monotonic()
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "ready", "name": "busy"})
    elif kind == "turn":
        until = start + fraction * msg["time_ms"] / 1000.0
        spins = 0
        while time.monotonic() < until:
            spins += 1
        send({"type": "move", "pit": rng.choice(msg["legal"])})
    elif kind == "bye":
        break
