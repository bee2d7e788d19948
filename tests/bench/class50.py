#!/usr/bin/env python3
"""A class of 50 uploads its bots (a benchmark, not a test: figures for docs/upload.md,
"A class of 50").

    python3 tests/bench/class50.py [--hus PATH] [--bots 50] [--sets 1000] [--builds 2]
                                   [--concurrency 2] [--move-time 200ms] [--json]

Without --hus it builds the release binary first (cargo build --release -p hus).

In a fresh temporary directory (mode 0755: the sandbox's user passes through it):
  1. a league file of two organiser's bots (`hus random-bot`), 2 games a set, the given
     time per move and concurrency, served by `hus serve --builds B` on 127.0.0.1;
  2. N authors (`hus token --author sNN --bots sNN`), each with a bot of its own: the
     Python sample greedy bot (sample-bots/python) that plays its greedy move with a
     probability p and a random one otherwise, p = i / (N - 1) for bot i: strengths
     spread from the random mover (p = 0) to the greedy bot (p = 1);
  3. the N bots sent at once (`hus submit --no-wait`, one process each), the time of
     each upload noted;
  4. the server's API read every 0.25 s: when each version became active (built, checked
     by check-bot's probe and its validation set against the random mover), and when it
     had its first rated set in the standings;
  5. then the league played on until S sets in all were recorded after the last version
     became active, and the standings read.

Reports: the median and the longest time from upload to active and from upload to the
first rated set; builds (with their checks) per minute, from the first upload to the
last version active; after S sets, the leaderboard's mean 95% interval (the mean over
the bots of high - low of their ratings' intervals, Elo) and Spearman's rank correlation
between p and the rating (1.0: the leaderboard found the strengths' order).
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

BOT = '''"""A class bot: the sample greedy bot, greedy with probability STRENGTH."""
import random
import greedy_bot

STRENGTH = {strength}
greedy = greedy_bot.choose_move


def choose(preset, width, turn):
    if random.random() < STRENGTH:
        return greedy(preset, width, turn)
    return random.choice(turn["legal"])


greedy_bot.choose_move = choose
greedy_bot.main()
'''


def opt(args, name, default):
    if name in args:
        return args[args.index(name) + 1]
    return default


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.loads(r.read())


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else 0.0


def main():
    args = sys.argv[1:]
    n = int(opt(args, "--bots", "50"))
    sets_after = int(opt(args, "--sets", "1000"))
    builds = opt(args, "--builds", "2")
    concurrency = opt(args, "--concurrency", "2")
    move_time = opt(args, "--move-time", "200ms")
    hus = opt(args, "--hus", None)
    if hus is None:
        subprocess.run(["cargo", "build", "--release", "-p", "hus"], cwd=ROOT,
                       check=True, stdout=sys.stderr)
        hus = os.path.join(ROOT, "target", "release", "hus")
    hus = os.path.abspath(hus)
    work = tempfile.mkdtemp(prefix="hus-class50-")
    os.chmod(work, 0o755)
    league = os.path.join(work, "class.toml")
    with open(league, "w") as f:
        f.write(f'rules = "hus"\nwidth = 8\ngames = 2\nmove_time = "{move_time}"\n'
                f'seed = 50\nconcurrency = {concurrency}\n\n'
                f'[[bot]]\nname = "random-1"\ncommand = "{hus} random-bot --seed 1"\n\n'
                f'[[bot]]\nname = "random-2"\ncommand = "{hus} random-bot --seed 2"\n')
    ldir = os.path.join(work, "league")
    py = os.path.join(ROOT, "sample-bots", "python")
    strengths = {}
    for i in range(n):
        name = f"s{i:02d}"
        strengths[name] = i / (n - 1) if n > 1 else 1.0
        d = os.path.join(work, "bots", name)
        os.makedirs(d)
        for f in ("greedy_bot.py", "hus_rules.py"):
            shutil.copy(os.path.join(py, f), d)
        with open(os.path.join(d, "bot.py"), "w") as f:
            f.write(BOT.format(strength=strengths[name]))
        with open(os.path.join(d, "hus-bot.toml"), "w") as f:
            f.write('language = "python"\nmain = "bot.py"\n')
        subprocess.run([hus, "token", "--author", name, "--bots", name, "--league", league,
                        "--dir", ldir, "--out", os.path.join(work, name + ".token")],
                       check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    server = subprocess.Popen([hus, "serve", league, "--dir", ldir, "--listen", "127.0.0.1:0",
                               "--builds", builds, "--quiet"],
                              stderr=subprocess.PIPE, text=True)
    base = None
    for line in server.stderr:
        m = re.search(r"dashboard on (http://[0-9.:]+)/", line)
        if m:
            base = m.group(1)
            break
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    load_before = os.getloadavg()[0]
    sent = {}
    failed = []

    def send(name):
        sent[name] = time.monotonic()
        r = subprocess.run([hus, "submit", base, os.path.join(work, "bots", name), "--bot", name,
                            "--token-file", os.path.join(work, name + ".token"), "--no-wait"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failed.append((name, r.stderr))

    threads = [threading.Thread(target=send, args=(f"s{i:02d}",)) for i in range(n)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        print("uploads refused:", failed, file=sys.stderr)
    active, first_set = {}, {}
    refused = {name: "upload refused: " + err.strip().splitlines()[-1] for name, err in failed}
    deadline = start + 3600
    while len(active) + len(refused) < n or len(first_set) < len(active):
        now = time.monotonic()
        if now > deadline:
            break
        standings = get(base, "/api/standings")
        played = {b["name"]: b["sets"]["played"] for b in standings["bots"]}
        for i in range(n):
            name = f"s{i:02d}"
            if name not in active and name not in refused:
                v = get(base, f"/api/bots/{name}/versions/1")
                if v["state"] == "active":
                    active[name] = now
                elif v["state"] in ("rejected", "build failed"):
                    refused[name] = v["detail"][:200]
            if name in active and name not in first_set and played.get(name + ".v1", 0) > 0:
                first_set[name] = now
        time.sleep(0.25)
    all_active = max(active.values()) if active else start
    done_then = get(base, "/api/status")
    base_sets = done_then.get("sets_done", 0)
    while time.monotonic() < deadline:
        st = get(base, "/api/status")
        if st.get("sets_done", 0) - base_sets >= sets_after:
            break
        time.sleep(1)
    standings = get(base, "/api/standings")
    server.terminate()
    server.wait(timeout=120)
    widths, xs, ys = [], [], []
    for b in standings["bots"]:
        m = re.fullmatch(r"(s\d\d)\.v1", b["name"])
        if m and b.get("rating"):
            r = b["rating"]
            widths.append(r["high"] - r["low"])
            xs.append(strengths[m.group(1)])
            ys.append(r["value"])
    to_active = [active[k] - sent[k] for k in active]
    to_first = [first_set[k] - sent[k] for k in first_set]
    report = {
        "hus": hus,
        "bots": n,
        "refused": refused,
        "builds_at_once": int(builds),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "upload_to_active_s": {"median": round(statistics.median(to_active), 2),
                               "max": round(max(to_active), 2)} if to_active else None,
        "upload_to_first_rated_set_s": {"median": round(statistics.median(to_first), 2),
                                        "max": round(max(to_first), 2)} if to_first else None,
        "builds_per_minute": round(len(active) / max(all_active - start, 1e-9) * 60, 1),
        "sets_after_all_active": standings.get("progress", {}).get("sets_done", 0) - base_sets
        if isinstance(standings.get("progress"), dict) else sets_after,
        "mean_interval_elo": round(statistics.mean(widths), 1) if widths else None,
        "spearman_strength_rating": round(spearman(xs, ys), 3) if len(xs) > 2 else None,
    }
    if "--json" in args:
        print(json.dumps(report, indent=2))
    else:
        for k, v in report.items():
            print(f"{k}: {v}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
