#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain, Python 3, Node and gcc,
# when it is missing: a Java compiler for the Java sample bot, Chromium for the
# browser test of the `hus replay --html` viewer, and bubblewrap for the sandbox tests
# (`--sandbox` runs bots under it), PostgreSQL's server binaries for the store and worker
# tests (a throw-away cluster per test run, see tests/support/pg.rs), and iproute2 for
# the workers in network namespaces, and OpenSSL (its command for the TLS tests'
# certificates, its headers for the build). Safe to run again.
set -euo pipefail

need=()
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
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
