"""Every documentation page is in the site's navigation and on the home page."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def pages() -> set[str]:
    return {path.name for path in DOCS.glob("*.md")}


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    navigated = {page for entry in config["nav"] for page in entry.values()}
    assert navigated == pages()


def test_the_home_page_links_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w-]+\.md)(?:#[\w-]+)?\)", index))
    assert linked == pages() - {"index.md"}
