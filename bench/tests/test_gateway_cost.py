"""ds_bench.gateway_cost: which request and settings each counted variant runs with."""

from __future__ import annotations

from typing import Any

import pytest
from ds_bench import gateway_cost, instructions


@pytest.mark.parametrize(
    ("variant", "request_sent", "auth_mode"),
    [
        ("direct", instructions.POST, None),
        ("forwarded", instructions.FORWARDED_POST, None),
        ("gateway", instructions.FORWARDED_POST, "gateway"),
    ],
)
def test_each_variant_sends_its_request_with_its_auth_mode(
    variant: str, request_sent: bytes, auth_mode: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def counted(env: dict[str, str], **kwargs: Any) -> float:
        calls.append(kwargs)
        return 1.0

    monkeypatch.setattr(instructions, "per_request", counted)
    gateway_cost.count("dev", variant, 10)
    (call,) = calls
    assert call["request"] == request_sent
    assert call["base_env"].get("DS_AUTH__MODE") == auth_mode
    assert call["argv"] == ("--log-level", "info")
