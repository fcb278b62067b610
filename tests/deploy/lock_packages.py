"""The packages uv.lock installs for a selection (`uv export`: the lock alone, no network)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".tools" / "bin" / "uv"


def packages(*selection: str) -> set[str]:
    """Package names ``uv sync --locked <selection>`` would install (workspace members left out)."""
    command = [str(UV), "export", "--locked", "--no-hashes", "--no-emit-workspace", *selection]
    exported = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return {
        re.split(r"[=\s\[;]", line.strip(), maxsplit=1)[0]
        for line in exported.stdout.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "-e", "."))
    }
