#!/usr/bin/env python3
"""A bot that misbehaves on purpose, one way per MODE, for the referee's tests.

    python3 misbehave.py MODE [ARG] [--on N]

It plays correctly (the first legal pit) until its N-th turn of the set (default 1),
where it does MODE. Modes that concern the start-up act on hello instead. Each mode's
comment below says what it does and what its ARG is (`stderr-exit BYTES`: BYTES plus
1000 times the game's number of stderr, then exit 1, so that a restarted bot's
processes each write a known and different amount). `--tag X` is ignored: tests use it
to find the bot's processes.
"""
import json
import os
import signal
import sys
import time

args = sys.argv[1:]
tag = "untagged"
if "--tag" in args:  # a marker for finding this bot's processes; otherwise ignored
    i = args.index("--tag")
    tag = args[i + 1]
    del args[i : i + 2]
on = 1
if "--on" in args:
    i = args.index("--on")
    on = int(args[i + 1])
    del args[i : i + 2]
mode = args[0] if args else "ok"
arg = args[1] if len(args) > 1 else None

out = sys.stdout.buffer


def send(data: bytes):
    out.write(data)
    out.flush()


def line(obj):
    send(json.dumps(obj).encode() + b"\n")


def hang():
    while True:
        time.sleep(3600)


def answer(msg):
    line({"type": "move", "pit": msg["legal"][0]})


if mode == "ignore-sigterm":
    # From the start, so that the test never depends on how soon it reads bye.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

