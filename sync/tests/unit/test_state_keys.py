"""State Protocol keys: single values as they are, composite ones escaped and joined."""

from __future__ import annotations

import pytest
from ds_sync.mirror.keys import RowKeyError, encode_key, row_key
from hypothesis import given
from hypothesis import strategies as st


def test_a_single_column_key_is_its_text() -> None:
    assert encode_key(["a/b\\c"]) == "a/b\\c"


def test_composite_keys_escape_backslash_and_slash() -> None:
    assert encode_key(["x/y", "1", "back\\slash"]) == "x\\/y/1/back\\\\slash"
    assert encode_key(["", "2", "/"]) == "/2/\\/"


@given(st.lists(st.text(), min_size=2, max_size=4), st.lists(st.text(), min_size=2, max_size=4))
def test_different_composite_values_give_different_keys(a: list[str], b: list[str]) -> None:
    if len(a) == len(b) and a != b:
        assert encode_key(a) != encode_key(b)


def test_row_key_takes_the_columns_in_key_order() -> None:
    row = {"b": "2", "a": "1", "note": None}
    assert row_key(row, ("a", "b")) == "1/2"
    with pytest.raises(RowKeyError, match="'note'"):
        row_key(row, ("a", "note"))
