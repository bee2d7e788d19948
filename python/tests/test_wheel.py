"""The abi3 wheel that tests/setup.sh built with maturin (target/python-wheel/) installs
and works where there is no Rust toolchain: in a fresh virtual environment of every
CPython 3.9 or later on the machine, on a PATH without cargo, nothing else installed."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from support import REPO

WHEEL_DIR = REPO / "target" / "python-wheel"

# What the fresh environment runs: the engine, a search, pickling, the bot helper, the
# version; numpy is not there, so neither are the environments.
EXERCISE = r"""
import io, json, pickle, sys
import hus, hus.bot, hus.openings
assert hus.__file__.startswith(sys.prefix), hus.__file__
game = hus.Game()
game.play(7)
assert pickle.loads(pickle.dumps(game)) == game
assert hus.perft(hus.Position.start("hus", 8), 3) == [12, 144, 1320]
wins, draws, losses = hus.playouts(game, 200, seed=1, threads=2)
assert wins + draws + losses == 200
assert len(hus.openings.book("hus-8")) == 64
hello = {"type": "hello", "protocol": 1, "rules": {"preset": "hus", "width": 8}}
start = [0, 0, 0, 0] + [2] * 12
turn = {"type": "turn", "game": 1, "ply": 0, "you": start, "opponent": start, "legal": list(range(4, 16))}
out = io.StringIO()
hus.bot.run(lambda p: p.legal_moves()[-1], stdin=io.StringIO(json.dumps(hello) + "\n" + json.dumps(turn) + "\n"), stdout=out)
assert out.getvalue().splitlines()[-1] == '{"type":"move","pit":15}', out.getvalue()
print(hus.__version__, "%d.%d" % sys.version_info[:2])
"""


def the_wheel() -> Path:
    """tests/setup.sh's wheel, or one built now with maturin when it is not there."""
    found = sorted(WHEEL_DIR.glob("hus-*-abi3-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "maturin", "build", "--quiet", "--release", "--strip",
             "-m", str(REPO / "python" / "Cargo.toml"), "--out", str(WHEEL_DIR)],
            check=True,
            timeout=1200,
        )
        found = sorted(WHEEL_DIR.glob("hus-*-abi3-*.whl"))
    if len(found) != 1:
        raise AssertionError(f"expected one wheel in {WHEEL_DIR}, found {[p.name for p in found]}")
    return found[0]


def interpreters() -> dict[str, str]:
    """Every CPython 3.9 or later on this machine, by version: this one, the system's,
    and pyenv's."""
    candidates = [sys.executable, *glob.glob("/usr/bin/python3.*"), *glob.glob("/usr/local/bin/python3.*")]
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates += sorted(glob.glob(f"{pyenv}/versions/*/bin/python3"))
    found: dict[str, str] = {}
    for exe in candidates:
        if not os.access(exe, os.X_OK) or exe.endswith("-config"):
            continue
        try:
            done = subprocess.run(
                [exe, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2], sys.implementation.name)"],
                capture_output=True, text=True, timeout=60,
            )
        except OSError:
            continue
        words = done.stdout.split()
        if done.returncode == 0 and len(words) == 2 and words[1] == "cpython":
            major, minor = map(int, words[0].split("."))
            if (major, minor) >= (3, 9):
                found.setdefault(words[0], exe)
    return found


class WheelTest(unittest.TestCase):
    def test_the_abi3_wheel_installs_and_works_without_cargo(self):
        wheel = the_wheel()
        self.assertRegex(wheel.name, r"^hus-[0-9.]+-cp39-abi3-(manylinux|linux)_.*\.whl$")
        versions = interpreters()
        self.assertIn("%d.%d" % sys.version_info[:2], versions)
        for version, exe in sorted(versions.items()):
            with self.subTest(python=version), tempfile.TemporaryDirectory() as tmp:
                venv = Path(tmp) / "venv"
                subprocess.run([exe, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
                # Installed by this Python's pip into the fresh environment: no pip there,
                # no index, no build: the wheel as it is.
                subprocess.run(
                    [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                     "-q", "--no-index", "--no-deps", "--disable-pip-version-check", str(wheel)],
                    check=True,
                    timeout=300,
                    env={k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"},
                )
                # The environment's own bin alone: the exercise runs no other program,
                # and the machine may well have a Rust toolchain under /usr/bin (Debian's
                # cargo, which tests/setup.sh installs for uploaded Rust bots).
                path = str(venv / "bin")
                self.assertIsNone(shutil.which("cargo", path=path), "cargo must not be on the PATH")
                self.assertIsNone(shutil.which("rustc", path=path), "rustc must not be on the PATH")
                env = {"PATH": path, "HOME": tmp, "LANG": "C.UTF-8"}
                done = subprocess.run(
                    [str(venv / "bin" / "python"), "-c", EXERCISE],
                    cwd=tmp, env=env, capture_output=True, text=True, timeout=300,
                )
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(done.stdout.split(), [wheel.name.split("-")[1], version])


if __name__ == "__main__":
    unittest.main()
