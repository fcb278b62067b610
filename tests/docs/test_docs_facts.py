"""Every setting, make target, port, flag, file and module the docs name exists."""

from __future__ import annotations

import re
import sys

import pytest
from doc_facts import ROOT, Claim, claims, code_lines, holds

sys.path.insert(0, str(ROOT / "tools"))
import config_reference

PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])


def known_settings() -> frozenset[str]:
    """Every variable of every settings class the configuration page documents."""
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    names: set[str] = set()
    for target in re.findall(r"<!-- settings-table: ([\w.]+:\w+) -->", page):
        for variable_names, _info in config_reference.variables(config_reference.load(target)):
            names.update(variable_names)
    return frozenset(names)


def every_claim() -> list[Claim]:
    return [
        claim
        for page in PAGES
        for claim in claims(page.relative_to(ROOT).as_posix(), page.read_text(encoding="utf-8"))
    ]


def test_what_the_docs_name_exists() -> None:
    settings = known_settings()
    stale = [claim for claim in every_claim() if not holds(claim, settings)]
    assert not stale, f"{len(stale)} stale statements:\n" + "\n".join(map(str, stale))


def test_the_checks_see_a_real_number_of_claims() -> None:
    # Guards the extraction itself: a broken pattern would find nothing to check.
    kinds = {claim.kind for claim in every_claim()}
    assert {"setting", "make target", "port", "flag", "path", "module", "test"} <= kinds


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("run `make dev` now", [("make target", "dev")]),
        ("make it so, `make PORT=8081 dev`", [("make target", "dev"), ("make variable", "PORT")]),
        ("```\nds-sync --bogus-flag\n```", [("flag", "ds-sync --bogus-flag")]),
        ("`curl --data x localhost:8080/v1/stream/a`", [("port", "8080")]),
        ("see `server/src/ds_server/app.py`", [("path", "server/src/ds_server/app.py")]),
        ("`ds_server.edge.references`", [("module", "ds_server.edge.references")]),
        ("set `DS_SYNC__TABLES=items`", [("setting", "DS_SYNC__TABLES")]),
        ("a stream `sessions/room-1`", []),
    ],
)
def test_claims_are_read_from_code_only(markdown: str, expected: list[tuple[str, str]]) -> None:
    found = [(claim.kind, claim.text) for claim in claims("page.md", markdown)]
    assert found == expected


def test_prose_is_not_code() -> None:
    assert list(code_lines("make the most of DS_THING and server/x.py")) == []


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("make target", "dev", True),
        ("make target", "no-such-target", False),
        ("path", "server/src/ds_server/app.py", True),
        ("path", "routes/refs.fork_source_name", False),
        ("path", "edge/references.fork_source_name", True),
        ("module", "ds_server.edge.references", True),
        ("module", "ds_server.routes.refs", False),
        ("flag", "ds-server --no-such-flag", False),
        ("setting", "DS_NO_SUCH_SETTING", False),
    ],
)
def test_checks_tell_true_from_stale(kind: str, text: str, expected: bool) -> None:
    claim = Claim(kind, text, "page.md", 1, text)
    assert holds(claim, known_settings()) is expected


def test_every_make_target_with_help_is_in_the_development_targets_table() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    helped = set(re.findall(r"^([a-zA-Z0-9_-]+):.*## ", makefile, flags=re.MULTILINE))
    page = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    table = "\n".join(line for line in page.splitlines() if line.startswith("|"))
    assert sorted(helped - set(re.findall(r"`make ([a-z0-9-]+)`", table))) == []
