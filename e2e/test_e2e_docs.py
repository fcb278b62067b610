"""Every block of the pages that teach (Get started, Build) runs, in order, against the stack.

``tests/docs/doc_blocks.py`` says which blocks there are and how each runs;
``e2e_docs`` runs them as a reader would, in a checkout whose ``.dev`` is
this suite's stack. What a page says its commands do is checked here too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from doc_blocks import taught_pages
from e2e_docs import PageRun

if TYPE_CHECKING:
    from e2e_stack import E2E

HERE = Path(__file__).resolve().parent
# `make quickstart-shot` sets it: where the quickstart's screenshot of the viewer goes.
SCREENSHOT = os.environ.get("DS_QUICKSTART_SCREENSHOT")


def wait_for_rows(e2e: E2E, stream: str, count: int) -> list[tuple[object, ...]]:
    """The stream's rows of session_events once ds-sync has copied ``count`` of them."""
    query = (
        "SELECT event_type, event_key, operation, payload->'value'->>'text'"
        " FROM session_events WHERE stream_name = %s ORDER BY ds_offset, event_index"
    )
    deadline = time.monotonic() + 30
    while True:
        rows = e2e.sql(query, stream)
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


@pytest.mark.parametrize("page", taught_pages())
def test_the_page_runs(page: str, e2e: E2E, tmp_path: Path) -> None:
    run = PageRun(page, e2e.stack.config, tmp_path)
    run.run()
    print(f"docs/{page}: ran {run.ran or 'nothing here'}")
    if page == "quickstart.md":
        check_the_quickstart(e2e, run, tmp_path)
    if page == "build/history-and-analytics.md":
        # What the page says `make analytics` computed for its session.
        (figures,) = e2e.sql(
            "SELECT events, participants, user_messages, assistant_messages, chunks, reactions"
            " FROM session_analytics WHERE session = 'sessions/history-demo'"
        )
        assert figures == (9, 1, 2, 1, 3, 1)


def check_the_quickstart(e2e: E2E, run: PageRun, tmp_path: Path) -> None:
    """What the page says its steps wrote: alice's message and the reply, in Postgres too."""
    rows = wait_for_rows(e2e, "sessions/room-1", 5)
    assert [(kind, operation) for kind, _key, operation, _text in rows] == [
        ("message", "insert"),
        *[("chunk", "append")] * 3,
        ("message", "update"),
    ]
    assert rows[0][3] == "hi"
    assert rows[-1][3] == "Hello alice! This reply arrived in pieces."
    outputs = "".join(output for _block, output in run.outputs)
    assert "HTTP/1.1 201 Created" in outputs
    assert "HTTP/1.1 204 No Content" in outputs
    assert "event: data" in outputs
    assert "streamNextOffset" in outputs
    shot = Path(SCREENSHOT) if SCREENSHOT else tmp_path / "viewer.png"
    if SCREENSHOT:
        # The viewer, opened as the page says, showing what the steps wrote.
        command = [sys.executable, str(HERE / "viewer_shot.py"), e2e.url, "room-1", str(shot), "2"]
        subprocess.run(command, check=True, timeout=120)
