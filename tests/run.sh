#!/usr/bin/env bash
# Runs every test of the project, from a fresh machine:
#   - installs what the tests need (tests/setup.sh),
#   - the Rust tests of every crate: unit, property, doc and end-to-end tests
#     (tests/e2e/, which play real bot processes through the `hus` binary),
#   - the sample bots' own tests (Python, which also drive the JS and Java bots).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup.sh
cargo test --workspace --no-fail-fast
python3 -m unittest discover -s sample-bots/python -t sample-bots/python
