"""Parsing of query strings, stream paths and producer headers."""

from __future__ import annotations

import contextlib

import pytest
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.names import stream_path
from ds_server.protocol.offsets import Sentinel
from ds_server.routes._request import (
    ReadQuery,
    parse_read_query,
    producer_claim,
    stream_seq,
)
from ds_server.stores.base import ProducerClaim
from hypothesis import given
from hypothesis import strategies as st

OFFSET = "00000000000000000005"

# -- read query --------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (b"", ReadQuery(offset=None, live=None, cursor=None)),
        (b"offset=-1", ReadQuery(offset=Sentinel.BEGINNING, live=None, cursor=None)),
        (b"offset=now", ReadQuery(offset=Sentinel.NOW, live=None, cursor=None)),
        (f"offset={OFFSET}".encode(), ReadQuery(offset=5, live=None, cursor=None)),
        (
            f"cursor=77&live=long-poll&offset={OFFSET}".encode(),
            ReadQuery(offset=5, live="long-poll", cursor="77"),
        ),
        (b"live=sse&offset=now", ReadQuery(offset=Sentinel.NOW, live="sse", cursor=None)),
        (
            b"offset=-1&unknown=1&unknown=2",
            ReadQuery(offset=Sentinel.BEGINNING, live=None, cursor=None),
        ),
        (b"cursor=", ReadQuery(offset=None, live=None, cursor="")),
    ],
)
def test_parse_read_query(query: bytes, expected: ReadQuery) -> None:
    assert parse_read_query(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        b"offset=",
        b"offset",
        b"offset=-1&offset=-1",
        b"offset=-1&offset=now",
        b"offset=5",
        b"offset=abc",
        b"offset=%2D1%00",
        b"offset=00000000000000000000%0A",
        b"live=long-poll",
        b"live=sse",
        b"offset=now&live=",
        b"offset=now&live=longpoll",
        b"offset=now&live=SSE",
        b"offset=now&live=true",
        b"offset=now&live=sse&live=sse",
        b"offset=now&cursor=1&cursor=2",
        b"offset=%ff",
        b"offset=now&live=%ff",
    ],
)
def test_parse_read_query_rejects(query: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_read_query(query)


@given(st.binary(max_size=80))
def test_parse_read_query_only_raises_bad_request(query: bytes) -> None:
    with contextlib.suppress(BadRequest):
        parse_read_query(query)


# -- stream path -------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a", "a"),
        ("/a/", "a"),
        ("tenant/chat/42", "tenant/chat/42"),
        ("日本/é", "日本/é"),
        ("a..b/.c/c.", "a..b/.c/c."),
        ("x" * 1024, "x" * 1024),
    ],
)
def test_stream_path_accepts(raw: str, expected: str) -> None:
    assert stream_path(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "/",
        "//",
        "..",
        ".",
        "a/../b",
        "a/./b",
        "a/..",
        "../a",
        "a//b",
        "a\x00b",
        "a\nb",
        "a\rb",
        "a\tb",
        "a\x1fb",
        "a\x7fb",
        "x" * 1025,
        "é" * 513,  # 1026 bytes in UTF-8
        "a\ud800b",  # lone surrogate
    ],
)
def test_stream_path_rejects(raw: str) -> None:
    with pytest.raises(BadRequest):
        stream_path(raw)


@given(st.text(max_size=60))
def test_stream_path_only_raises_bad_request(raw: str) -> None:
    try:
        path = stream_path(raw)
    except BadRequest:
        return
    assert path
    assert ".." not in path.split("/")


# -- producer headers ---------------------------------------------------------


def headers(**values: str) -> dict[str, str]:
    names = {"pid": "producer-id", "epoch": "producer-epoch", "seq": "producer-seq"}
    return {names[key]: value for key, value in values.items()}


def test_no_producer_headers() -> None:
    assert producer_claim({}) is None
    assert producer_claim({"content-type": "text/plain"}) is None


def test_full_producer_claim() -> None:
    assert producer_claim(headers(pid="svc-1", epoch="2", seq="0")) == ProducerClaim("svc-1", 2, 0)


def test_producer_bounds_are_javascript_safe_integers() -> None:
    top = str(2**53 - 1)
    assert producer_claim(headers(pid="p", epoch=top, seq=top)) == ProducerClaim(
        "p", 2**53 - 1, 2**53 - 1
    )


@pytest.mark.parametrize(
    "partial",
    [
        {"pid": "p"},
        {"epoch": "0"},
        {"seq": "0"},
        {"pid": "p", "epoch": "0"},
        {"pid": "p", "seq": "0"},
        {"epoch": "0", "seq": "0"},
    ],
)
def test_producer_headers_all_or_none(partial: dict[str, str]) -> None:
    with pytest.raises(BadRequest):
        producer_claim(headers(**partial))


@pytest.mark.parametrize(
    "number",
    [
        "",
        "-1",
        "+1",
        "01",
        "1.0",
        "1e3",
        " 1",
        "1 ",
        "0x1",
        "\u0661",  # ARABIC-INDIC DIGIT ONE
        str(2**53),
        "9" * 17,
        "9" * 40,
    ],
)
@pytest.mark.parametrize("field", ["epoch", "seq"])
def test_producer_integers_rejected(field: str, number: str) -> None:
    values = {"pid": "p", "epoch": "0", "seq": "0", field: number}
    with pytest.raises(BadRequest):
        producer_claim(headers(**values))


@pytest.mark.parametrize("producer_id", ["", "x" * 257])
def test_producer_id_rejected(producer_id: str) -> None:
    with pytest.raises(BadRequest):
        producer_claim(headers(pid=producer_id, epoch="0", seq="0"))


# -- Stream-Seq ---------------------------------------------------------------


def test_stream_seq() -> None:
    assert stream_seq({}) is None
    assert stream_seq({"stream-seq": "000123"}) == "000123"


@pytest.mark.parametrize("value", ["", "x" * 257])
def test_stream_seq_rejected(value: str) -> None:
    with pytest.raises(BadRequest):
        stream_seq({"stream-seq": value})
