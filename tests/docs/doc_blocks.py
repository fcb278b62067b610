"""The code blocks of the pages that teach (Get started and Build), and how each one runs.

Every fenced block of those pages has a language, and the language says
what the test suite does with it (``e2e/test_e2e_docs.py`` runs them, in
page order, against the stack ``make dev`` starts):

- ``bash``: run in one shell per page (variables carry over), from a
  checkout whose ``.dev`` is the running stack's state;
- ``python``: run in one namespace per page, with the shell's environment
  (or by the page's own test, where ``PYTHON_RUN_BY`` names one);
- ``typescript``: compiled by TypeScript and run by Node with the official
  packages of ``tests/node``;
- ``sql``: run on the stack's Postgres;
- ``json``: parsed;
- ``text``: output shown to the reader, never run.

A comment on the line before a block changes that: ``<!-- docs-runner:
the stack -->`` marks ``make dev`` itself (the suite's stack stands for
it; ``stack/tests/test_dev.py`` runs the command), ``<!-- docs-runner:
background -->`` a command that serves until Ctrl-C (it runs in the
background until the page's last block has run), and ``<!-- docs-runner:
not run: REASON -->`` a block that cannot run here (each one is listed in
``NOT_RUN``, so a new one is a decision, not an accident).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TAUGHT_SECTIONS = ("Get started", "Build")
RUNNABLE = frozenset({"bash", "python", "typescript", "sql", "json"})
LANGUAGES = RUNNABLE | {"text"}

# Pages whose Python blocks a test of their own runs (it asserts more than that they run).
PYTHON_RUN_BY = {
    "tutorial-chat.md": "e2e/test_e2e_tutorial.py",
    "sessions.md": "tests/docs/test_sessions_guide.py",
    "sdk.md": "tests/docs/test_sdk_guide.py",
}

# (page, first line of the block): the blocks no test runs, each with its reason on the page.
NOT_RUN = frozenset(
    {
        (
            "sessions.md",
            "// Served from the gateway's origin (or allow yours in DS_HTTP__CORS_ORIGINS).",
        ),
        ("build/ai-chat.md", 'import { useChat } from "@ai-sdk/react"'),
        (
            "sdk.md",
            "pip install ./client        # durable-sessions, with durable-streams, httpx, httpx-sse, msgspec",  # noqa: E501
        ),
    }
)

_FENCE = re.compile(r"^```(\S*)\s*$")
_DIRECTIVE = re.compile(r"^<!-- docs-runner: (.+?) -->$")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block of a page."""

    page: str
    line: int  # of its opening fence
    language: str
    code: str
    directive: str | None

    @property
    def first_line(self) -> str:
        return self.code.splitlines()[0] if self.code else ""

    @property
    def is_stack(self) -> bool:
        return self.directive == "the stack"

    @property
    def in_background(self) -> bool:
        return self.directive == "background"

    @property
    def not_run_reason(self) -> str | None:
        if self.directive is not None and self.directive.startswith("not run: "):
            return self.directive.removeprefix("not run: ")
        return None

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.language or 'no language'})"


def blocks(page: str, markdown: str) -> list[Block]:
    """The fenced blocks of one page, in order, each with the directive just above it."""
    found: list[Block] = []
    lines = markdown.splitlines()
    number = 0
    while number < len(lines):
        opening = _FENCE.match(lines[number])
        if opening is None:
            number += 1
            continue
        start = number
        number += 1
        body: list[str] = []
        while number < len(lines) and lines[number].rstrip() != "```":
            body.append(lines[number])
            number += 1
        number += 1
        above = lines[start - 1].strip() if start > 0 else ""
        directive = _DIRECTIVE.match(above)
        found.append(
            Block(
                page,
                start + 1,
                opening.group(1),
                "\n".join(body) + "\n",
                directive.group(1) if directive else None,
            )
        )
    return found


def taught_pages() -> list[str]:
    """The pages of the Get started and Build sections, in navigation order."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages: list[str] = []
    for entry in config["nav"]:
        for title, value in entry.items():
            if title in TAUGHT_SECTIONS:
                pages += [str(page) for item in value for page in item.values()]
    return pages


def page_blocks(page: str) -> list[Block]:
    return blocks(page, (DOCS / page).read_text(encoding="utf-8"))


def runs_here(block: Block) -> bool:
    """Whether the docs runner itself executes this block."""
    if block.language not in RUNNABLE or block.is_stack or block.not_run_reason is not None:
        return False
    return not (block.language == "python" and block.page in PYTHON_RUN_BY)
