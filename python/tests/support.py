"""What the package's tests share: where the repository and the `hus` binary are."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def hus_bin() -> str:
    """The `hus` binary: $HUS_BIN, else the workspace's debug build (`cargo test
    --workspace` has built it when tests/run.sh gets here), built when missing."""
    given = os.environ.get("HUS_BIN")
    if given:
        return given
    path = REPO / "target" / "debug" / "hus"
    if not path.exists():
        subprocess.run(["cargo", "build", "-q", "-p", "hus"], cwd=REPO, check=True)
    return str(path)
