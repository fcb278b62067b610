"""Server-Sent Events framing for stream reads (protocol section 5.8).

Payload lines are split on CR, LF and CRLF, the only SSE line terminators,
so a payload can never inject an event boundary or a forged control event.
"""

from __future__ import annotations

import base64
import re

import msgspec

from ds_server.protocol.json_mode import JSON_CONTENT_TYPE, media_type

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
# Long base64 payloads are split so no single SSE line grows without bound.
_BASE64_LINE = 76 * 1024

KEEPALIVE = b": keep-alive\n\n"


def uses_base64(content_type: str) -> bool:
    """Binary streams (anything but text/* and application/json) travel base64-encoded."""
    kind = media_type(content_type)
    return not (kind.startswith("text/") or kind == JSON_CONTENT_TYPE)


def data_event(payload: bytes, *, base64_encoded: bool) -> bytes:
    """Frame one ``data`` event carrying ``payload``."""
    if base64_encoded:
        text = base64.b64encode(payload)
        lines = [text[i : i + _BASE64_LINE] for i in range(0, len(text), _BASE64_LINE)] or [b""]
    else:
        lines = _LINE_BREAK.split(payload)
    return b"event: data\n" + b"".join(_data_line(line) for line in lines) + b"\n"


def _data_line(line: bytes) -> bytes:
    # SSE parsers drop one space after "data:"; add one when the line itself starts with a space.
    prefix = b"data: " if line.startswith(b" ") else b"data:"
    return prefix + line + b"\n"


class Control(msgspec.Struct, omit_defaults=True):
    """The JSON body of a ``control`` event (camelCase on the wire)."""

    streamNextOffset: str
    streamCursor: str | None = None
    upToDate: bool | None = None
    streamClosed: bool | None = None


_encode = msgspec.json.Encoder().encode


def control_event(next_offset: str, *, cursor: str | None, up_to_date: bool, closed: bool) -> bytes:
    """Frame one ``control`` event; the cursor is left out once the stream is closed."""
    control = Control(
        streamNextOffset=next_offset,
        streamCursor=None if closed else cursor,
        upToDate=True if (up_to_date or closed) else None,
        streamClosed=True if closed else None,
    )
    return b"event: control\ndata:" + _encode(control) + b"\n\n"
