#!/usr/bin/env bash
# Runs every test of the project, from a fresh machine:
#   - installs what the tests need (tests/setup.sh),
#   - checks that Cargo.toml's rust-version holds for every dependency (tests/msrv.py),
#   - the Rust tests of every crate: unit, property, doc and end-to-end tests
#     (tests/e2e/, which play real bot processes through the `hus` binary),
#   - the sample bots' own tests (Python, which also drive the JS and Java bots),
#   - the Python package's tests (python/tests/: the engine through `import hus`, its
#     bot helper and environments, against `hus line`, `hus check-bot` and `hus match`).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup.sh
# The workspace's rust-version is true: no dependency needs a newer compiler (clippy's
# incompatible_msrv lint, run by CI with -D warnings, checks the code's own use of std).
python3 tests/msrv.py
cargo test --workspace --no-fail-fast
python3 -m unittest discover -s sample-bots/python -t sample-bots/python
python3 -m unittest discover -s python/tests -t python/tests
