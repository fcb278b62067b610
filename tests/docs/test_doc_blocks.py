"""Every code block of Get started and Build is accounted for.

Each is run, shown as output, or a listed exception with its reason.
"""

from __future__ import annotations

import re
from collections import Counter

from doc_blocks import (
    LANGUAGES,
    NOT_RUN,
    PYTHON_RUN_BY,
    ROOT,
    blocks,
    page_blocks,
    runs_here,
    taught_pages,
)


def every_block() -> list:  # type: ignore[type-arg]
    return [block for page in taught_pages() for block in page_blocks(page)]


def test_the_taught_pages_are_the_first_two_sections() -> None:
    pages = taught_pages()
    assert pages[0] == "quickstart.md"
    assert {"tutorial-chat.md", "sessions.md", "sdk.md", "build/typescript.md"} <= set(pages)


def test_every_block_has_a_language_the_runner_knows() -> None:
    unknown = [
        str(block)
        for block in every_block()
        if block.language not in LANGUAGES and block.not_run_reason is None
    ]
    assert unknown == [], "give each block a language: " + ", ".join(sorted(LANGUAGES))


def test_only_the_listed_blocks_are_not_run_and_each_says_why() -> None:
    not_run = {(b.page, b.first_line) for b in every_block() if b.not_run_reason is not None}
    assert not_run == NOT_RUN


def test_stack_blocks_only_start_the_stack() -> None:
    for block in every_block():
        if block.is_stack:
            commands = [re.sub(r"#.*", "", line).strip() for line in block.code.splitlines()]
            assert all(c == "" or c.startswith("make dev") for c in commands), str(block)
    # The command itself, `make dev`, is run by the stack's own test.
    assert "make" in (ROOT / "stack" / "tests" / "test_dev.py").read_text(encoding="utf-8")


def test_python_run_elsewhere_is_run_there() -> None:
    for page, test in PYTHON_RUN_BY.items():
        source = (ROOT / test).read_text(encoding="utf-8")
        assert page.rsplit("/", 1)[-1] in source, f"{test} does not run {page}"


def test_most_blocks_run() -> None:
    counts = Counter(
        "runs here" if runs_here(b) else ("python elsewhere" if b.language == "python" else "other")
        for b in every_block()
        if b.language != "text"
    )
    # Guards the extraction: the pages hold dozens of runnable blocks.
    assert counts["runs here"] >= 20, counts


def test_blocks_are_read_with_their_directive() -> None:
    page = (
        "intro\n\n<!-- docs-runner: the stack -->\n```bash\nmake dev\n```\n\n"
        "```python\nx = 1\n```\n\n<!-- docs-runner: not run: a browser page -->\n```js\nf()\n```\n"
    )
    found = blocks("p.md", page)
    assert [(b.language, b.code, b.directive, b.line) for b in found] == [
        ("bash", "make dev\n", "the stack", 4),
        ("python", "x = 1\n", None, 8),
        ("js", "f()\n", "not run: a browser page", 13),
    ]
    assert found[0].is_stack
    assert found[2].not_run_reason == "a browser page"
    assert [runs_here(b) for b in found] == [False, True, False]
