"""Every Python block of docs/tutorial-chat.md runs, in order, against the whole stack.

The page tells its reader to start ``make dev`` and ``eval "$(.venv/bin/ds-dev env)"``:
the blocks get the same three variables, from the suite's stack (the
launcher ``make dev`` uses), so they reach ds-sync and Postgres too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from e2e_stack import E2E

PAGE = Path(__file__).resolve().parents[1] / "docs" / "tutorial-chat.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def test_the_tutorial_runs(e2e: E2E, monkeypatch: pytest.MonkeyPatch) -> None:
    page = PAGE.read_text(encoding="utf-8")
    blocks = _BLOCK.findall(page)
    assert len(blocks) >= 9, "the page's examples were not found"
    assert 'eval "$(.venv/bin/ds-dev env)"' in page
    # What `ds-dev env` exports for a running stack.
    monkeypatch.setenv("DS_GATEWAY_URL", e2e.url)
    monkeypatch.setenv("DS_TOKEN", e2e.stack.tokens["user"])
    monkeypatch.setenv("POSTGRES_URL", e2e.postgres_url)
    namespace: dict[str, object] = {"__name__": "tutorial"}
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"docs/tutorial-chat.md, python block {number}", "exec"), namespace)
    # What the page says the blocks show.
    replies: dict[str, str] = namespace["REPLIES"]  # type: ignore[assignment]
    state = namespace["state"]
    assert [m.text for m in state.messages()] == [  # type: ignore[attr-defined]
        *("What is a durable stream?", replies["What is a durable stream?"]),
        *("And if my page reloads?", replies["And if my page reloads?"]),
    ]
    lines: list[str] = namespace["lines"]  # type: ignore[assignment]
    assert lines[-2:] == [
        f"  message   assistant: {replies['And if my page reloads?']}",
        "  presence  bob offline",
    ]
    assert len(namespace["rows"]) == namespace["expected"]  # type: ignore[arg-type]
