#!/usr/bin/env python3
"""Load test of `hus serve`: remote bots and live watchers on loopback, bounded in count
and time (docs/server.md, "Load test").

    python3 tests/bench/serve_load.py [--hus target/release/hus] [--bots 50]
        [--watchers 200] [--procs 4] [--probes 2] [--delay-ms 100] [--concurrency 4]
        [--sets 8] [--time-limit 180]

What runs, all on 127.0.0.1 (nothing else is contacted):

- `hus serve` on a league of BOTS remote bots (`remote = true`, a fresh token each,
  only its SHA-256 in the league file), its dashboard and its bot port on free ports.
- One process of BOTS remote bots, small asyncio clients that speak protocol v1 over
  TCP exactly as PROTOCOL.md, "Remote bots" says: the auth line, `welcome`, then
  `hello`/`turn`/`bye`, one set per connection, connecting again after each. Each
  sleeps DELAY_MS before every move (a random legal pit): the pace of the sets, so the
  live stream carries about CONCURRENCY * 1000 / DELAY_MS moves a second.
- WATCHERS clients of the live stream `/api/live/events` (raw HTTP/1.1 over asyncio,
  the standard library only) spread over PROCS processes, plus PROBES more in a process
  of their own: the probes do nothing else, so they show what a watcher that is not
  behind on its own reading sees.

Measuring starts once every bot has logged in and every watcher is connected, and stops
when SETS more sets have finished or TIME_LIMIT seconds have passed; every process
stops by itself (the bots and watchers also at a deadline of their own).

The delay of a card (the dashboard's stream sends each shown set's latest state, at most
every 250 ms: before issue 36 it sent every move, and this measured `move` events) is
the watcher's clock when its read returned the event, minus the event's `t`, which the
server stamps when the set's latest record reached the live hub (after the log has it):
up to 250 ms of waiting for the stream's tick, serialization, the write, the loopback,
and the client's own wait to be scheduled and to read. Same
machine, same clock. A client process that is busy all the time reads late: the report
gives each kind of process's CPU use over the window (from `time.process_time`, and
`/proc` for the server), the machine's idle share (`/proc/stat`) and its load average,
so a delay can be told apart from a client's own backlog.

Memory: the server's VmRSS sampled every half second (the peak is reported) and VmHWM
(the kernel's peak) at the end, from `/proc/PID/status`.
"""
import argparse
import asyncio
import hashlib
import json
import multiprocessing as mp
import os
import random
import re
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T_FIELD = re.compile(rb'"t":([0-9.]+)')
# The dashboard's stream carries each shown set's latest state (`card`, whose `t` is the
# time of its latest record) at most every 250 ms, not every move.
MOVE = b'"type":"card"'


def league_text(bots, concurrency):
    text = (
        'rules = "hus"\nwidth = 8\ngames = 2\nmove_time = "10s"\nready_time = "30s"\n'
        f"seed = 11\nconcurrency = {concurrency}\n"
    )
    for name, token in bots:
        digest = hashlib.sha256(token.encode()).hexdigest()
        text += f'\n[[bot]]\nname = "{name}"\nremote = true\ntoken_sha256 = "{digest}"\n'
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


def cpu_seconds(pid):
    """User + system CPU seconds of a process, from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def machine_ticks():
    """(idle ticks, all ticks) of every CPU, from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return values[3] + values[4], sum(values)


