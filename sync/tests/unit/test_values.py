"""Column values to JSON per sessions.md §4, from Postgres's text forms."""

from __future__ import annotations

import msgspec
import pytest
from ds_sync.mirror.values import ValueFormatError, rfc3339, to_json


@pytest.mark.parametrize(
    ("type_name", "text", "expected"),
    [
        ("int2", "-3", -3),
        ("int4", "2147483647", 2147483647),
        ("int8", "9007199254740993", 9007199254740993),
        ("bool", "t", True),
        ("bool", "f", False),
        ("bool", "true", True),
        ("numeric", "12345.678", "12345.678"),
        ("numeric", "NaN", "NaN"),
        ("float8", "1.5", "1.5"),
        ("bytea", "\\x00ff10", "AP8Q"),
        ("bytea", "\\x", ""),
        ("text", "a/b", "a/b"),
        ("uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        ("date", "2026-11-26", "2026-11-26"),
        ("interval", "P1DT2H", "P1DT2H"),
        ("timestamptz", "2026-11-26 10:00:00.125+00", "2026-11-26T10:00:00.125Z"),
        ("timestamptz", "2026-11-26 10:00:00+00", "2026-11-26T10:00:00Z"),
        ("timestamp", "2026-11-26 10:00:00.5", "2026-11-26T10:00:00.5Z"),
        # RFC 3339 has no form for these: they stay as Postgres writes them.
        ("timestamptz", "infinity", "infinity"),
        ("timestamptz", "0044-03-15 12:00:00+00 BC", "0044-03-15 12:00:00+00 BC"),
        ("timestamp", "12026-01-01 00:00:00", "12026-01-01 00:00:00"),
        (None, None, None),
    ],
)
def test_mapping(type_name: str | None, text: str | None, expected: object) -> None:
    assert to_json(type_name or "text", text) == expected


def test_json_is_embedded_as_written() -> None:
    value = to_json("json", '{"b": [1, 2.50], "a": null}')
    assert isinstance(value, msgspec.Raw)
    assert msgspec.json.encode({"doc": value}) == b'{"doc":{"b": [1, 2.50], "a": null}}'
    assert isinstance(to_json("jsonb", "[]"), msgspec.Raw)


def test_arrays_stay_text_whatever_their_element_type() -> None:
    assert to_json("_int4", "{1,2}", is_array=True) == "{1,2}"
    assert to_json("int4", "{1,2}", is_array=True) == "{1,2}"


@pytest.mark.parametrize(
    ("type_name", "text"), [("int4", "1.5"), ("bool", "yes"), ("bytea", "0102"), ("bytea", "\\xzz")]
)
def test_a_text_that_is_not_of_its_type_is_an_error(type_name: str, text: str) -> None:
    with pytest.raises(ValueFormatError):
        to_json(type_name, text)


def test_rfc3339_keeps_every_fraction_digit() -> None:
    assert rfc3339("2026-11-26 10:00:00.123456+00") == "2026-11-26T10:00:00.123456Z"
