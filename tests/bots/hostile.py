#!/usr/bin/env python3
"""A bot that attacks its host, one way per MODE, for the sandbox's tests.

    python3 hostile.py MODE [ARG...] [--tag X]

On `hello` it makes its attempt and writes what happened on stderr, one line per try,
each starting with `hostile:`; then it answers `ready` and plays the first legal pit of
every turn, like a well-behaved bot (except `crash-read`). `--tag X` is ignored: tests
use it to find the bot's processes.

Modes:
  connect PORT          open a TCP connection to 127.0.0.1:PORT and send a line
  read PATH...          read each file and show its start
  write PATH...         create each file
  processes PID         list every process it can see, then SIGKILL its parent, PID,
                        and every process it sees whose command line holds the tag
                        (the referee and the other bot, if it could see them)
  fill PATH...          write zeros into each file until refused (at most 256 MiB)
  fds                   list its open descriptors beyond 0-2 and read from each
  syscalls              make system calls that kernel exploits start from
  fork-bomb             fork until refused (at most 10000; each child sleeps 30 s)
  league DB             list the directories above its own, then read DB
  crash-read PATH       read PATH without catching a refusal: it crashes if refused
"""
import json
import os
import signal
import socket
import sys
import time

args = sys.argv[1:]
tag = None
if "--tag" in args:
    i = args.index("--tag")
    tag = args[i + 1]
    del args[i : i + 2]
mode, rest = args[0], args[1:]


def report(text):
    sys.stderr.write("hostile: %s\n" % text)
    sys.stderr.flush()


def failure(e):
    return "failed: %s: %s" % (type(e).__name__, e)


def connect(port):
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=2) as s:
            s.sendall(b"hello from the bot\n")
        report("connect 127.0.0.1:%s: connected" % port)
    except OSError as e:
        report("connect 127.0.0.1:%s: %s" % (port, failure(e)))


def read(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
        shown = data[:60].decode(errors="replace").replace("\n", "\\n")
        report("read %s: got %d bytes: %s" % (path, len(data), shown))
    except OSError as e:
        report("read %s: %s" % (path, failure(e)))


def write(path):
    try:
        with open(path, "w") as f:
            f.write("written by the hostile bot\n")
        report("write %s: wrote" % path)
    except OSError as e:
        report("write %s: %s" % (path, failure(e)))


def fill(path):
    total = 0
    block = bytes(1 << 16)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            while total < 256 << 20:
                total += os.write(fd, block)
            report("fill %s: %d bytes, never refused" % (path, total))
        finally:
            os.close(fd)
    except OSError as e:
        report("fill %s: %d bytes, then %s" % (path, total, failure(e)))


def fds():
    extra = []
    for fd in range(3, 1024):
        try:
            os.fstat(fd)
        except OSError:
            continue
        try:
            data = os.pread(fd, 60, 0)
        except OSError as e:
            data = failure(e).encode()
        extra.append("%d: %s" % (fd, data.decode(errors="replace")))
    report("fds beyond 0-2: %s" % (extra or "none"))


# The x86_64 and aarch64 numbers of a few system calls, and harmless arguments.
SYSCALLS = {
    "x86_64": {"io_uring_setup": 425, "keyctl": 250, "userfaultfd": 323, "bpf": 321,
               "perf_event_open": 298, "ptrace": 101},
    "aarch64": {"io_uring_setup": 425, "keyctl": 219, "userfaultfd": 282, "bpf": 280,
                "perf_event_open": 241, "ptrace": 117},
}


def syscalls():
    import ctypes
    import platform
    libc = ctypes.CDLL(None, use_errno=True)
    numbers = SYSCALLS[platform.machine()]
    buf = ctypes.create_string_buffer(256)
    calls = [
        ("io_uring_setup", (1, buf)),          # one entry, zeroed parameters
        ("keyctl", (0, -3, 0)),                 # KEYCTL_GET_KEYRING_ID of the session keyring
        ("userfaultfd", (0,)),
        ("bpf", (0, buf, 0)),                   # BPF_MAP_CREATE with an empty attribute
        ("perf_event_open", (buf, 0, -1, -1, 0)),
        ("ptrace", (12, 0, 0, 0)),              # PTRACE_GETREGS of no process
    ]
    for name, args in calls:
        ctypes.set_errno(0)
        result = libc.syscall(numbers[name], *args)
        errno = ctypes.get_errno()
        if result == -1:
            report("syscall %s: failed: errno %d (%s)" % (name, errno, os.strerror(errno)))
        else:
            report("syscall %s: returned %d" % (name, result))


def processes(sentinel):
    seen = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/cmdline" % name, "rb") as f:
                    seen[int(name)] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                seen[int(name)] = "?"
    report("processes: %s" % "; ".join("%d %s" % (p, c) for p, c in sorted(seen.items())))
    me = os.getpid()
    targets = {os.getppid(), int(sentinel)}
    targets |= {p for p, c in seen.items() if tag and tag in c and p != me}
    for pid in sorted(targets):
        try:
            os.kill(pid, signal.SIGKILL)
            report("kill %d: sent" % pid)
        except OSError as e:
            report("kill %d: %s" % (pid, failure(e)))


def fork_bomb():
    children = 0
    try:
        while children < 10000:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
        report("fork-bomb: %d children, never refused" % children)
    except OSError as e:
        report("fork-bomb: %d children, then %s" % (children, failure(e)))


def league(db):
    here = os.getcwd()
    for up in (os.path.dirname(here), os.path.dirname(os.path.dirname(here))):
        try:
            report("list %s: %s" % (up, sorted(os.listdir(up))))
        except OSError as e:
            report("list %s: %s" % (up, failure(e)))
    read(db)


def attack():
    if mode == "connect":
        connect(rest[0])
    elif mode == "read":
        for path in rest:
            read(path)
    elif mode == "write":
        for path in rest:
            write(path)
    elif mode == "fill":
        for path in rest:
            fill(path)
    elif mode == "fds":
        fds()
    elif mode == "syscalls":
        syscalls()
    elif mode == "processes":
        processes(rest[0])
    elif mode == "fork-bomb":
        fork_bomb()
    elif mode == "league":
        league(rest[0])
    elif mode == "crash-read":
        with open(rest[0], "rb") as f:
            report("crash-read %s: got %d bytes" % (rest[0], len(f.read())))
    else:
        report("unknown mode %s" % mode)


def line(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for raw in sys.stdin:
    if not raw.strip():
        continue
    msg = json.loads(raw)
    kind = msg.get("type")
    if kind == "hello":
        attack()
        line({"type": "ready", "name": "hostile-" + mode})
    elif kind == "turn":
        line({"type": "move", "pit": msg["legal"][0]})
    elif kind == "bye":
        break
