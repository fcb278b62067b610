"""docs/reference/cli.md holds what every command's --help prints now."""

from __future__ import annotations

import importlib.util
import sys

from doc_facts import ROOT, commands

spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "tools" / "cli_reference.py")
assert spec is not None
assert spec.loader is not None
cli_reference = importlib.util.module_from_spec(spec)
sys.modules["cli_reference"] = cli_reference
spec.loader.exec_module(cli_reference)


def test_the_committed_page_is_current() -> None:
    page = cli_reference.PAGE.read_text(encoding="utf-8")
    assert cli_reference.render(page) == page, "docs/reference/cli.md is stale: make cli-reference"


def test_every_installed_command_is_on_the_page() -> None:
    page = cli_reference.PAGE.read_text(encoding="utf-8")
    listed = {command.split()[0] for command in cli_reference.commands(page)}
    assert listed == set(commands())
