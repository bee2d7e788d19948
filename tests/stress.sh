#!/usr/bin/env bash
# Proves that the suite passes on a loaded machine, every time: clones this checkout's
# committed HEAD into a temporary directory, builds it, then runs the whole suite
# (tests/run.sh) RUNS times in a row (default 5) while busy processes keep every core
# busy.
#
#   bash tests/stress.sh [RUNS]
#
# The load is one busy process per core (HUS_STRESS_LOAD=N for another count):
# Debian's stress-ng (`stress-ng --cpu N`), installed with apt when it is missing (as
# root, or through sudo), or else plain bash busy loops. The load is stopped whenever
# the script ends: success, failure, Ctrl-C or SIGTERM.
#
# Prints each run's result and wall time, then a summary; exits 1 if any run failed
# (its log is kept, and its path printed), 2 if the clone or the build failed. Only
# committed changes are tested: the clone holds HEAD.
set -euo pipefail

runs=${1:-5}
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: bash tests/stress.sh [RUNS]   (RUNS: 1 or more, default 5)" >&2
    exit 2
fi
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
head=$(git -C "$repo" rev-parse HEAD)
cores=$(nproc)
load=${HUS_STRESS_LOAD:-$cores}

work=$(mktemp -d "${TMPDIR:-/tmp}/hus-stress.XXXXXX")
load_pids=()
keep=0

stop_load() {
    local pid
    for pid in "${load_pids[@]}"; do
        # Each load process leads its own process group (setsid): stress-ng's workers
        # go with it.
        kill -TERM -- "-$pid" 2>/dev/null || true
    done
    for pid in "${load_pids[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 -- "-$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL -- "-$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    load_pids=()
}

cleanup() {
    stop_load
    if [ "$keep" -eq 1 ]; then
        rm -rf "$work/hus/target"
        echo "stress: logs kept in $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'echo "stress: interrupted" >&2; exit 130' INT TERM

if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
    echo "stress: note: uncommitted changes in $repo are not tested (the clone holds HEAD only)" >&2
fi

echo "stress: cloning $repo at ${head:0:12} into $work/hus"
git clone --quiet --no-checkout "$repo" "$work/hus"
# HEAD of the checkout (a worktree's own HEAD, or a detached one) may be on no branch
# the clone fetched: fetch it by name from the checkout itself.
git -C "$work/hus" fetch --quiet "$repo" HEAD
git -C "$work/hus" checkout --quiet --detach "$head"

cd "$work/hus"
export CARGO_TARGET_DIR="$work/hus/target"
echo "stress: building (tests, and the release build of the Rust sample bot)"
build_start=$(date +%s)
if ! { bash tests/setup.sh && cargo test --workspace --no-run -q &&
        cargo build --release -q -p alphabeta-bot; } >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log" >&2
    echo "stress: the build failed" >&2
    keep=1
    exit 2
fi
echo "stress: built in $(($(date +%s) - build_start)) s"

if ! command -v stress-ng >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo -n"; fi
    echo "stress: installing stress-ng" >&2
    { $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends stress-ng; } \
        >"$work/apt.log" 2>&1 || echo "stress: stress-ng could not be installed: busy loops instead" >&2
fi
if command -v stress-ng >/dev/null 2>&1; then
    setsid stress-ng --cpu "$load" --quiet 2>/dev/null &
    load_pids+=($!)
    load_text="stress-ng --cpu $load"
else
    for ((i = 0; i < load; i++)); do
        setsid bash -c 'while :; do :; done' &
        load_pids+=($!)
    done
    load_text="$load bash busy loops"
fi
echo "stress: load: $load_text on $cores cores; $runs runs of bash tests/run.sh"

failed=0
total=0
for ((run = 1; run <= runs; run++)); do
    log="$work/run-$run.log"
    start=$(date +%s)
    if bash tests/run.sh >"$log" 2>&1; then result=pass; else result=FAIL; fi
    secs=$(($(date +%s) - start))
    total=$((total + secs))
    echo "run $run/$runs: $result in $secs s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    if [ "$result" = FAIL ]; then
        failed=$((failed + 1))
        keep=1
        grep -E '^test .* FAILED$|^test result: FAILED|panicked at|^FAIL|^ERROR' "$log" | head -n 20 || true
        echo "  log: $log"
    fi
done

echo "stress: $((runs - failed)) of $runs runs passed under $load_text ($total s in all)"
[ "$failed" -eq 0 ]
