"""The packages uv.lock installs for a selection (`uv export`: the lock alone, no network)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".tools" / "bin" / "uv"


def _export(*selection: str) -> list[str]:
    command = [str(UV), "export", "--locked", "--no-hashes", *selection]
    exported = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return [line.strip() for line in exported.stdout.splitlines() if line.strip()]


def packages(*selection: str) -> set[str]:
    """Package names ``uv sync --locked <selection>`` would install (workspace members left out)."""
    return {
        re.split(r"[=\s\[;]", line, maxsplit=1)[0]
        for line in _export("--no-emit-workspace", *selection)
        if not line.startswith(("#", "-e", "."))
    }


def members(*selection: str) -> set[str]:
    """The workspace members (their directories) ``uv sync --locked <selection>`` installs."""
    return {
        line.removeprefix("-e").strip().removeprefix("./")
        for line in _export(*selection)
        if line.startswith(("-e", "./"))
    }
