"""Every Python block of docs/sdk.md runs, in order, against ds-server behind Envoy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from page_tokens import the_pages_token

if TYPE_CHECKING:
    import pytest
    from gateway_stack import GatewayStack

PAGE = Path(__file__).resolve().parents[2] / "docs" / "sdk.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def test_the_python_examples_run(gateway: GatewayStack, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 9, "the page's examples were not found"
    monkeypatch.setenv("DS_GATEWAY_URL", gateway.url)
    monkeypatch.setenv("DS_TOKEN", the_pages_token(PAGE))  # --sub alice --bucket sdk-docs
    namespace: dict[str, object] = {"__name__": "sdk_guide"}
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"docs/sdk.md, python block {number}", "exec"), namespace)
