#!/usr/bin/env bash
# tests/bench/throughput.sh: how much the referee costs per ply, next to the cost of a
# bare pipe round trip.
#
# Usage:
#   tests/bench/throughput.sh [--runs R] [--games G] [--round-trips N] [--pin CPU] [--json]
#
#   --runs R         repetitions (default 5); the figures reported are medians over them
#   --games G        games in each match (default 400)
#   --round-trips N  timed round trips of the pipe example (default 20000)
#   --pin CPU        run the pipe example and the matches under `taskset -c CPU`, so
#                    every process shares one core (see below); default: not pinned
#   --json           print one JSON object on stdout instead of the table
#
# What it does:
#   1. Builds the release binaries and examples:
#        cargo build --release -p hus -p referee -p alphabeta-bot --bins --examples
#      (cargo's output goes to stderr).
#   2. Runs R rounds, each doing, one after the other (interleaved, so that a change in
#      the machine's load hits both alike):
#      a. the physical floor, referee/examples/pipe_roundtrip.rs: a parent and an echo
#         child joined by two pipes, a ~150-byte line (a `turn` message) out and back,
#         N timed round trips after 1000 warm-up; it gives the median in microseconds.
#      b. one match of G games between two instant bots:
#           target/release/hus match "target/release/alphabeta-bot --first-legal" \
#             "target/release/alphabeta-bot --first-legal" --games G --json \
#             --log-dir <temporary dir> --quiet
#         timed wall-clock from outside (date +%s%N). Plies are the sum of `plies` over
#         `games` in the JSON summary; the referee's peak RSS is its
#         `referee_max_rss_kib`.
#      Per round: plies/s = plies / wall time, and µs per ply = wall time / plies.
#   3. Reports the medians over the R rounds: the pipe round trip (the median of the
#      per-round medians), referee plies/s, µs per ply, the ratio of the median µs per
#      ply to the median pipe round trip, and the referee's peak RSS in MiB.
#
# Read the figures with this in mind:
#   - µs per ply is an upper bound of the referee's cost per ply: the wall time also
#     holds the start-up of the referee and both bots, the hello/ready handshake, the
#     per-game `game` and `result` messages, `bye`, writing the log (to a temporary dir
#     under $TMPDIR), and the bots' own time to choose a move (tiny with --first-legal).
#   - The floor is one round trip per ply: in each ply the referee sends `turn` to the
#     bot on move and reads its `move`. So a ratio of 1 would be a referee that costs
#     nothing beyond the pipes.
#   - The pipe figure is a median of single round trips, the match figure a mean over a
#     whole match (which includes slow outliers): both are medians over the rounds.
#   - On a small shared machine the figures move with the load: compare runs made on
#     the same machine, close together. The load average before and after is printed.
#   - Where the processes run matters as much as what they do. A line that wakes a
#     process on another core can cost far more (tens of µs in a VM, where an idle vCPU
#     has to be woken) than one that wakes it on the same core (a few µs), and the
#     scheduler's choice varies from run to run. With --pin CPU both the floor and the
#     matches run on one core: steadier figures, and a ratio that compares like with
#     like (the referee's and the bots' CPU time per ply against one same-core round
#     trip). Unpinned figures are what a user gets.
#
# Targets, for context: at least 20,000 plies/s in one match, a cost per ply within 3x
# the pipe round trip, and a referee under 20 MB resident.
#
# Needs bash, cargo, GNU date and python3. Exits non-zero if a match fails.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

runs=5
games=400
round_trips=20000
json=false
pin=""
while [[ $# -gt 0 ]]; do
    case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --games) games="$2"; shift 2 ;;
    --round-trips) round_trips="$2"; shift 2 ;;
    --pin) pin="$2"; shift 2 ;;
    --json) json=true; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "throughput.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
for n in "$runs" "$games" "$round_trips"; do
    if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
        echo "throughput.sh: $n is not a positive integer" >&2
        exit 2
    fi
done

if [[ -n "$pin" ]] && ! [[ "$pin" =~ ^[0-9]+$ ]]; then
    echo "throughput.sh: --pin takes a CPU number" >&2
    exit 2
fi
run=()
[[ -z "$pin" ]] || run=(taskset -c "$pin")

cargo build --release -p hus -p referee -p alphabeta-bot --bins --examples >&2

tmp="$(mktemp -d "${TMPDIR:-/tmp}/hus-bench.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

hus=target/release/hus
bot="target/release/alphabeta-bot --first-legal"
pipe=target/release/examples/pipe_roundtrip

