"""Cutting JSON read bodies into messages without re-serialising them."""

from __future__ import annotations

import json

import pytest
from durable_sessions.protocol.json_mode import JsonFramingError
from durable_sessions.protocol.json_mode import split_json_arrays as split_arrays
from hypothesis import given
from hypothesis import strategies as st

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(st.lists(st.lists(json_values, max_size=5), max_size=4), st.booleans())
def test_elements_of_consecutive_arrays(arrays: list[list[object]], spaced: bool) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    raw = [[json.dumps(item, separators=separators) for item in array] for array in arrays]
    body = "".join("[" + ",".join(items) + "]" for items in raw).encode()
    assert split_arrays(body) == [item.encode() for items in raw for item in items]


def test_exact_bytes_are_kept() -> None:
    body = '[ {"a" : 1.50} ,"]\\",[" , 1e3 ,"é"]\n[]'.encode()
    assert split_arrays(body) == [b'{"a" : 1.50}', b'"]\\",["', b"1e3", '"é"'.encode()]


def test_empty_body_has_no_messages() -> None:
    assert split_arrays(b"") == []


@pytest.mark.parametrize("body", [b"{}", b"[1,", b"[1 2]", b"[1]x"])
def test_malformed_bodies_are_rejected(body: bytes) -> None:
    with pytest.raises(JsonFramingError):
        split_arrays(body)