def get_json(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return json.loads(r.read())


# ---- remote bots -------------------------------------------------------------------

async def remote_bot(port, name, token, delay, rng, stop, logged_in):
    """One remote bot: log in, wait for a set, play it, connect again; until `stop`."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.2)
            continue
        counted = False
        try:
            writer.write(json.dumps({"type": "auth", "bot": name, "token": token}).encode() + b"\n")
            await writer.drain()
            reply = json.loads(await asyncio.wait_for(reader.readline(), 10) or b"{}")
            if reply.get("type") != "welcome":
                await asyncio.sleep(reply.get("retry_ms", 500) / 1000)
                continue
            logged_in.value += 1
            counted = True
            while not stop.is_set():
                try:
                    # Cancelling readline loses nothing: it consumes only a whole line.
                    line = await asyncio.wait_for(reader.readline(), 0.5)
                except asyncio.TimeoutError:
                    continue
                if not line:
                    break  # the set is over (or the server went): connect again
                msg = json.loads(line)
                kind = msg.get("type")
                if kind == "hello":
                    writer.write(b'{"type":"ready","name":"load"}\n')
                elif kind == "turn":
                    await asyncio.sleep(delay)
                    writer.write(json.dumps({"type": "move", "pit": rng.choice(msg["legal"])}).encode() + b"\n")
                await writer.drain()
        except (OSError, ValueError, asyncio.TimeoutError):
            await asyncio.sleep(0.2)
        finally:
            if counted:
                logged_in.value -= 1
            writer.close()


def bots_main(port, bots, delay_ms, stop_flag, logged_in, peak, deadline):
    async def run():
        stop = asyncio.Event()
        tasks = [asyncio.create_task(remote_bot(port, name, token, delay_ms / 1000, random.Random(i), stop, counter))
                 for i, (name, token) in enumerate(bots)]
        while not stop_flag.is_set() and time.time() < deadline:
            peak.value = max(peak.value, counter.value)
            logged_in.value = counter.value
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)

    class Counter:
        value = 0
    counter = Counter()
    asyncio.run(run())


# ---- watchers ----------------------------------------------------------------------

async def watcher(port, delays, stop, counts):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/live/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    await writer.drain()
    counts[1] += 1
    buf = b""
    while not stop.is_set():
        try:
            chunk = await asyncio.wait_for(reader.read(65536), 0.5)
        except asyncio.TimeoutError:
            continue
        if not chunk:
            break
        now = time.time() * 1000.0
        counts[2] += 1
        buf += chunk
        end = buf.rfind(b"\n")
        if end < 0:
            continue
        lines, buf = buf[:end], buf[end + 1:]
        at = lines.find(MOVE)
        while at >= 0:
            m = T_FIELD.search(lines, lines.rfind(b"\n", 0, at) + 1)
            if m:
                delays.append(now - float(m.group(1)))
                counts[0] += 1
            at = lines.find(MOVE, at + len(MOVE))
    writer.close()


def watch_main(port, n, probe, connected, go, stop_flag, out, deadline):
    """One process's watchers: delays of move events from `go` until `stop_flag`, and
    this process's CPU seconds over that window."""
    async def run():
        delays = []
        counts = [0, 0, 0]  # moves, connections, reads
        stop = asyncio.Event()
        tasks = [asyncio.create_task(watcher(port, delays, stop, counts)) for _ in range(n)]
        told = 0
        while not go.is_set() and time.time() < deadline:
            with connected.get_lock():
                connected.value += counts[1] - told
            told = counts[1]
            await asyncio.sleep(0.05)
        delays.clear()
        counts[2] = 0
        cpu0, wall0 = time.process_time(), time.time()
        while not stop_flag.is_set() and time.time() < deadline:
            await asyncio.sleep(0.1)
        cpu, wall = time.process_time() - cpu0, time.time() - wall0
        reads = counts[2]
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        out.put({"delays": delays, "cpu": cpu, "wall": wall, "reads": reads, "watchers": n, "probe": probe})
    asyncio.run(run())


# ---- the run -----------------------------------------------------------------------

def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


def summary(delays):
    delays = sorted(delays)
    if not delays:
        return "no move events"
    return (f"median {percentile(delays, 0.5):.2f} ms, p99 {percentile(delays, 0.99):.2f} ms, "
            f"max {delays[-1]:.2f} ms ({len(delays)} events)")


def run(args, hus, tmp):
    bots = [(f"r{i:02d}", secrets.token_hex(32)) for i in range(1, args.bots + 1)]
    league = os.path.join(tmp, "load.toml")
    with open(league, "w") as f:
        f.write(league_text(bots, args.concurrency))
    # Every watcher comes from 127.0.0.1: the per-address bounds are raised to the whole.
    watchers = args.watchers + args.probes
    server = subprocess.Popen(
        [hus, "serve", league, "--listen", "127.0.0.1:0", "--bot-listen", "127.0.0.1:0", "--quiet",
         "--max-connections", str(watchers + 50), "--max-connections-per-address", str(watchers + 50),
         "--max-live", str(watchers), "--max-live-per-address", str(watchers)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs = []
    stop_flag = mp.Event()
    try:
        port = bot_port = None
        deadline = time.time() + 60
        while (port is None or bot_port is None) and time.time() < deadline:
            line = server.stderr.readline().decode()
            if not line:
                break
            m = re.search(r"dashboard on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
            m = re.search(r"bot port on 127\.0\.0\.1:(\d+)", line)
            if m:
                bot_port = int(m.group(1))
        if port is None or bot_port is None:
            sys.exit("serve_load.py: hus serve did not start")
        hard_deadline = time.time() + args.time_limit + 120
        logged_in, peak = mp.Value("i", 0), mp.Value("i", 0)
        bots_proc = mp.Process(target=bots_main, args=(bot_port, bots, args.delay_ms, stop_flag, logged_in, peak, hard_deadline))
        bots_proc.start()
        procs.append(bots_proc)
        connected, go, out = mp.Value("i", 0), mp.Event(), mp.Queue()
        shares = [(args.watchers // args.procs + (1 if i < args.watchers % args.procs else 0), False) for i in range(args.procs)]
        if args.probes:
            shares.append((args.probes, True))
        for n, probe in shares:
            if n > 0:
                p = mp.Process(target=watch_main, args=(port, n, probe, connected, go, stop_flag, out, hard_deadline))
                p.start()
                procs.append(p)
        wait_until = time.time() + 60
        while time.time() < wait_until and (peak.value < args.bots or connected.value < args.watchers + args.probes):
            time.sleep(0.1)
        if peak.value < args.bots or connected.value < args.watchers + args.probes:
            print(f"warning: only {peak.value} bots logged in and {connected.value} watchers connected", file=sys.stderr)
        status = get_json(port, "/api/status")
        start_sets, start = status["sets_done"], time.time()
        cpu_server0 = cpu_seconds(server.pid)
        cpu_bots0 = cpu_seconds(bots_proc.pid)
        idle0, all0 = machine_ticks()
        go.set()
        peak_rss = 0
        while time.time() - start < args.time_limit:
            time.sleep(0.5)
            peak_rss = max(peak_rss, memory_kib(server.pid).get("VmRSS", 0))
            status = get_json(port, "/api/status")
            if status["sets_done"] - start_sets >= args.sets:
                break
        elapsed = time.time() - start
        idle1, all1 = machine_ticks()
        cpu_server = cpu_seconds(server.pid) - cpu_server0
        cpu_bots = cpu_seconds(bots_proc.pid) - cpu_bots0
        load = os.getloadavg()
        mem = memory_kib(server.pid)
        sets = status["sets_done"] - start_sets
        counted = status["watchers"]
        stop_flag.set()
        results = [out.get(timeout=60) for _ in procs[1:]]
        for p in procs:
            p.join(30)
        return {
            "sets": sets, "elapsed": elapsed, "peak_rss": peak_rss, "mem": mem, "counted": counted,
            "bots_peak": peak.value, "results": results, "cpu_server": cpu_server, "cpu_bots": cpu_bots,
            "idle": (idle1 - idle0) / max(1, all1 - all0), "load": load, "started": status["started_this_run"],
        }
    finally:
        stop_flag.set()
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.terminate()
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hus", default=os.path.join(ROOT, "target", "release", "hus"))
    p.add_argument("--bots", type=int, default=50, help="remote bots, all logged in at once")
    p.add_argument("--watchers", type=int, default=200)
    p.add_argument("--procs", type=int, default=4, help="client processes the watchers are spread over")
    p.add_argument("--probes", type=int, default=2, help="more watchers, in a process of their own")
    p.add_argument("--delay-ms", type=int, default=100, help="each remote bot's wait before a move")
    p.add_argument("--concurrency", type=int, default=4, help="sets at once (the league's concurrency)")
    p.add_argument("--sets", type=int, default=8)
    p.add_argument("--time-limit", type=float, default=180.0)
    args = p.parse_args()
    if not (2 <= args.bots <= 200) or args.watchers > 2000 or args.time_limit > 900 or args.procs < 1:
        sys.exit("serve_load.py: 2 to 200 bots, at most 2000 watchers and 900 s, at least one process")
    hus = os.path.abspath(args.hus)
    with tempfile.TemporaryDirectory() as tmp:
        r = run(args, hus, tmp)
    watchers = [x for x in r["results"] if not x["probe"]]
    probes = [x for x in r["results"] if x["probe"]]
    all_delays = [d for x in r["results"] for d in x["delays"]]
    moves_per_s = len(all_delays) / max(1, args.watchers + args.probes) / r["elapsed"]
    print(f"hus serve load test: {args.bots} remote bots ({r['bots_peak']} logged in at once), "
          f"{args.watchers} + {args.probes} watchers ({r['counted']} counted by the server), "
          f"concurrency {args.concurrency}, {args.delay_ms} ms a move")
    print(f"sets finished: {r['sets']} in {r['elapsed']:.1f} s ({r['sets'] * 60 / r['elapsed']:.1f} per minute); "
          f"moves on the stream: {moves_per_s:.0f}/s, events delivered: "
          f"{len(all_delays) / r['elapsed']:.0f}/s")
    print(f"delay, every watcher: {summary(all_delays)}")
    print(f"delay, watchers ({args.procs} processes): {summary([d for x in watchers for d in x['delays']])}")
    if probes:
        print(f"delay, probes (a process of their own): {summary(probes[0]['delays'])}")
    busy = ", ".join(f"{100 * x['cpu'] / max(1e-9, x['wall']):.0f}%" for x in watchers)
    reads = sum(x["reads"] for x in r["results"])
    print(f"CPU over the window: server {100 * r['cpu_server'] / r['elapsed']:.0f}%, bots process "
          f"{100 * r['cpu_bots'] / r['elapsed']:.0f}%, watcher processes {busy}"
          + (f", probe process {100 * probes[0]['cpu'] / max(1e-9, probes[0]['wall']):.0f}%" if probes else "")
          + f" (100% = one core); machine idle {100 * r['idle']:.0f}%; "
          f"load average {r['load'][0]:.2f} {r['load'][1]:.2f} {r['load'][2]:.2f}")
    per = sorted(len(x["delays"]) / x["watchers"] for x in r["results"])
    print(f"client reads: {reads} ({len(all_delays) / max(1, reads):.2f} move events per read); move events "
          f"per watcher, by process: {', '.join(f'{n:.0f}' for n in per)}")
    print(f"server memory: VmRSS {r['mem'].get('VmRSS', 0) / 1024:.1f} MiB at the end, peak sampled "
          f"{r['peak_rss'] / 1024:.1f} MiB, VmHWM {r['mem'].get('VmHWM', 0) / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
