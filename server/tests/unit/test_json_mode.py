"""JSON mode: one level of array flattening, exact message bytes, wrapped reads."""

from __future__ import annotations

import json

import pytest
from ds_server.protocol.json_mode import (
    InvalidJsonError,
    is_json_content_type,
    media_type,
    split_messages,
    wrap_messages,
)
from hypothesis import given
from hypothesis import strategies as st


def split(body: bytes) -> list[bytes]:
    return split_messages(body, allow_empty_array=False)


def test_single_value_is_one_message() -> None:
    assert split(b'{"event": "created"}') == [b'{"event": "created"}']


def test_array_of_objects_is_flattened() -> None:
    assert split(b'[{"event": "a"}, {"event": "b"}]') == [b'{"event": "a"}', b'{"event": "b"}']


def test_nested_arrays_flatten_one_level_only() -> None:
    assert split(b"[[1,2], [3,4]]") == [b"[1,2]", b"[3,4]"]
    assert split(b"[[[1,2,3]]]") == [b"[[1,2,3]]"]


@pytest.mark.parametrize("scalar", [b"1", b"-0.5e3", b'"text"', b"true", b"false", b"null"])
def test_scalars_are_messages(scalar: bytes) -> None:
    assert split(scalar) == [scalar]
    assert split(b"[" + scalar + b"]") == [scalar]


def test_element_bytes_are_preserved_exactly() -> None:
    body = b' [ 1.50 , "caf\\u00e9" , {"x" : [ 1 ], "y":1e2} , 100000000000000000000001 ] '
    assert split(body) == [
        b"1.50",
        b'"caf\\u00e9"',
        b'{"x" : [ 1 ], "y":1e2}',
        b"100000000000000000000001",
    ]


def test_surrounding_whitespace_is_not_part_of_a_single_message() -> None:
    assert split(b'  \n{"a": 1}\t ') == [b'{"a": 1}']


def test_empty_array_rejected_on_append() -> None:
    with pytest.raises(InvalidJsonError):
        split_messages(b"[]", allow_empty_array=False)
    with pytest.raises(InvalidJsonError):
        split_messages(b" [ ] ", allow_empty_array=False)


def test_empty_array_accepted_on_create() -> None:
    assert split_messages(b"[]", allow_empty_array=True) == []


def test_array_holding_an_empty_array_is_one_message() -> None:
    assert split(b"[[]]") == [b"[]"]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b" ",
        b"{",
        b"[1,]",
        b"[1 2]",
        b'{"a":}',
        b"NaN",
        b"Infinity",
        b"undefined",
        b"'single'",
        b"[1] [2]",
        b"1 2",
        b"[[1,}]]",
        b'[{"a": [1, 2, {"b": }]}]',
        b'"unterminated',
        b"\xff\xfe",
        b'"\xff"',
        b"\xef\xbb\xbf[1]",
    ],
)
def test_invalid_json_rejected(body: bytes) -> None:
    with pytest.raises(InvalidJsonError):
        split_messages(body, allow_empty_array=True)


def test_wrap_messages() -> None:
    assert wrap_messages([]) == b"[]"
    assert wrap_messages([b"1"]) == b"[1]"
    assert wrap_messages([b'{"a": 1}', b"[1,2]", b'"x"']) == b'[{"a": 1},[1,2],"x"]'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@given(st.lists(json_values, min_size=1, max_size=6))
def test_split_then_wrap_is_the_same_array(values: list[object]) -> None:
    body = json.dumps(values).encode()
    messages = split(body)
    assert [json.loads(message) for message in messages] == values
    assert json.loads(wrap_messages(messages)) == values


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/json", True),
        ("Application/JSON", True),
        ("application/json; charset=utf-8", True),
        (" application/json ;charset=utf-8", True),
        ("application/jsonx", False),
        ("application/ndjson", False),
        ("text/json", False),
        ("", False),
    ],
)
def test_is_json_content_type(content_type: str, expected: bool) -> None:
    assert is_json_content_type(content_type) is expected


def test_media_type_strips_parameters_and_case() -> None:
    assert media_type("Text/Plain; charset=UTF-8") == "text/plain"


@pytest.mark.parametrize("depth", [999, 1000, 5000, 100_000])
@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
def test_values_nested_too_deeply_are_refused_with_a_reason(depth: int, opener: bytes) -> None:
    closer = b"]" if opener == b"[" else b"}"
    body = opener * depth + b"1" + closer * depth
    with pytest.raises(InvalidJsonError, match="nested too deeply"):
        split_messages(body, allow_empty_array=True)


def test_values_nested_hundreds_deep_are_stored_exactly() -> None:
    inner = b"[" * 500 + b"1" + b"]" * 500
    assert split(b"[" + inner + b"]") == [inner]
    assert split(inner) == [inner[1:-1]]
