"""Offsets: 20-digit byte positions, the -1/now sentinels and fork offsets."""

from __future__ import annotations

import pytest
from ds_server.protocol.offsets import (
    MAX_OFFSET,
    OFFSET_WIDTH,
    InvalidOffsetError,
    Sentinel,
    format_offset,
    parse_fork_offset,
    parse_offset,
    parse_position,
)
from hypothesis import given
from hypothesis import strategies as st

positions = st.integers(min_value=0, max_value=MAX_OFFSET)

MALFORMED = [
    "",
    "0",
    "-2",
    "NOW",
    "Now",
    "-1 ",
    " -1",
    "0" * (OFFSET_WIDTH - 1),
    "0" * (OFFSET_WIDTH + 1),
    "1" * (OFFSET_WIDTH + 5),
    "0000000000000000000,",
    "000000000000000000,0",
    "0000000000000000000 ",
    " 0000000000000000000",
    "00000000000 00000000",
    "000000000000000000..",
    "..",
    "0000000000000000000\x00",
    "0000000000000000000\n",
    "00000000000000000000\n",
    "\n00000000000000000000",
    "0000000000000000000\r",
    "+0000000000000000001",
    "-0000000000000000001",
    "0000000000000000000a",
    "0x000000000000000001",
    "١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠",  # non-ASCII digits
    "0000000000_000000000",
]


def test_format_pads_to_twenty_digits() -> None:
    assert format_offset(0) == "00000000000000000000"
    assert format_offset(42) == "00000000000000000042"
    assert len(format_offset(MAX_OFFSET)) == OFFSET_WIDTH


@pytest.mark.parametrize("position", [-1, MAX_OFFSET + 1])
def test_format_rejects_out_of_range(position: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        format_offset(position)


def test_sentinels() -> None:
    assert parse_offset("-1") is Sentinel.BEGINNING
    assert parse_offset("now") is Sentinel.NOW


def test_generated_offsets_are_never_sentinels() -> None:
    for position in (0, 1, 10**19, MAX_OFFSET):
        assert format_offset(position) not in ("-1", "now")


def test_parse_real_offset() -> None:
    assert parse_offset("00000000000000000042") == 42
    assert parse_offset(format_offset(MAX_OFFSET)) == MAX_OFFSET


@pytest.mark.parametrize("text", MALFORMED)
def test_parse_offset_rejects(text: str) -> None:
    with pytest.raises(InvalidOffsetError):
        parse_offset(text)


@pytest.mark.parametrize("text", [*MALFORMED, "-1", "now"])
def test_parse_position_rejects_sentinels_and_garbage(text: str) -> None:
    with pytest.raises(InvalidOffsetError):
        parse_position(text)


@given(positions)
def test_round_trip(position: int) -> None:
    text = format_offset(position)
    assert parse_offset(text) == position
    assert parse_position(text) == position


@given(positions, positions)
def test_lexicographic_order_is_numeric_order(a: int, b: int) -> None:
    assert (format_offset(a) < format_offset(b)) == (a < b)
    assert (format_offset(a) == format_offset(b)) == (a == b)


@given(st.text(max_size=30))
def test_parse_offset_never_raises_anything_else(text: str) -> None:
    try:
        result = parse_offset(text)
    except InvalidOffsetError:
        return
    assert isinstance(result, Sentinel) or format_offset(result) == text


# -- fork offsets ------------------------------------------------------------


def test_fork_offset_sentinels() -> None:
    assert parse_fork_offset("-1") == 0
    assert parse_fork_offset("now") is None


def test_fork_offset_own_format() -> None:
    assert parse_fork_offset("00000000000000000007") == 7


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("0000000000000000_0000000000000005", 5),
        ("0000000000000003_0000000000001024", 1024),
        ("1_0", 0),
        ("12345_678", 678),
    ],
)
def test_fork_offset_legacy_form_uses_byte_position(text: str, position: int) -> None:
    assert parse_fork_offset(text) == position


@pytest.mark.parametrize(
    "text",
    [
        "",
        "_5",
        "5_",
        "1_2_3",
        "0000000000000000_000000000000000a",
        "1" * 21 + "_1",
        "1_" + "1" * 21,
        "1 _2",
        "1_2\n",
        "..",
        "00000000000000000001,",
    ],
)
def test_fork_offset_rejects(text: str) -> None:
    with pytest.raises(InvalidOffsetError):
        parse_fork_offset(text)
