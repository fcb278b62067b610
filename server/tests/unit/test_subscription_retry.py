"""Delivery backoff: doubling from 1 s, capped at 60 s, +-20 % jitter."""

from __future__ import annotations

import pytest
from ds_server.subscriptions.retry import backoff_seconds


@pytest.mark.parametrize(
    ("retry", "expected"), [(1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, 60.0), (500, 60.0)]
)
def test_doubles_up_to_a_minute(retry: int, expected: float) -> None:
    assert backoff_seconds(retry, jitter=0.0) == pytest.approx(expected)


def test_jitter_is_twenty_percent() -> None:
    assert backoff_seconds(1, jitter=1.0) == pytest.approx(1.2)
    assert backoff_seconds(1, jitter=-1.0) == pytest.approx(0.8)
    for _ in range(100):
        assert 0.8 <= backoff_seconds(1) <= 1.2
