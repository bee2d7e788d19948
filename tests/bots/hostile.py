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
  syscalls [NAME...]    make each system call the sandbox refuses (or those named),
                        with arguments that do nothing harmful if it is allowed
  tunables              try to open for writing every file under /proc/sys and /sys,
                        write /proc/sys/fs/lease-break-time (its value plus one), open
                        /proc/sys/kernel/core_pattern for writing (never writing it)
  identity GO           report its user and groups as it sees them, then wait (up to
                        60 s) for the file GO, so that the test can look at it from
                        outside, before answering hello
  fork-bomb             fork until refused (at most 10000; each child sleeps 30 s)
  league DB             list the directories above its own, then read DB
  crash-read PATH       read PATH without catching a refusal: it crashes if refused
  memfd MIB             write MIB MiB into a memfd_create file (memory no address-space
                        limit sees), reporting each 16 MiB; killed or refused on the way
                        if its sandbox has a memory budget below that
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


# The x86_64 and aarch64 numbers of the system calls the sandbox refuses.
SYSCALLS = {
    "x86_64": {
        "syslog": 103, "uselib": 134, "acct": 163, "quotactl": 179, "add_key": 248,
        "keyctl": 250, "request_key": 249, "move_pages": 279, "mbind": 237,
        "get_mempolicy": 239, "set_mempolicy": 238, "migrate_pages": 256, "unshare": 272,
        "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
        "clone": 56, "ioctl": 16, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "perf_event_open": 298, "personality": 135, "ptrace": 101, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "bpf": 321, "userfaultfd": 323,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
        "finit_module": 313, "delete_module": 176,
    },
    "aarch64": {
        "syslog": 116, "acct": 89, "quotactl": 60, "add_key": 217, "keyctl": 219,
        "request_key": 218, "move_pages": 239, "mbind": 235, "get_mempolicy": 236,
        "set_mempolicy": 237, "migrate_pages": 238, "unshare": 97, "setns": 268,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "clone": 220,
        "ioctl": 29, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "perf_event_open": 241,
        "personality": 92, "ptrace": 117, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "bpf": 280, "userfaultfd": 282, "kexec_load": 104,
        "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106,
    },
}

CLONE_NEWUSER = 0x10000000
SIGCHLD = 17
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
AT_FDCWD = -100
NOWHERE = b"/nonexistent-hus-hostile"


def syscall_calls(buf):
    """(label, name, arguments): each refused call, with arguments that fail or do
    nothing if it is allowed (as the hostile bot outside a sandbox, even as root)."""
    return [
        ("syslog", "syslog", (10, None, 0)),                 # SYSLOG_ACTION_SIZE_BUFFER
        ("uselib", "uselib", (NOWHERE,)),
        ("acct", "acct", (NOWHERE,)),
        ("quotactl", "quotactl", (0, None, 0, None)),
        ("add_key", "add_key", (None, None, None, 0, 0)),
        ("keyctl", "keyctl", (0, -3, 0)),                    # the session keyring's id
        ("request_key", "request_key", (None, None, None, 0)),
        ("move_pages", "move_pages", (0, 0, None, None, None, 0)),
        ("mbind", "mbind", (None, 0, 0, None, 0, 0)),
        ("get_mempolicy", "get_mempolicy", (None, None, 0, None, 0)),
        ("set_mempolicy", "set_mempolicy", (0, None, 0)),    # MPOL_DEFAULT
        ("migrate_pages", "migrate_pages", (0, 0, None, None)),
        ("unshare", "unshare", (CLONE_NEWUSER,)),
        ("setns", "setns", (-1, 0)),
        ("mount", "mount", (None, NOWHERE, None, 0, None)),
        ("umount2", "umount2", (NOWHERE, 0)),
        ("pivot_root", "pivot_root", (NOWHERE, NOWHERE)),
        ("chroot", "chroot", (NOWHERE,)),
        ("clone CLONE_NEWUSER", "clone", (CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)),
        ("ioctl TIOCSTI", "ioctl", (0, TIOCSTI, buf)),
        ("ioctl TIOCLINUX", "ioctl", (0, TIOCLINUX, buf)),
        ("open_tree", "open_tree", (AT_FDCWD, NOWHERE, 0)),
        ("move_mount", "move_mount", (-1, b"", -1, b"", 0)),
        ("fsopen", "fsopen", (b"nonexistent-hus-fs", 0)),
        ("fsconfig", "fsconfig", (-1, 0, None, None, 0)),
        ("fsmount", "fsmount", (-1, 0, 0)),
        ("fspick", "fspick", (AT_FDCWD, NOWHERE, 0)),
        ("mount_setattr", "mount_setattr", (-1, b"", 0, None, 0)),
        ("perf_event_open", "perf_event_open", (buf, 0, -1, -1, 0)),
        ("personality READ_IMPLIES_EXEC", "personality", (0x0400000,)),
        ("personality query", "personality", (0xFFFFFFFF,)),
        ("ptrace", "ptrace", (12, 0, 0, 0)),                 # PTRACE_GETREGS of no process
        ("io_uring_setup", "io_uring_setup", (1, buf)),     # one entry, zeroed parameters
        ("io_uring_enter", "io_uring_enter", (-1, 0, 0, 0, None, 0)),
        ("io_uring_register", "io_uring_register", (-1, 0, None, 0)),
        ("bpf", "bpf", (0, buf, 0)),                         # BPF_MAP_CREATE, empty attribute
        ("userfaultfd", "userfaultfd", (0,)),
        ("kexec_load", "kexec_load", (0, 0, None, 0xFFFFFFFF)),       # unknown flags
        ("kexec_file_load", "kexec_file_load", (-1, -1, 0, None, 0xFFFFFFFF)),
        ("init_module", "init_module", (None, 0, b"")),
        ("finit_module", "finit_module", (-1, b"", 0)),
        ("delete_module", "delete_module", (b"nonexistent_hus_module", 0)),
    ]


