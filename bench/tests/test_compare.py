from __future__ import annotations

import pytest
from ds_bench.compare import SCENARIOS, select


def test_select_keeps_canonical_order_and_expands_aliases() -> None:
    assert [s.name for s in select("post,rtt")] == ["rtt", "post"]
    assert [s.name for s in select("memory")] == ["mem-sse", "mem-gateway", "mem-streams"]
    assert [s.name for s in select("all")] == list(SCENARIOS)


def test_select_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown scenario 'nope'"):
        select("rtt,nope")


def test_only_the_durable_scenario_needs_a_durable_server() -> None:
    assert [s.name for s in SCENARIOS.values() if s.durable] == ["durable"]
