"""Event times per sessions.md §2 (strict RFC 3339, everything else None), and the form the
SDK writes them in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from durable_sessions.sessions import format_time, parse_time


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-26T10:00:00Z", utc(2026, 11, 26, 10, 0, 0)),
        ("2026-11-26t10:00:00z", utc(2026, 11, 26, 10, 0, 0)),
        ("2026-11-26 10:00:00Z", utc(2026, 11, 26, 10, 0, 0)),
        ("2026-11-26T10:00:00", utc(2026, 11, 26, 10, 0, 0)),  # no zone: UTC
        ("2026-11-26T10:00:00.125Z", utc(2026, 11, 26, 10, 0, 0, 125000)),
        ("2026-11-26T10:00:00.1Z", utc(2026, 11, 26, 10, 0, 0, 100000)),
        # Digits past microseconds are truncated, not rounded.
        ("2026-11-26T10:00:00.1234569Z", utc(2026, 11, 26, 10, 0, 0, 123456)),
        ("2026-11-26T10:00:00.999999999Z", utc(2026, 11, 26, 10, 0, 0, 999999)),
        ("2026-11-26T10:00:00+02:00", utc(2026, 11, 26, 8, 0, 0)),
        ("2026-11-26T10:00:00-05:30", utc(2026, 11, 26, 15, 30, 0)),
        ("2026-11-26T10:00:00-00:00", utc(2026, 11, 26, 10, 0, 0)),
        ("2026-11-26T10:00:00+18:00", utc(2026, 11, 25, 16, 0, 0)),
        ("2026-11-26T10:00:00-18:00", utc(2026, 11, 27, 4, 0, 0)),
        ("2024-02-29T00:00:00Z", utc(2024, 2, 29, 0, 0, 0)),
        ("2026-01-01T00:30:00+01:00", utc(2025, 12, 31, 23, 30, 0)),
        ("0001-01-01T00:00:00Z", utc(1, 1, 1, 0, 0, 0)),
        ("9999-12-31T23:59:59.999999Z", utc(9999, 12, 31, 23, 59, 59, 999999)),
        ("2026-11-26 10:00:00", utc(2026, 11, 26, 10, 0, 0)),
        ("2026-11-26T10:00:00.1234567+01:30", utc(2026, 11, 26, 8, 30, 0, 123456)),
    ],
)
def test_valid(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize(
    "value",
    [
        None,
        1764151200,  # numbers are not timestamps
        1764151200.5,
        True,
        ["2026-11-26T10:00:00Z"],
        {"at": "2026-11-26T10:00:00Z"},
        "",
        "2026-11-26",  # a date alone
        "10:00:00",  # a time alone
        "2026-11-26T10:00",  # no seconds
        "2026-11-26T10:00:00+0000",  # offset without colon
        "2026-11-26T10:00:00+00",
        "2026-11-26T10:00:60Z",  # second 60
        "2026-11-26T24:00:00Z",
        "2026-11-26T10:60:00Z",
        "2026-13-01T10:00:00Z",
        "2026-02-29T10:00:00Z",  # not a leap year
        "2026-11-31T10:00:00Z",
        "2026-11-26T10:00:00.Z",  # a dot without digits
        "2026-11-26T10:00:00+18:01",  # beyond ±18:00
        "2026-11-26T10:00:00+19:00",
        "2026-11-26T10:00:00+05:60",
        "2026-11-26T10:00:00ZZ",
        " 2026-11-26T10:00:00Z",
        "2026-11-26T10:00:00Z ",
        "2026-02-30T10:00:00Z",
        "\uff12\uff10\uff12\uff16-11-26T10:00:00Z",  # fullwidth digits
        "2026-11-26X10:00:00Z",
        "26-11-26T10:00:00Z",
        "+2026-11-26T10:00:00Z",
        "2026-11-26T10:00:00UTC",
        "٢٠٢٦-11-26T10:00:00Z",  # digits of another script
        "0000-01-01T00:00:00Z",  # before year 1
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
        "9999-12-31T23:00:00-01:00",  # after year 9999 in UTC
    ],
)
def test_unparsable_is_none(value: object) -> None:
    assert parse_time(value) is None


def test_result_is_utc() -> None:
    parsed = parse_time("2026-11-26T10:00:00+02:00")
    assert parsed is not None
    assert parsed.utcoffset() is not None
    assert parsed.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_times_are_written_in_utc_with_milliseconds() -> None:
    instant = datetime(2026, 11, 26, 11, 0, 0, 125999, tzinfo=timezone(timedelta(hours=1)))
    assert format_time(instant) == "2026-11-26T10:00:00.125Z"
    assert parse_time(format_time(instant)) == instant.replace(microsecond=125000)