def syscalls(only):
    import ctypes
    import platform
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    numbers = SYSCALLS[platform.machine()]
    buf = ctypes.create_string_buffer(256)
    for label, name, args in syscall_calls(buf):
        if (only and name not in only) or name not in numbers:
            continue
        args = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(numbers[name]), *args)
        errno = ctypes.get_errno()
        if name == "clone" and result == 0:
            os._exit(0)                                      # the child, if it was made
        if result == -1:
            report("syscall %s: failed: errno %d (%s)" % (label, errno, os.strerror(errno)))
        else:
            if name == "clone":
                os.waitpid(result, 0)
                result = "a child"
            report("syscall %s: returned %s" % (label, result))


def tunables():
    tried, opened = [], []
    for top in ("/proc/sys", "/sys"):
        if not os.path.exists(top):
            report("tunables %s: absent" % top)
            continue
        deadline = time.monotonic() + 20
        for here, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(here, name)
                if time.monotonic() > deadline or not os.path.isfile(path):
                    continue
                tried.append(path)
                try:
                    # Opened, never written: a kernel setting changes only by a write.
                    os.close(os.open(path, os.O_WRONLY))
                    opened.append(path)
                except OSError:
                    pass
    report("tunables tried: %s" % " ".join(tried))
    report("tunables opened for writing: %s" % (" ".join(opened) or "none"))
    lease = "/proc/sys/fs/lease-break-time"
    try:
        with open(lease) as f:
            value = int(f.read())
        with open(lease, "w") as f:
            f.write("%d\n" % (value + 1))
        report("write %s: wrote %d" % (lease, value + 1))
    except OSError as e:
        report("write %s: %s" % (lease, failure(e)))
    core = "/proc/sys/kernel/core_pattern"
    try:
        os.close(os.open(core, os.O_WRONLY))
        report("open %s for writing: opened" % core)
    except OSError as e:
        report("open %s for writing: %s" % (core, failure(e)))


def identity(go):
    for line in open("/proc/self/status"):
        if line.startswith(("Uid:", "Gid:", "Groups:")):
            report("status %s" % " ".join(line.split()))
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.05)
    report("go: %s" % ("seen" if os.path.exists(go) else "never came"))


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


def memfd(mib):
    written = 0
    try:
        fd = os.memfd_create("hostile")
        block = b"m" * (1 << 20)
        while written < int(mib):
            os.write(fd, block)
            written += 1
            if written % 16 == 0:
                report("memfd: %d MiB" % written)
        report("memfd: wrote %d MiB, never refused" % written)
    except OSError as e:
        report("memfd: %d MiB, then %s" % (written, failure(e)))


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
        syscalls(rest)
    elif mode == "tunables":
        tunables()
    elif mode == "identity":
        identity(rest[0])
    elif mode == "processes":
        processes(rest[0])
    elif mode == "fork-bomb":
        fork_bomb()
    elif mode == "league":
        league(rest[0])
    elif mode == "memfd":
        memfd(rest[0])
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
