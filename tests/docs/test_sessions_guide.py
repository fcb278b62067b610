"""Every Python block of docs/sessions.md runs, in order, against ds-server behind Envoy.

The blocks assert what the page says they do; the token is minted by the
command the page gives. The browser example's request, SSE with
``?access_token=``, is made here too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from page_tokens import the_pages_token

if TYPE_CHECKING:
    import pytest
    from gateway_stack import GatewayStack

PAGE = Path(__file__).resolve().parents[2] / "docs" / "sessions.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return _BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def sse_events(response: httpx.Response) -> list[tuple[str, str]]:
    """(event, data) pairs until a control event says the stream is closed."""
    events: list[tuple[str, str]] = []
    name, data = "", []
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data.append(line.removeprefix("data:").removeprefix(" "))
        elif line == "" and name:
            events.append((name, "\n".join(data)))
            if name == "control" and json.loads(events[-1][1]).get("streamClosed"):
                return events
            name, data = "", []
    return events


def test_the_python_examples_run(gateway: GatewayStack, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks()
    assert len(blocks) >= 10, "the page's examples were not found"
    token = the_pages_token(PAGE)  # ds-token --sub alice --bucket sessions
    monkeypatch.setenv("DS_GATEWAY_URL", gateway.url)
    monkeypatch.setenv("DS_TOKEN", token)
    namespace: dict[str, object] = {"__name__": "sessions_guide"}
    for number, block in enumerate(blocks, start=1):
        code = compile(block, f"docs/sessions.md, python block {number}", "exec")
        exec(code, namespace)

    # What the browser example does: SSE through Envoy, the token in the URL.
    url = f"{gateway.url}/ds/sessions/room-1"
    params = {"offset": "-1", "live": "sse", "access_token": token}
    with (
        httpx.Client(timeout=30.0) as http,
        http.stream("GET", url, params=params) as response,
    ):
        assert response.status_code == 200
        events = sse_events(response)
    messages = [m for name, data in events if name == "data" for m in json.loads(data)]
    assert messages == namespace["raw_events"]()  # type: ignore[operator]
    assert json.loads(events[-1][1])["streamNextOffset"] == namespace["checkpoint"]