turns = 0
for raw in sys.stdin.buffer:
    raw = raw.strip()
    if not raw:
        continue
    msg = json.loads(raw)
    kind = msg.get("type")
    if kind == "hello":
        if mode == "no-hello":
            hang()
        if mode == "late-hello":
            time.sleep(float(arg))
        if mode == "die-before-ready":
            sys.exit(3)
        if mode == "move-before-ready":
            line({"type": "move", "pit": 4})
            continue
        if mode == "ready-name":  # ARG: the name, as JSON (7, null, "x")
            send(b'{"type":"ready","name":%s}\n' % arg.encode())
            continue
        ready = json.dumps({"type": "ready", "name": "misbehave-" + mode}).encode() + b"\n"
        if mode == "early-move":
            # A move nobody asked for, in the same write as ready: the referee has it
            # before any turn, however the processes are scheduled.
            send(ready + b'{"type":"move","pit":4}\n')
            continue
        send(ready)
        continue
    if kind == "bye":
        if mode == "after-bye":
            line({"type": "move", "pit": 4})
        if mode in ("no-exit-after-bye", "ignore-sigterm"):
            hang()
        break
    if kind != "turn":
        continue
    if mode == "answer-all-at":  # every turn, at a fraction ARG of the time limit
        time.sleep(msg["time_ms"] / 1000.0 * float(arg))
        answer(msg)
        continue
    turns += 1
    if turns != on:
        answer(msg)
        continue
    limit = msg["time_ms"] / 1000.0
    if mode in ("ok", "after-bye", "no-exit-after-bye", "ignore-sigterm", "early-move",
                "no-hello", "late-hello", "die-before-ready", "move-before-ready",
                "ready-name"):
        answer(msg)
    elif mode == "never-answer":
        hang()
    elif mode == "answer-at":  # ARG: a fraction of the time limit
        time.sleep(limit * float(arg))
        answer(msg)
    elif mode == "exit":
        sys.exit(int(arg or 0))
    elif mode == "kill-self":
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "close-stdout":
        os.close(1)
        hang()
    elif mode == "no-newline":
        send(b'{"type":"move","pit":%d}' % msg["legal"][0])
        hang()
    elif mode == "garbage":
        send(b"thinking... pit 4 looks good\n")
    elif mode == "garbage-saying-game":  # a line naming the game on stderr, then garbage
        sys.stderr.write("my last words in game %d\n" % msg["game"])
        sys.stderr.flush()
        send(b"thinking... pit 4 looks good\n")
    elif mode == "array":
        send(b"[1,2,3]\n")
    elif mode == "wrong-type":
        line({"type": "ready", "name": "again"})
    elif mode == "unknown-type":
        line({"type": "resign"})
    elif mode == "no-pit":
        line({"type": "move"})
    elif mode == "pit-string":
        line({"type": "move", "pit": str(msg["legal"][0])})
    elif mode == "pit-float":
        send(b'{"type":"move","pit":4.5}\n')
    elif mode == "pit-negative":
        line({"type": "move", "pit": -1})
    elif mode == "pit-out-of-range":
        line({"type": "move", "pit": len(msg["you"])})
    elif mode == "pit-too-few":
        small = [i for i, s in enumerate(msg["you"]) if s < 2]
        line({"type": "move", "pit": small[0] if small else 99})
    elif mode == "two-moves":  # in one write: the second is there before the next turn
        move = json.dumps({"type": "move", "pit": msg["legal"][0]}).encode() + b"\n"
        send(move + move)
    elif mode == "huge-number":
        send(b'{"type":"move","pit":1e999}\n')
    elif mode == "big-int":
        send(b'{"type":"move","pit":99999999999999999999}\n')
    elif mode == "invalid-utf8":
        send(b'{"type":"move","pit":4,"name":"\xff\xfe"}\n')
    elif mode == "nul-byte":
        send(b'{"type":"move",\x00"pit":4}\n')
    elif mode == "huge-line":  # ARG: megabytes, no newline
        chunk = b"x" * (1 << 20)
        for _ in range(int(arg or 100)):
            try:
                send(chunk)
            except BrokenPipeError:
                break
        hang()
    elif mode == "blank-flood":  # blank lines (ignored by the protocol), for ever
        try:
            while True:
                send(b"\n" * 4096)
        except BrokenPipeError:
            hang()
    elif mode == "slow-garbage":  # bytes without a newline, one every millisecond
        try:
            while True:
                send(b"x")
                time.sleep(0.001)
        except BrokenPipeError:
            hang()
    elif mode == "flood-stdout":
        try:
            while True:
                send(b'{"type":"move","pit":4}\n' * 1000)
        except BrokenPipeError:
            hang()
    elif mode == "stderr-exit":  # ARG + 1000 * game bytes of "e" on stderr, then exit 1
        # Each process writes its own known amount (a restarted bot's processes fault
        # in different games), so that each one's cut note can be checked.
        left = int(arg) + 1000 * msg["game"]
        while left > 0:
            n = min(left, 65536)
            sys.stderr.buffer.write(b"e" * n)
            left -= n
        sys.stderr.buffer.flush()
        sys.exit(1)
    elif mode == "flood-stderr":  # ARG: mebibytes written to stderr, then the move
        block = b"e" * 65536
        for _ in range(int(arg or 3) * 16):
            sys.stderr.buffer.write(block)
        sys.stderr.buffer.flush()
        answer(msg)
    elif mode == "fork-child":  # a child keeps the pipes open and outlives us
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        sys.exit(0)
    elif mode == "escape-group":  # a grandchild in its own group holds the pipes
        ready_r, ready_w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            os.write(ready_w, b"x")
            time.sleep(30)
            os._exit(0)
        # Exit only once it has left the group, however late it is scheduled.
        os.read(ready_r, 1)
        sys.exit(0)
    elif mode == "detach":  # a child leaves the session and the pipes, then plays on
        ready_r, ready_w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.write(ready_w, b"x")
            # Its command line carries the tag, so the test finds it.
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(30)", tag])
        os.read(ready_r, 1)
        os.close(ready_r)
        os.close(ready_w)
        answer(msg)
    elif mode == "stop-referee":  # ARG: a fraction of the time limit; then SIGSTOP to
        # the referee (the parent), and the move once it is stopped, so that it is read
        # only after it resumes: the test's SIGCONT ends the stop.
        time.sleep(limit * float(arg))
        referee = os.getppid()
        os.kill(referee, signal.SIGSTOP)
        stopped_by = time.monotonic() + 30
        while time.monotonic() < stopped_by:
            with open("/proc/%d/stat" % referee) as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("T", "t"):
                    break
            time.sleep(0.001)
        answer(msg)
    elif mode == "memory":  # ARG: megabytes to allocate
        hog = bytearray(int(arg) << 20)
        answer(msg)
    elif mode == "cpu":
        while True:
            pass
    else:
        sys.stderr.write("unknown mode %r\n" % mode)
        sys.exit(2)