read -r load_start _ </proc/loadavg
for ((i = 1; i <= runs; i++)); do
    "${run[@]}" "$pipe" "$round_trips" --json >"$tmp/pipe.$i.json"
    mkdir "$tmp/logs"
    start=$(date +%s%N)
    "${run[@]}" "$hus" match "$bot" "$bot" --games "$games" --json --log-dir "$tmp/logs" --quiet \
        >"$tmp/match.$i.json"
    end=$(date +%s%N)
    echo $((end - start)) >"$tmp/wall.$i"
    rm -rf "$tmp/logs"
    $json || echo "round $i/$runs done" >&2
done
read -r load_end _ </proc/loadavg

python3 - "$tmp" "$runs" "$games" "$round_trips" "$json" "$pin" "$load_start" "$load_end" <<'EOF'
import json, statistics, sys

tmp, runs, games, round_trips, as_json = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "true"
pin, load_start, load_end = sys.argv[6] or None, float(sys.argv[7]), float(sys.argv[8])
rows = []
for i in range(1, runs + 1):
    pipe = json.load(open(f"{tmp}/pipe.{i}.json"))
    match = json.load(open(f"{tmp}/match.{i}.json"))
    wall_ns = int(open(f"{tmp}/wall.{i}").read())
    plies = sum(g["plies"] for g in match["games"])
    if len(match["games"]) != games or plies == 0:
        sys.exit(f"throughput.sh: round {i}: {len(match['games'])} games, {plies} plies")
    rss = match.get("referee_max_rss_kib")
    rows.append({
        "pipe_us": pipe["median_us"],
        "wall_s": wall_ns / 1e9,
        "plies": plies,
        "plies_per_s": plies / (wall_ns / 1e9),
        "us_per_ply": wall_ns / 1e3 / plies,
        "rss_mib": rss / 1024 if rss is not None else None,
        "faults": len(match["faults"]),
    })

med = lambda key: statistics.median(r[key] for r in rows)
pipe_us = med("pipe_us")
us_per_ply = med("us_per_ply")
rss = [r["rss_mib"] for r in rows if r["rss_mib"] is not None]
summary = {
    "runs": runs,
    "games": games,
    "plies_per_match": med("plies"),
    "pipe_round_trips": round_trips,
    "pipe_round_trip_us": round(pipe_us, 3),
    "referee_plies_per_s": round(med("plies_per_s")),
    "us_per_ply": round(us_per_ply, 3),
    "ratio_us_per_ply_to_pipe": round(us_per_ply / pipe_us, 2),
    "referee_max_rss_mib": round(statistics.median(rss), 1) if rss else None,
    "match_wall_s": round(med("wall_s"), 3),
    "faults": sum(r["faults"] for r in rows),
    "pinned_cpu": int(pin) if pin else None,
    "loadavg_1min": [load_start, load_end],
    "per_run": rows,
}
if as_json:
    print(json.dumps(summary))
    sys.exit(0)
print(f"{runs} rounds; match: {games} games, alphabeta-bot --first-legal vs itself; pipe: {round_trips} round trips")
print(f"{'pinned to CPU ' + pin if pin else 'not pinned'}; 1-min load average {load_start:.2f} before, {load_end:.2f} after")
print()
print(f"{'round':>6} {'pipe µs':>8} {'plies':>7} {'wall s':>7} {'plies/s':>8} {'µs/ply':>7} {'ratio':>6} {'RSS MiB':>8}")
for i, r in enumerate(rows, 1):
    rss_text = f"{r['rss_mib']:.1f}" if r["rss_mib"] is not None else "?"
    print(f"{i:>6} {r['pipe_us']:>8.2f} {r['plies']:>7} {r['wall_s']:>7.3f} {r['plies_per_s']:>8.0f} "
          f"{r['us_per_ply']:>7.2f} {r['us_per_ply'] / r['pipe_us']:>6.2f} {rss_text:>8}")
rss_text = f"{summary['referee_max_rss_mib']:.1f}" if rss else "?"
print(f"{'median':>6} {pipe_us:>8.2f} {summary['plies_per_match']:>7.0f} {summary['match_wall_s']:>7.3f} "
      f"{summary['referee_plies_per_s']:>8} {us_per_ply:>7.2f} {summary['ratio_us_per_ply_to_pipe']:>6.2f} {rss_text:>8}")
print()
print(f"pipe round trip (median of medians): {pipe_us:.2f} µs")
print(f"referee: {summary['referee_plies_per_s']} plies/s, {us_per_ply:.2f} µs per ply "
      f"(wall time / plies: includes process start-up and the per-game messages)")
print(f"µs per ply / pipe round trip: {summary['ratio_us_per_ply_to_pipe']:.2f}")
print(f"referee peak RSS: {rss_text} MiB")
if summary["faults"]:
    print(f"warning: {summary['faults']} faults in the matches: the figures are not comparable")
EOF
