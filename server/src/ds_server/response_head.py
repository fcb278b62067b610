"""The head of an HTTP/1.1 response from ASGI headers, as uvicorn writes it.

Every response runs this loop, so it lives in a module of its own that the
compiled build compiles (``ds_server.http_protocol`` can't be: its classes
derive from uvicorn's). It does what uvicorn's httptools ``send`` does with
a response start: check the header characters, read Content-Length,
Transfer-Encoding and Connection, and choose chunked framing when the
length isn't known.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HEADER_RE, HEADER_VALUE_RE, STATUS_LINE

_NO_BODY_STATUSES = frozenset((204, 304))


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
    # The character checks are per character, so one search over all names
    # and one over all values match uvicorn's two per header.
    if HEADER_RE.search(b"".join([name for name, _ in headers])):
        raise RuntimeError("Invalid HTTP header name.")
    if HEADER_VALUE_RE.search(b"".join([value for _, value in headers])):
        raise RuntimeError("Invalid HTTP header value.")
    content = [STATUS_LINE[status]]
    chunked: bool | None = None
    content_length = 0
    has_connection_close = False
    for raw_name, value in headers:
        name = raw_name.lower()
        if name == b"content-length" and chunked is None:
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
        content += (name, b": ", value, b"\r\n")
    if not keep_alive and not has_connection_close:
        content.append(b"connection: close\r\n")
    if chunked is None and not head_request and status not in _NO_BODY_STATUSES:
        chunked = True
        content.append(b"transfer-encoding: chunked\r\n")
    content.append(b"\r\n")
    return ResponseHead(b"".join(content), bool(chunked), content_length, keep_alive)
