"""A streaming reader of ``multipart/mixed`` bodies (RFC 2046), as /bootstrap sends them.

Parts are yielded as they complete, so a bootstrap of a large stream is
never held whole: memory is one part plus one network chunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

_CRLF = b"\r\n"
_HEADERS_END = b"\r\n\r\n"


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


def iter_parts(chunks: Iterable[bytes], boundary: bytes) -> Iterator[tuple[str, bytes]]:
    """``(content_type, body)`` of each part, in order."""
    # With a CRLF in front, every delimiter, the first included, is CRLF "--" boundary.
    delimiter = _CRLF + b"--" + boundary
    buffer = bytearray(_CRLF)
    source = iter(chunks)
    position = _find(buffer, delimiter, source, 0)
    if position != 0 and bytes(buffer[:position]).strip():
        raise MultipartError("data before the first boundary")
    while True:
        del buffer[: position + len(delimiter)]
        _fill(buffer, source, 2)
        if buffer[:2] == b"--":
            return
        headers_end = _find(buffer, _HEADERS_END, source, 0)
        headers = bytes(buffer[:headers_end]).decode("latin-1")
        del buffer[: headers_end + len(_HEADERS_END)]
        position = _find(buffer, delimiter, source, 0)
        yield _content_type(headers), bytes(buffer[:position])


def _find(buffer: bytearray, needle: bytes, source: Iterator[bytes], start: int) -> int:
    """Index of ``needle`` in ``buffer``, reading more from ``source`` until it is there."""
    while True:
        found = buffer.find(needle, start)
        if found >= 0:
            return found
        start = max(0, len(buffer) - len(needle) + 1)
        chunk = next(source, None)
        if chunk is None:
            raise MultipartError("the body ends inside a part (no closing boundary)")
        buffer += chunk


def _fill(buffer: bytearray, source: Iterator[bytes], size: int) -> None:
    while len(buffer) < size:
        chunk = next(source, None)
        if chunk is None:
            raise MultipartError("the body ends right after a boundary")
        buffer += chunk


def _content_type(headers: str) -> str:
    # The delimiter line's rest (transport padding) comes first; headers follow.
    for line in headers.split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-type":
            return value.strip()
    return "text/plain"
