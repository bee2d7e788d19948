#!/usr/bin/env python3
"""A deterministic bot that takes its time, for the league's tests.

    python3 paced.py SEED DELAY_MS [NAME]

It announces NAME (default `paced`; the match server's tests announce HTML) and plays a random legal pit drawn from its own generator (seeded with SEED, so a set
replayed from its start is played exactly alike) after sleeping DELAY_MS before every
answer: sets then last long enough to be interrupted part-way.
"""
import json
import random
import sys
import time

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
delay = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0
name = sys.argv[3] if len(sys.argv) > 3 else "paced"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "ready", "name": name})
    elif kind == "turn":
        time.sleep(delay)
        send({"type": "move", "pit": rng.choice(msg["legal"])})
    elif kind == "bye":
        break
