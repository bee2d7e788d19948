#!/usr/bin/env python3
"""What `--sandbox` adds to a bot's start-up: the time from spawn to `ready`.

    python3 tests/bench/sandbox_startup.py [--starts 20]

For each bot, a native one (`alphabeta-bot --first-legal`) and a Python one (the sample
random bot), it plays one-game sets of the bot against itself, alternately without and
with `--sandbox` (the plain runs get the sandbox's environment: only PATH and
HOME=/tmp), until each way has --starts starts (two per set), and reads each
start's time from spawn to `ready` from the log's `ready` records (LOGS.md): this is the
time that counts against the start-up allowance (`--ready-time`), and it holds the whole
of the sandbox's cost (bubblewrap, the namespaces, the mounts, the pids cgroup); moves
are timed only after it. It prints, per bot, the median of each way and the
difference. Needs bubblewrap and a release build (`cargo build --release -p hus -p
alphabeta-bot`). When `python3` lives outside /usr, its installation is shown with
--sandbox-ro (the directory above its bin/ or shims/ directory); as root, where the bots
run as nobody, who cannot reach an installation under /root, the Python bot is the
system's /usr/bin/python3 instead, both ways. As root the checkout must be reachable by
nobody (README, "Running untrusted bots").
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HUS = os.path.join(ROOT, "target", "release", "hus")
BOTS = {
    "native (alphabeta-bot --first-legal)":
        os.path.join(ROOT, "target", "release", "alphabeta-bot") + " --first-legal",
    "python (sample random bot)":
        ("/usr/bin/python3 " if os.geteuid() == 0 else "python3 ")
        + os.path.join(ROOT, "sample-bots", "python", "random_bot.py"),
}


def python_ro():
    """--sandbox-ro for python3's installation when it is outside /usr."""
    python = shutil.which("python3") or ""
    if os.geteuid() == 0 or python.startswith(("/usr/", "/bin/")):
        return []
    d = os.path.dirname(python)
    if os.path.basename(d) in ("bin", "shims"):
        d = os.path.dirname(d)
    return ["--sandbox-ro", d]


def ready_times(bot, sandbox, seed):
    """The two start-up times of one set of `bot` against itself."""
    with tempfile.TemporaryDirectory() as logs:
        args = [HUS, "match", bot, bot, "--games", "1", "--seed", str(seed), "--quiet",
                "--log-dir", logs]
        if sandbox:
            args += ["--sandbox"] + python_ro()
        else:
            # The environment a sandboxed bot gets, so that only the sandbox differs
            # (pyenv's shim, for one, does less without the referee's variables).
            args += ["--bot-clean-env", "--bot-env", "PATH", "--bot-env", "HOME=/tmp"]
        subprocess.run(args, check=True)
        (log,) = [f for f in os.listdir(logs) if f.endswith(".jsonl")]
        with open(os.path.join(logs, log)) as f:
            records = [json.loads(line) for line in f]
    return [r["ms"] for r in records if r["type"] == "ready"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=20)
    args = ap.parse_args()
    if not os.path.exists(HUS):
        sys.exit("build first: cargo build --release -p hus -p alphabeta-bot")
    for name, bot in BOTS.items():
        times = {False: [], True: []}
        seed = 0
        while min(len(t) for t in times.values()) < args.starts:
            # Alternating which goes first, so that neither always runs on a cache the
            # other warmed.
            for sandbox in ((False, True) if seed % 2 == 0 else (True, False)):
                times[sandbox] += ready_times(bot, sandbox, seed)
            seed += 1
        plain = statistics.median(times[False][: args.starts])
        boxed = statistics.median(times[True][: args.starts])
        print("%s: median of %d starts: %.1f ms plain, %.1f ms sandboxed, %+.1f ms"
              % (name, args.starts, plain, boxed, boxed - plain))
        for way in (False, True):
            print("    %s: %s" % ("sandboxed" if way else "plain    ",
                                  " ".join("%.0f" % t for t in sorted(times[way][: args.starts]))))


if __name__ == "__main__":
    main()
