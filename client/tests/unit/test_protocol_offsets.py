"""Offsets: the 20-digit form, the sentinels, and what is refused."""

from __future__ import annotations

import pytest
from durable_sessions.protocol import (
    BEGINNING,
    START,
    OffsetError,
    format_offset,
    is_offset,
    normal_offset,
    parse_offset,
)
from hypothesis import given
from hypothesis import strategies as st


@given(st.integers(min_value=0, max_value=10**20 - 1))
def test_format_and_parse_are_inverse(position: int) -> None:
    token = format_offset(position)
    assert len(token) == 20
    assert parse_offset(token) == position
    assert is_offset(token)


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=10**12))
def test_offsets_sort_as_positions(a: int, b: int) -> None:
    assert (format_offset(a) < format_offset(b)) == (a < b)


def test_beginning_is_position_zero() -> None:
    assert parse_offset(BEGINNING) == 0
    assert normal_offset(BEGINNING) == START
    assert not is_offset(BEGINNING)


@pytest.mark.parametrize(
    "token", ["now", "", "12", "0" * 21, "-2", "0000000000000000000a", "+" * 20]
)
def test_malformed_offsets_are_refused(token: str) -> None:
    with pytest.raises(OffsetError):
        parse_offset(token)


@pytest.mark.parametrize("position", [-1, 10**20])
def test_positions_out_of_range_are_refused(position: int) -> None:
    with pytest.raises(OffsetError):
        format_offset(position)
