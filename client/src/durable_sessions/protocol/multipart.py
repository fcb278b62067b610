"""A streaming reader of ``multipart/mixed`` bodies (RFC 2046), as ``/bootstrap`` sends them.

Parts are yielded as they complete, so a bootstrap of a large stream is
never held whole: memory is one part plus one network chunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator

_CRLF = b"\r\n"
_HEADERS_END = b"\r\n\r\n"
# A part without a Content-Type header (RFC 2046 says text/plain; the server always sends one).
DEFAULT_PART_TYPE = "application/octet-stream"


class MultipartError(ValueError):
    """The body is not a well-formed multipart entity."""


def boundary_of(content_type: str) -> bytes:
    """The ``boundary`` parameter of a multipart Content-Type."""
    media, _, params = content_type.partition(";")
    if not media.strip().lower().startswith("multipart/"):
        raise MultipartError(f"expected a multipart body, got {content_type!r}")
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "boundary" and value.strip():
            return value.strip().strip('"').encode("ascii")
    raise MultipartError(f"no boundary in {content_type!r}")


class PartReader:
    """Cuts parts out of a body fed in pieces: ``feed()`` returns the parts it completed.

    The pure core of `iter_parts` and `aiter_parts`; ``finish()``
    checks the body ended with the closing delimiter.
    """

    def __init__(self, boundary: bytes) -> None:
        # With a CRLF in front, every delimiter, the first included, is CRLF "--" boundary.
        self._delimiter = _CRLF + b"--" + boundary
        self._buffer = bytearray(_CRLF)
        self._started = False
        self._done = False

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        """Add ``chunk``; the ``(content_type, body)`` of each part now complete."""
        if self._done:
            return []  # the epilogue, which RFC 2046 says to ignore
        self._buffer += chunk
        parts: list[tuple[str, bytes]] = []
        buffer, delimiter = self._buffer, self._delimiter
        if not self._started:
            first = buffer.find(delimiter)
            if first < 0:
                return parts
            del buffer[:first]  # the preamble, ignored like the epilogue
            self._started = True
        while True:
            # The buffer starts at a delimiter: its line, then headers, then the body.
            after = len(delimiter)
            if len(buffer) < after + 2:
                return parts
            if buffer[after : after + 2] == b"--":
                self._done = True
                return parts
            headers_end = buffer.find(_HEADERS_END, after)
            if headers_end < 0:
                return parts
            body_start = headers_end + len(_HEADERS_END)
            body_end = buffer.find(delimiter, body_start)
            if body_end < 0:
                return parts
            headers = bytes(buffer[after:headers_end]).decode("latin-1")
            parts.append((_content_type(headers), bytes(buffer[body_start:body_end])))
            del buffer[:body_end]

    def finish(self) -> None:
        """Raise `MultipartError` unless the closing delimiter was seen."""
        if not self._done:
            raise MultipartError("the body ends inside a part (no closing boundary)")


def iter_parts(chunks: Iterable[bytes], boundary: bytes) -> Iterator[tuple[str, bytes]]:
    """``(content_type, body)`` of each part, in order, as ``chunks`` arrive."""
    reader = PartReader(boundary)
    for chunk in chunks:
        yield from reader.feed(chunk)
    reader.finish()


async def aiter_parts(
    chunks: AsyncIterable[bytes], boundary: bytes
) -> AsyncIterator[tuple[str, bytes]]:
    """`iter_parts` over an async source (an httpx response's ``aiter_bytes()``)."""
    reader = PartReader(boundary)
    async for chunk in chunks:
        for part in reader.feed(chunk):
            yield part
    reader.finish()


def _content_type(headers: str) -> str:
    # The delimiter line's rest (transport padding) comes first; headers follow.
    for line in headers.split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-type":
            return value.strip()
    return DEFAULT_PART_TYPE
