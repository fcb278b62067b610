"""The ``/bootstrap`` response: a stream's snapshot and retained messages, as one value.

``GET {bucket stream}/bootstrap`` answers ``multipart/mixed``: the snapshot
part first (an empty part when there is none), then one part per retained
message; the headers say where the snapshot was taken and where to go on
reading (extensions §4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from durable_streams import DurableStreamError

from durable_sessions.protocol.headers import (
    STREAM_NEXT_OFFSET,
    STREAM_SNAPSHOT_OFFSET,
    STREAM_UP_TO_DATE,
    is_true,
)
from durable_sessions.protocol.multipart import MultipartError, PartReader, boundary_of
from durable_sessions.protocol.offsets import BEGINNING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# Stream-Snapshot-Offset when the stream has no snapshot.
NO_SNAPSHOT = BEGINNING


class BootstrapFormatError(DurableStreamError):
    """The bootstrap response is not a well-formed multipart/mixed body."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="BAD_BOOTSTRAP")


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """A stream's state to start from: the snapshot, then every message after it.

    ``snapshot`` is None (and ``snapshot_offset`` is ``-1``) when the stream
    has no snapshot; ``messages`` (``(content_type, body)`` pairs) then start
    at the stream's beginning. Continue with a live read from ``next_offset``.
    """

    snapshot: bytes | None
    snapshot_content_type: str | None
    snapshot_offset: str
    messages: list[tuple[str, bytes]]
    next_offset: str
    up_to_date: bool


class BootstrapReader:
    """Parses a bootstrap body fed in pieces; `finish` gives the `Bootstrap`."""

    def __init__(self, content_type: str) -> None:
        try:
            self._parts = PartReader(boundary_of(content_type))
        except MultipartError as exc:
            raise BootstrapFormatError(str(exc)) from None
        self._received: list[tuple[str, bytes]] = []

    def feed(self, chunk: bytes) -> None:
        try:
            self._received += self._parts.feed(chunk)
        except MultipartError as exc:
            raise BootstrapFormatError(str(exc)) from None

    def finish(self, headers: Mapping[str, str]) -> Bootstrap:
        """The parsed bootstrap; ``headers`` are the response's (any case)."""
        try:
            self._parts.finish()
        except MultipartError as exc:
            raise BootstrapFormatError(str(exc)) from None
        if not self._received:
            raise BootstrapFormatError("a bootstrap has at least the snapshot part")
        lowered = {name.lower(): value for name, value in headers.items()}
        snapshot_offset = _header(lowered, STREAM_SNAPSHOT_OFFSET)
        (first_type, first_body), messages = self._received[0], self._received[1:]
        has_snapshot = snapshot_offset != NO_SNAPSHOT
        return Bootstrap(
            snapshot=first_body if has_snapshot else None,
            snapshot_content_type=first_type if has_snapshot else None,
            snapshot_offset=snapshot_offset,
            messages=messages,
            next_offset=_header(lowered, STREAM_NEXT_OFFSET),
            up_to_date=is_true(lowered.get(STREAM_UP_TO_DATE.lower())),
        )


def parse_bootstrap(
    content_type: str, body: bytes | Iterable[bytes], headers: Mapping[str, str]
) -> Bootstrap:
    """Parse a bootstrap response already received (``headers`` are the response's)."""
    reader = BootstrapReader(content_type)
    for chunk in [body] if isinstance(body, bytes) else body:
        reader.feed(chunk)
    return reader.finish(headers)


def _header(headers: Mapping[str, str], name: str) -> str:
    value = headers.get(name.lower())
    if value is None:
        raise BootstrapFormatError(f"the response has no {name} header")
    return value
