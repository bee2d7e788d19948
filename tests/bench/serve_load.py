#!/usr/bin/env python3
"""Load test of `hus serve`: many live watchers on loopback, bounded in count and time.

    python3 tests/bench/serve_load.py [--hus target/release/hus] [--watchers 200]
        [--sets 8] [--time-limit 180] [--delay-ms 30] [--concurrency 2] [--procs 4]

Starts `hus serve` on 127.0.0.1 (a free port) with a league of two paced Python bots
(each sleeps DELAY_MS before a move) and two built-in random movers, connects WATCHERS
clients to /api/live/events (raw HTTP/1.1 over asyncio, the standard library only),
spread over PROCS client processes, and stops once SETS more sets have finished or TIME_LIMIT seconds have passed. For every
`move` event each watcher receives, the delay is the watcher's clock minus the event's
`t` (stamped by the server when the record was written, same machine, same clock).
Prints the median, p99 and maximum delay, the events received, the sets per minute, and
the server's memory (VmRSS at the end and VmHWM, its peak, from /proc). Every
connection is to 127.0.0.1; nothing else is contacted.
"""
import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T_FIELD = re.compile(rb'"t":([0-9.]+)')


def league_text(hus, delay_ms, concurrency):
    paced = os.path.join(ROOT, "tests", "bots", "paced.py")
    bots = [
        ("paced1", f"python3 {paced} 1 {delay_ms}"),
        ("paced2", f"python3 {paced} 2 {delay_ms}"),
        ("rand1", f"{hus} random-bot --seed 1"),
        ("rand2", f"{hus} random-bot --seed 2"),
    ]
    text = (
        'rules = "hus"\nwidth = 8\ngames = 2\nmove_time = "10s"\nready_time = "30s"\n'
        f"seed = 11\nconcurrency = {concurrency}\n"
    )
    for name, command in bots:
        text += f'\n[[bot]]\nname = "{name}"\ncommand = {json.dumps(command)}\n'
    return text


def memory_kib(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, value = line.split(":", 1)
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def get_json(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return json.loads(r.read())


async def watcher(port, delays, stop, counts):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/live/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    await writer.drain()
    buf = b""
    while not stop.is_set():
        try:
            chunk = await asyncio.wait_for(reader.read(65536), 0.5)
        except asyncio.TimeoutError:
            continue
        if not chunk:
            break
        now = time.time() * 1000.0
        buf += chunk
        lines = buf.split(b"\n")
        buf = lines.pop()
        for line in lines:
            if line.startswith(b"data: {") and b'"type":"move"' in line:
                m = T_FIELD.search(line)
                if m:
                    delays.append(now - float(m.group(1)))
                    counts[0] += 1
    writer.close()


async def watch_group(port, n, go, stop_flag, out):
    """One process's share of the watchers: delays of move events from `go` (a shared
    flag set once every watcher is connected) until `stop_flag`."""
    delays = []
    counts = [0]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(watcher(port, delays, stop, counts)) for _ in range(n)]
    while not go.is_set():
        await asyncio.sleep(0.05)
    delays.clear()
    while not stop_flag.is_set():
        await asyncio.sleep(0.1)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    out.put(delays)


def group_main(port, n, go, stop_flag, out):
    asyncio.run(watch_group(port, n, go, stop_flag, out))


async def main_async(args, port, pid):
    import multiprocessing as mp
    go, stop_flag, out = mp.Event(), mp.Event(), mp.Queue()
    shares = [args.watchers // args.procs + (1 if i < args.watchers % args.procs else 0) for i in range(args.procs)]
    procs = [mp.Process(target=group_main, args=(port, n, go, stop_flag, out)) for n in shares if n > 0]
    for p in procs:
        p.start()
    await asyncio.sleep(2.0)
    status = await asyncio.to_thread(get_json, port, "/api/status")
    if status["watchers"] < args.watchers:
        print(f"warning: the server counts {status['watchers']} watchers", file=sys.stderr)
    start_sets = status["sets_done"]
    start = time.time()
    peak_rss = 0
    go.set()  # count from when every watcher is connected
    while time.time() - start < args.time_limit:
        await asyncio.sleep(0.5)
        peak_rss = max(peak_rss, memory_kib(pid).get("VmRSS", 0))
        status = await asyncio.to_thread(get_json, port, "/api/status")
        if status["sets_done"] - start_sets >= args.sets:
            break
    elapsed = time.time() - start
    sets = status["sets_done"] - start_sets
    stop_flag.set()
    delays = []
    for _ in procs:
        delays.extend(await asyncio.to_thread(out.get))
    for p in procs:
        p.join(30)
    return delays, sets, elapsed, peak_rss, status["watchers"]


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hus", default=os.path.join(ROOT, "target", "release", "hus"))
    p.add_argument("--watchers", type=int, default=200)
    p.add_argument("--sets", type=int, default=8)
    p.add_argument("--time-limit", type=float, default=180.0)
    p.add_argument("--delay-ms", type=int, default=30)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--procs", type=int, default=4, help="client processes the watchers are spread over")
    args = p.parse_args()
    if args.watchers > 2000 or args.time_limit > 900:
        sys.exit("serve_load.py: at most 2000 watchers and 900 s")
    hus = os.path.abspath(args.hus)
    with tempfile.TemporaryDirectory() as tmp:
        league = os.path.join(tmp, "load.toml")
        with open(league, "w") as f:
            f.write(league_text(hus, args.delay_ms, args.concurrency))
        server = subprocess.Popen(
            [hus, "serve", league, "--listen", "127.0.0.1:0", "--quiet",
             "--max-connections", str(args.watchers + 50)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port = None
        try:
            deadline = time.time() + 60
            while port is None and time.time() < deadline:
                line = server.stderr.readline().decode()
                if not line:
                    break
                m = re.search(r"dashboard on http://127\.0\.0\.1:(\d+)/", line)
                if m:
                    port = int(m.group(1))
            if port is None:
                sys.exit("serve_load.py: hus serve did not start")
            delays, sets, elapsed, peak_rss, watchers = asyncio.run(main_async(args, port, server.pid))
            mem = memory_kib(server.pid)
        finally:
            server.terminate()
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
    delays.sort()
    print(f"hus serve load test: {args.watchers} watchers ({watchers} counted by the server), "
          f"{args.concurrency} sets at a time, paced bots at {args.delay_ms} ms a move")
    print(f"sets finished: {sets} in {elapsed:.1f} s ({sets * 60 / elapsed:.1f} per minute)")
    print(f"move events received: {len(delays)} ({len(delays) / max(1, args.watchers):.0f} per watcher)")
    print(f"delay from the server's write to a watcher: median {percentile(delays, 0.5):.2f} ms, "
          f"p99 {percentile(delays, 0.99):.2f} ms, max {delays[-1] if delays else float('nan'):.2f} ms")
    print(f"server memory: VmRSS {mem.get('VmRSS', peak_rss) / 1024:.1f} MiB at the end, "
          f"VmHWM (peak) {mem.get('VmHWM', 0) / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
