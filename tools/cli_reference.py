"""docs/reference/cli.md: every command's ``--help``, as the installed commands print it.

    python tools/cli_reference.py --write    # regenerate the page's help blocks
    python tools/cli_reference.py --check    # exit 1 if the page is stale

Each ``<!-- cli-help: COMMAND ARGS -->`` marker on the page is followed by a
``text`` block holding what ``COMMAND ARGS --help`` prints (80 columns), so
the page changes whenever a flag, a default or a help text does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "cli.md"
BIN = Path(sys.executable).parent
_BLOCK = re.compile(r"(<!-- cli-help: (?P<command>[^>]+?) -->\n)```text\n.*?```\n", re.DOTALL)


def help_text(command: str) -> str:
    """What ``command --help`` prints, with the terminal width fixed."""
    program, *args = command.split()
    done = subprocess.run(
        [str(BIN / program), *args, "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
        timeout=120,
        check=True,
    )
    return done.stdout.rstrip() + "\n"


def render(page: str) -> str:
    """The page with every help block made current."""
    return _BLOCK.sub(lambda m: f"{m.group(1)}```text\n{help_text(m.group('command'))}```\n", page)


def commands(page: str) -> list[str]:
    return [m.group("command") for m in _BLOCK.finditer(page)]


def main() -> None:
    page = PAGE.read_text(encoding="utf-8")
    fresh = render(page)
    if "--write" in sys.argv:
        PAGE.write_text(fresh, encoding="utf-8")
    elif fresh != page:
        print("docs/reference/cli.md is stale: run `make cli-reference`", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
