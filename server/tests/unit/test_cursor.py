"""The CDN cursor: 20-second intervals from 2024-10-09T00:00:00Z, never going backwards."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from ds_server.protocol.cursor import (
    CURSOR_EPOCH_SECS,
    CURSOR_INTERVAL_SECS,
    current_interval,
    next_cursor,
)
from hypothesis import given
from hypothesis import strategies as st

EPOCH = datetime(2024, 10, 9, tzinfo=UTC).timestamp()
# Some instant well after the epoch.
NOW = EPOCH + 12_345 * 20 + 7.5


def test_epoch_and_interval_constants() -> None:
    assert CURSOR_EPOCH_SECS == EPOCH
    assert CURSOR_INTERVAL_SECS == 20


@pytest.mark.parametrize(
    ("offset_secs", "interval"),
    [(0, 0), (19.999, 0), (20, 1), (39.9, 1), (40, 2), (3600, 180), (86_400, 4320)],
)
def test_interval_counts_twenty_second_steps_from_epoch(offset_secs: float, interval: int) -> None:
    assert current_interval(EPOCH + offset_secs) == interval


def test_current_interval_defaults_to_wall_clock() -> None:
    assert current_interval() >= current_interval(EPOCH + 365 * 86_400)


def test_no_client_cursor_gives_current_interval() -> None:
    assert next_cursor(None, now=NOW) == str(current_interval(NOW))


def test_older_client_cursor_gives_current_interval() -> None:
    assert next_cursor(str(current_interval(NOW) - 5), now=NOW) == str(current_interval(NOW))
    assert next_cursor("0", now=NOW) == str(current_interval(NOW))


@given(ahead=st.integers(min_value=0, max_value=10**12))
def test_echoed_cursor_at_or_ahead_gets_strictly_greater(ahead: int) -> None:
    echoed = current_interval(NOW) + ahead
    result = int(next_cursor(str(echoed), now=NOW))
    assert result > echoed
    # The jitter is 1-3600 s, i.e. at most 180 intervals.
    assert result <= echoed + 3600 // CURSOR_INTERVAL_SECS


def test_echoed_cursor_equal_to_current_is_bumped_every_time() -> None:
    current = current_interval(NOW)
    for _ in range(200):
        assert int(next_cursor(str(current), now=NOW)) > current


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "abc",
        "-5",
        "+5",
        "1.5",
        "1e9",
        " 12",
        "12 ",
        "١٢٣",
        "9" * 19,
        "0x10",
        "99999999999999999999",
    ],
)
def test_garbage_cursor_is_ignored(garbage: str) -> None:
    assert next_cursor(garbage, now=NOW) == str(current_interval(NOW))


@given(st.text(max_size=40))
def test_any_text_yields_a_decimal_cursor_not_behind_now(cursor: str) -> None:
    result = next_cursor(cursor, now=NOW)
    assert result.isdigit()
    assert int(result) >= current_interval(NOW)
