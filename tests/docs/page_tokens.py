"""The token a documentation page tells its reader to mint, minted by the page's own command."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def the_pages_token(page: Path) -> str:
    """Run the page's ``$(.venv/bin/ds-token ...)`` command and return what it prints."""
    command = re.search(r"\$\(\.venv/bin/(ds-token [^)]*)\)", page.read_text(encoding="utf-8"))
    assert command is not None, f"{page.name} no longer shows how to mint its token"
    program, *args = command.group(1).split()
    executable = Path(sys.executable).with_name(program)
    return subprocess.run(
        [str(executable), *args], capture_output=True, text=True, check=True
    ).stdout.strip()
