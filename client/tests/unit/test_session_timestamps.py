"""Event times per sessions.md §2, and the form the SDK writes them in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from durable_sessions.sessions import format_time, parse_time


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-26T10:00:00.125Z", datetime(2026, 11, 26, 10, 0, 0, 125000, tzinfo=UTC)),
        ("2026-11-26t10:00:00z", datetime(2026, 11, 26, 10, tzinfo=UTC)),
        ("2026-11-26 10:00:00", datetime(2026, 11, 26, 10, tzinfo=UTC)),
        ("2026-11-26T10:00:00.1234567+01:30", datetime(2026, 11, 26, 8, 30, 0, 123456, tzinfo=UTC)),
        ("2026-11-26T10:00:00-18:00", datetime(2026, 11, 27, 4, tzinfo=UTC)),
    ],
)
def test_rfc3339_date_times_parse_to_utc(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize(
    "value",
    [
        None,
        1764151200,
        "2026-11-26",
        "10:00:00",
        "2026-11-26T10:00:00+0000",
        "2026-11-26T10:00:60Z",
        "2026-11-26T10:00:00+18:01",
        "2026-02-30T10:00:00Z",
        "0000-01-01T00:00:00Z",
        "\uff12\uff10\uff12\uff16-11-26T10:00:00Z",  # fullwidth digits
        " 2026-11-26T10:00:00Z",
    ],
)
def test_anything_else_is_no_time(value: object) -> None:
    assert parse_time(value) is None


def test_times_are_written_in_utc_with_milliseconds() -> None:
    instant = datetime(2026, 11, 26, 11, 0, 0, 125999, tzinfo=timezone(timedelta(hours=1)))
    assert format_time(instant) == "2026-11-26T10:00:00.125Z"
    assert parse_time(format_time(instant)) == instant.replace(microsecond=125000)
