#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain, Python 3, Node and gcc,
# when it is missing: a Java compiler for the Java sample bot, Chromium for the
# browser test of the `hus replay --html` viewer, and bubblewrap for the sandbox tests
# (`--sandbox` runs bots under it), PostgreSQL's server binaries for the store and worker
# tests (a throw-away cluster per test run, see tests/support/pg.rs), and iproute2 for
# the workers in network namespaces, Debian's cargo for the Rust upload test, OpenSSL (its command for the TLS tests'
# certificates, its headers for the build); and the Python package `hus` with what its
# tests need (at the end). Safe to run again.
set -euo pipefail

need=()
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
# Debian's Rust toolchain under /usr, which the sandbox's user can run: the upload tests
# build a Rust bot in the sandbox (rustup's toolchain under /root is not visible there).
[ -x /usr/bin/cargo ] || need+=(cargo)
# The store's TLS tests make their certificates with the openssl command; the build
# links OpenSSL (the store's TLS client), which the Rust machine's image has.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
pkg-config --exists openssl 2>/dev/null || need+=(libssl-dev pkg-config)

if [ ${#need[@]} -gt 0 ]; then
    echo "tests/setup.sh: installing ${need[*]}" >&2
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The Python package `hus` (python/, docs/python.md) and what its tests need, from PyPI:
# maturin builds it, pettingzoo, gymnasium and numpy are its `env` extra. maturin builds
# one abi3 wheel (every CPython from 3.9 on) into target/python-wheel/, and pip installs
# that wheel: python/tests/test_wheel.py installs the same file in fresh virtual
# environments where cargo is not on the PATH. Both are done again only when the
# package's sources or the engine's changed since the last install (a hash of them is
# kept beside the installed package), or the wheel is gone.
cd "$(dirname "$0")/.."
py_need=()
for module in maturin pettingzoo gymnasium numpy; do
    python3 -c "import $module" >/dev/null 2>&1 || py_need+=("$module")
done
if [ ${#py_need[@]} -gt 0 ]; then
    echo "tests/setup.sh: pip-installing ${py_need[*]}" >&2
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "${py_need[@]}"
fi
py_stamp=$(find python/Cargo.toml python/pyproject.toml python/src python/python engine/Cargo.toml engine/src Cargo.lock \
    -type f ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
py_installed=$(python3 -c 'import hus._hus, pathlib; print((pathlib.Path(hus.__file__).parent / "build-stamp").read_text())' 2>/dev/null || true)
py_wheels=target/python-wheel
if [ "$py_installed" != "$py_stamp" ] || ! compgen -G "$py_wheels/hus-*-abi3-*.whl" >/dev/null; then
    echo "tests/setup.sh: building the Python package hus (python/) into an abi3 wheel and installing it" >&2
    rm -rf "$py_wheels"
    python3 -m maturin build --quiet --release --strip -m python/Cargo.toml --out "$py_wheels"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --force-reinstall --no-deps "$py_wheels"/hus-*-abi3-*.whl
    python3 -c 'import hus, pathlib, sys; (pathlib.Path(hus.__file__).parent / "build-stamp").write_text(sys.argv[1])' "$py_stamp"
fi
