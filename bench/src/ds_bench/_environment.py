"""What the numbers were measured on: machine, versions, data directory."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import psutil

from ds_bench.servers import NODE_DIR

_REPO = Path(__file__).resolve().parents[3]


def _first_line(argv: list[str]) -> str:
    try:
        # A busy machine can take many seconds to start Python and import a server.
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    except OSError:
        return "missing"
    except subprocess.TimeoutExpired:
        return "unknown"
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


def _package_version(name: str) -> str:
    path = NODE_DIR / "node_modules" / name / "package.json"
    try:
        version: str = json.loads(path.read_text())["version"]
    except (OSError, KeyError, ValueError):
        return "missing"
    return version


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _filesystem(path: Path) -> str:
    best = ""
    fstype = "unknown"
    resolved = str(path.resolve())
    for part in psutil.disk_partitions(all=True):
        mount = part.mountpoint
        if resolved.startswith(mount) and len(mount) > len(best):
            best, fstype = mount, part.fstype
    return fstype


def describe(data_root: Path) -> dict[str, object]:
    """Machine, versions and data directory of this run, for the results file."""
    rev = _first_line(["git", "-C", str(_REPO), "rev-parse", "--short", "HEAD"])
    dirty = _first_line(["git", "-C", str(_REPO), "status", "--porcelain", "--", "server"])
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count() or 1,
        "memory_gib": round(psutil.virtual_memory().total / 1024**3, 1),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "node": _first_line(["node", "--version"]),
        "wrk": _first_line(["wrk", "-v"]),
        "node_server": _package_version("@durable-streams/server"),
        "node_client": _package_version("@durable-streams/client"),
        "ds_server_revision": rev + ("+local changes" if dirty not in ("", "unknown") else ""),
        # What the server processes will run: `make bench` puts the compiled build first.
        "ds_server_build": _first_line([sys.executable, "-m", "ds_server", "--version"]),
        "data_root": str(data_root),
        "data_root_fs": _filesystem(data_root),
    }
