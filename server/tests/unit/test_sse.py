"""SSE framing: data events that no payload can break out of, and control events."""

from __future__ import annotations

import base64
import json
import re

import pytest
from ds_server.protocol.sse import KEEPALIVE, control_event, data_event, uses_base64
from hypothesis import given
from hypothesis import strategies as st

OFFSET = "00000000000000000042"


def parse_sse(raw: bytes) -> list[tuple[str, bytes]]:
    """A minimal SSE parser following the WHATWG event-stream rules, on bytes.

    Lines end at CRLF, CR or LF; a blank line dispatches; ``:`` starts a
    comment; one space after the colon is dropped; ``data`` lines are joined
    with LF. Returns ``(event type, data)`` for every dispatched event.
    """
    events: list[tuple[str, bytes]] = []
    event_type = b""
    data: list[bytes] = []
    # A trailing partial line is never dispatched, as in a real client.
    for line in re.split(rb"\r\n|\r|\n", raw)[:-1]:
        if not line:
            if data:
                events.append(((event_type or b"message").decode(), b"\n".join(data)))
            event_type, data = b"", []
            continue
        if line.startswith(b":"):
            continue
        name, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if name == b"event":
            event_type = value
        elif name == b"data":
            data.append(value)
    return events


# Arbitrary bytes, weighted towards the pieces SSE framing cares about.
payloads = st.one_of(
    st.binary(max_size=300),
    st.lists(
        st.sampled_from([b"\r", b"\n", b"\r\n", b" ", b":", b"data", b"event", b"\x00", b"\xff"])
        | st.binary(max_size=8),
        max_size=40,
    ).map(b"".join),
)


def normalise_breaks(payload: bytes) -> bytes:
    return re.sub(rb"\r\n|\r|\n", b"\n", payload)


# -- data events -------------------------------------------------------------


def test_data_event_format() -> None:
    assert data_event(b"hello", base64_encoded=False) == b"event: data\ndata:hello\n\n"


@pytest.mark.parametrize("payload", [b"a\nb", b"a\rb", b"a\r\nb"])
def test_each_line_break_kind_starts_a_new_data_line(payload: bytes) -> None:
    assert data_event(payload, base64_encoded=False) == b"event: data\ndata:a\ndata:b\n\n"


def test_empty_payload_is_one_empty_data_line() -> None:
    assert data_event(b"", base64_encoded=False) == b"event: data\ndata:\n\n"


@pytest.mark.parametrize(
    "payload",
    [
        b'x\n\nevent: control\ndata: {"streamNextOffset":"99999999999999999999"}\n\n',
        b'x\r\revent: control\rdata: {"streamClosed":true}\r\r',
        b'x\r\n\r\nevent: control\r\ndata: {"streamClosed":true}\r\n\r\n',
        b"\n\n\n",
        b"id: 7\nretry: 1\n",
    ],
)
def test_payload_cannot_forge_a_control_event(payload: bytes) -> None:
    events = parse_sse(data_event(payload, base64_encoded=False))
    assert [kind for kind, _ in events] == ["data"]
    assert events[0][1] == normalise_breaks(payload)


def test_line_starting_with_space_survives() -> None:
    # SSE clients drop one space after "data:", so an indented line must still arrive intact.
    payload = b"  indented\n line"
    assert parse_sse(data_event(payload, base64_encoded=False)) == [("data", payload)]


@given(payloads)
def test_payload_never_injects_events(payload: bytes) -> None:
    events = parse_sse(data_event(payload, base64_encoded=False))
    assert len(events) == 1
    assert events[0][0] == "data"


@given(payloads)
def test_framed_payload_round_trips_with_breaks_normalised(payload: bytes) -> None:
    events = parse_sse(data_event(payload, base64_encoded=False))
    assert events == [("data", normalise_breaks(payload))]


# -- base64 ------------------------------------------------------------------


def _base64_payload(frame: bytes) -> bytes:
    events = parse_sse(frame)
    assert len(events) == 1
    kind, data = events[0]
    assert kind == "data"
    text = data.replace(b"\n", b"").replace(b"\r", b"")
    assert len(text) % 4 == 0
    return base64.b64decode(text, validate=True)


def test_base64_event() -> None:
    frame = data_event(b"\x00\xff\n\r", base64_encoded=True)
    assert frame == b"event: data\ndata:" + base64.b64encode(b"\x00\xff\n\r") + b"\n\n"


def test_base64_empty_payload_is_empty_text() -> None:
    assert data_event(b"", base64_encoded=True) == b"event: data\ndata:\n\n"


def test_long_base64_payload_is_split_into_lines() -> None:
    payload = bytes(range(256)) * 800  # 200 KiB: more than one base64 line
    frame = data_event(payload, base64_encoded=True)
    assert frame.count(b"\ndata:") > 1
    assert _base64_payload(frame) == payload


@given(st.binary(max_size=2000))
def test_base64_round_trip(payload: bytes) -> None:
    assert _base64_payload(data_event(payload, base64_encoded=True)) == payload


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("text/plain", False),
        ("text/html; charset=utf-8", False),
        ("TEXT/Plain", False),
        ("application/json", False),
        ("Application/JSON; charset=utf-8", False),
        ("application/octet-stream", True),
        ("application/ndjson", True),
        ("application/x-protobuf", True),
        ("image/png", True),
        ("application/json-seq", True),
        ("", True),
    ],
)
def test_uses_base64(content_type: str, expected: bool) -> None:
    assert uses_base64(content_type) is expected


# -- control events ----------------------------------------------------------


def _control(frame: bytes) -> dict[str, object]:
    events = parse_sse(frame)
    assert [kind for kind, _ in events] == ["control"]
    decoded: dict[str, object] = json.loads(events[0][1])
    return decoded


def test_control_event_open_and_caught_up() -> None:
    frame = control_event(OFFSET, cursor="123", up_to_date=True, closed=False)
    assert frame.startswith(b"event: control\ndata:")
    assert frame.endswith(b"\n\n")
    assert _control(frame) == {"streamNextOffset": OFFSET, "streamCursor": "123", "upToDate": True}


def test_control_event_not_up_to_date_omits_flag() -> None:
    frame = control_event(OFFSET, cursor="123", up_to_date=False, closed=False)
    assert _control(frame) == {"streamNextOffset": OFFSET, "streamCursor": "123"}


def test_control_event_closed_omits_cursor_and_implies_up_to_date() -> None:
    frame = control_event(OFFSET, cursor="123", up_to_date=False, closed=True)
    assert _control(frame) == {"streamNextOffset": OFFSET, "upToDate": True, "streamClosed": True}


def test_keepalive_is_a_comment() -> None:
    assert KEEPALIVE.startswith(b":")
    assert parse_sse(KEEPALIVE) == []
