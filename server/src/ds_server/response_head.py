"""The head of an HTTP/1.1 response from ASGI headers, as uvicorn writes it.

Every response runs this, so it lives in a module of its own that the
compiled build compiles (``ds_server.http_protocol`` can't be: its classes
derive from uvicorn's). It does what uvicorn's httptools ``send`` does with
a response start: check the header characters, read Content-Length,
Transfer-Encoding and Connection, and choose chunked framing when the
length isn't known.

uvicorn does that header by header in Python: two regular expression
searches, a lower-casing and three comparisons each, ~31,000 instructions
for a four-header response in plain Python, an eighth of a whole append.
Here the usual response (names already in lower case, at most one
Content-Length, no Transfer-Encoding or Connection) is checked and written
with a few calls over all its headers at once (``bytes.translate`` with a
table that changes only forbidden bytes returns its input unchanged, which
says that none is there); anything else takes uvicorn's way, header by
header. Both give the same bytes and the same errors.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Final

from uvicorn.protocols.http.httptools_impl import HEADER_RE, HEADER_VALUE_RE, STATUS_LINE

_NO_BODY_STATUSES: Final = frozenset((204, 304))
_NAME_OF: Final = itemgetter(0)
_VALUE_OF: Final = itemgetter(1)
_CONTENT_LENGTH: Final = b"content-length"
_LINE_END: Final = b"\r\n"


def _changing(forbidden: bytes) -> bytes:
    """A ``bytes.translate`` table that keeps every byte but those in ``forbidden``."""
    table = bytearray(range(256))
    for byte in forbidden:
        table[byte] = ord("a")  # allowed everywhere, and none of the forbidden
    return bytes(table)


# The bytes uvicorn's HEADER_RE and HEADER_VALUE_RE look for
# (test_response_head.py holds the tables to the expressions).
_NAME_TABLE: Final = _changing(bytes(range(0x20)) + b'\x7f()<>@,;:[]={} \t\\"')
_VALUE_TABLE: Final = _changing(bytes(b for b in range(0x20) if b != ord("\t")) + b"\x7f")


class ResponseHead:
    """The bytes to write, and how the body that follows is framed."""

    __slots__ = ("chunked", "content_length", "data", "keep_alive")

    def __init__(self, data: bytes, chunked: bool, content_length: int, keep_alive: bool) -> None:
        self.data = data
        self.chunked = chunked
        self.content_length = content_length  # the body's bytes, when not chunked
        self.keep_alive = keep_alive


def response_head(
    status: int,
    headers: list[tuple[bytes, bytes]],
    *,
    keep_alive: bool,
    head_request: bool,
) -> ResponseHead:
    """The head for ``status`` and ``headers`` (server defaults first); raises as uvicorn does."""
    names: list[bytes] = list(map(_NAME_OF, headers))
    all_names = b"".join(names)
    # A translation that changed nothing returns the very same object.
    if all_names.translate(_NAME_TABLE) is not all_names and HEADER_RE.search(all_names):
        raise RuntimeError("Invalid HTTP header name.")
    all_values = b"".join(map(_VALUE_OF, headers))
    if all_values.translate(_VALUE_TABLE) is not all_values and HEADER_VALUE_RE.search(all_values):
        raise RuntimeError("Invalid HTTP header value.")
    lengths = names.count(_CONTENT_LENGTH)
    if (
        lengths > 1
        # (``find``, not ``in``: ``in`` first tries its operand as an int and
        # raises and clears a TypeError inside, ~1,800 instructions each.)
        or all_names.find(b"transfer-encoding") >= 0
        or all_names.find(b"connection") >= 0
        or not (all_names.islower() or not all_names)
    ):
        return _each_header(status, headers, keep_alive=keep_alive, head_request=head_request)
    content_length = 0
    if lengths:
        content_length = int(headers[names.index(_CONTENT_LENGTH)][1].decode())
    content = [STATUS_LINE[status]]
    if headers:
        content += (_LINE_END.join(map(b": ".join, headers)), _LINE_END)
    if not keep_alive:
        content.append(b"connection: close\r\n")
    chunked = not lengths and not head_request and status not in _NO_BODY_STATUSES
    if chunked:
        content.append(b"transfer-encoding: chunked\r\n")
    content.append(_LINE_END)
    return ResponseHead(b"".join(content), chunked, content_length, keep_alive)


def _each_header(
    status: int,
    headers: list[tuple[bytes, bytes]],
    *,
    keep_alive: bool,
    head_request: bool,
) -> ResponseHead:
    """uvicorn's way, header by header (the characters are already checked)."""
    content = [STATUS_LINE[status]]
    chunked: bool | None = None
    content_length = 0
    has_connection_close = False
    for raw_name, value in headers:
        name = raw_name.lower()
        if name == _CONTENT_LENGTH and chunked is None:
            content_length = int(value.decode())
            chunked = False
        elif name == b"transfer-encoding" and value.lower() == b"chunked":
            content_length = 0
            chunked = True
        elif name == b"connection":
            tokens = [token.lower().strip() for token in value.split(b",")]
            if b"close" in tokens:
                keep_alive = False
                has_connection_close = True
        content += (name, b": ", value, _LINE_END)
    if not keep_alive and not has_connection_close:
        content.append(b"connection: close\r\n")
    if chunked is None and not head_request and status not in _NO_BODY_STATUSES:
        chunked = True
        content.append(b"transfer-encoding: chunked\r\n")
    content.append(_LINE_END)
    return ResponseHead(b"".join(content), bool(chunked), content_length, keep_alive)
