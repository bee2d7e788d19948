#!/usr/bin/env python3
"""A healthy bot that writes down every message it receives, for the tests of the order
of messages (tests/e2e/message_order.rs).

    python3 recorder.py FILE

It answers hello with ready and every turn at once with the first legal pit, and
appends every line it receives, as received, to FILE (flushed line by line). It exits
on bye or at the end of its input.
"""
import json
import sys

record = open(sys.argv[1], "a", buffering=1, encoding="utf-8")
for raw in sys.stdin:
    if not raw.strip():
        continue
    record.write(raw if raw.endswith("\n") else raw + "\n")
    msg = json.loads(raw)
    kind = msg.get("type")
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "recorder"}), flush=True)
    elif kind == "turn":
        print(json.dumps({"type": "move", "pit": msg["legal"][0]}), flush=True)
    elif kind == "bye":
        break
