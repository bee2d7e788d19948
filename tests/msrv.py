#!/usr/bin/env python3
"""Checks that the workspace's `rust-version` is true for its dependencies.

The code's own use of the standard library is checked by clippy's `incompatible_msrv`
lint (every member inherits `rust-version` from the workspace, and CI runs clippy with
`-D warnings`); what clippy cannot see is a dependency that needs a newer compiler. This
reads `cargo metadata` for this machine's target and fails when a package in the build
declares a `rust-version` above the workspace's, or a member does not inherit it.
"""
import json
import subprocess
import sys


def version(text):
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    host = next(
        line.split(": ", 1)[1]
        for line in subprocess.run(
            ["rustc", "-vV"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        if line.startswith("host: ")
    )
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", host],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    members = set(meta["workspace_members"])
    in_build = {node["id"] for node in meta["resolve"]["nodes"]}
    declared = {p["rust_version"] for p in meta["packages"] if p["id"] in members}
    if len(declared) != 1 or None in declared:
        sys.exit(f"msrv: every workspace member must inherit rust-version, found {sorted(map(str, declared))}")
    (ours,) = declared
    over = sorted(
        (version(p["rust_version"]), p["name"], p["rust_version"])
        for p in meta["packages"]
        if p["id"] in in_build and p["id"] not in members and p.get("rust_version")
        and version(p["rust_version"]) > version(ours)
    )
    if over:
        needs = ", ".join(f"{name} {v}" for _, name, v in over)
        sys.exit(f"msrv: rust-version = \"{ours}\" but these dependencies need more: {needs}")
    print(f"msrv: rust-version {ours} holds for {len(in_build) - len(members)} dependencies")


if __name__ == "__main__":
    main()
