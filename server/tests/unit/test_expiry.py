"""Stream-TTL and Stream-Expires-At parsing and formatting."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from ds_server.protocol.expiry import (
    InvalidExpiryError,
    format_expires_at,
    parse_expires_at,
    parse_ttl,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(("text", "seconds"), [("0", 0), ("1", 1), ("60", 60), ("3600", 3600)])
def test_ttl_accepts_plain_decimals(text: str, seconds: int) -> None:
    assert parse_ttl(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "-1",
        "00060",
        "03600",
        "00",
        "+60",
        "60.5",
        "3600.0",
        "1e3",
        "3.6e3",
        " 60",
        "60 ",
        "6 0",
        "0x10",
        "١٢",  # non-ASCII digits
        "60\n",
        "9" * 40,
    ],
)
def test_ttl_rejects(text: str) -> None:
    with pytest.raises(InvalidExpiryError):
        parse_ttl(text)


def _utc(*parts: int, micro: int = 0) -> float:
    return datetime(*parts, microsecond=micro, tzinfo=UTC).timestamp()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2030-01-02T03:04:05Z", _utc(2030, 1, 2, 3, 4, 5)),
        ("2030-01-02t03:04:05z", _utc(2030, 1, 2, 3, 4, 5)),
        ("2030-01-02T03:04:05+00:00", _utc(2030, 1, 2, 3, 4, 5)),
        ("2030-01-02T05:04:05+02:00", _utc(2030, 1, 2, 3, 4, 5)),
        ("2030-01-01T22:34:05-04:30", _utc(2030, 1, 2, 3, 4, 5)),
        ("2030-01-02T03:04:05.5Z", _utc(2030, 1, 2, 3, 4, 5, micro=500_000)),
        ("2030-01-02T03:04:05.123456Z", _utc(2030, 1, 2, 3, 4, 5, micro=123_456)),
        ("2030-01-02T03:04:05.123456789Z", _utc(2030, 1, 2, 3, 4, 5, micro=123_456)),
    ],
)
def test_expires_at_accepts_rfc3339(text: str, expected: float) -> None:
    assert parse_expires_at(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "tomorrow",
        "2030-01-02",
        "2030-01-02T03:04:05",  # no zone
        "2030-01-02 03:04:05Z",
        "2030-01-02T03:04Z",
        "2030-01-02T03:04:05+0200",
        "2030-01-02T03:04:05.Z",
        "2030-01-02T03:04:05.1234567890Z",
        "2030-13-01T00:00:00Z",
        "2030-02-30T00:00:00Z",
        "2030-01-01T25:00:00Z",
        "2030-01-01T00:61:00Z",
        "0000-01-01T00:00:00Z",
        "1730000000",
        "Thu, 01 Jan 2030 00:00:00 GMT",
        " 2030-01-02T03:04:05Z",
        "2030-01-02T03:04:05Z\n",
    ],
)
def test_expires_at_rejects(text: str) -> None:
    with pytest.raises(InvalidExpiryError):
        parse_expires_at(text)


def test_format_expires_at() -> None:
    assert format_expires_at(_utc(2030, 1, 2, 3, 4, 5)) == "2030-01-02T03:04:05.000Z"
    assert format_expires_at(_utc(2030, 1, 2, 3, 4, 5, micro=250_000)) == "2030-01-02T03:04:05.250Z"


@given(st.integers(min_value=0, max_value=253_402_300_799_000))  # through 9999-12-31
def test_format_then_parse_round_trips_to_the_millisecond(millis: int) -> None:
    seconds = millis / 1000
    text = format_expires_at(seconds)
    assert text.endswith("Z")
    # Millisecond rendering truncates, and float seconds carry rounding noise.
    assert parse_expires_at(text) == pytest.approx(seconds, abs=2e-3)
