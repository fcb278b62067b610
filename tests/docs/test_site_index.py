"""Every documentation page is in the site's navigation, in its sections, and on the home page."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SECTIONS = ["Get started", "Build", "Run", "Reference", "Internals and evidence"]


def pages() -> set[str]:
    return {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}


def nav() -> list[dict[str, object]]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    entries: list[dict[str, object]] = config["nav"]
    return entries


def navigated(entries: list[dict[str, object]]) -> list[str]:
    """Every page the navigation names, sections included."""
    found: list[str] = []
    for entry in entries:
        for value in entry.values():
            found += navigated(value) if isinstance(value, list) else [str(value)]
    return found


def test_every_page_is_in_the_navigation_once() -> None:
    listed = navigated(nav())
    assert sorted(listed) == sorted(set(listed)), "a page is in the navigation twice"
    assert set(listed) == pages()


def test_the_navigation_has_the_five_sections() -> None:
    titles = [title for entry in nav() for title in entry if title != "Home"]
    assert titles == SECTIONS


def test_the_home_page_links_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w/-]+\.md)(?:#[\w-]+)?\)", index))
    assert linked == pages() - {"index.md"}
