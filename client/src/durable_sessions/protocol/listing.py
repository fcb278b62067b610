"""What the server says about streams: a HEAD's headers, a bucket listing's pages.

``GET /ds/{bucket}/streams?limit=&after=`` answers pages of
``{"streams": [...], "next_cursor": ..., "has_more": ...}`` (extensions §1);
each row becomes a `StreamInfo` like a HEAD's answer does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

from durable_sessions.protocol.content_types import is_json
from durable_sessions.protocol.headers import (
    CONTENT_TYPE,
    STREAM_CLOSED,
    STREAM_NEXT_OFFSET,
    STREAM_SNAPSHOT_OFFSET,
    is_true,
)
from durable_sessions.protocol.offsets import parse_offset

if TYPE_CHECKING:
    from collections.abc import Mapping

# The most rows the server returns per listing page.
LISTING_PAGE_LIMIT = 1000
CLOSED_STATUS = "Closed"


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """A stream's metadata: from a HEAD, a bucket listing or a subscription claim.

    ``tail`` and ``snapshot_offset`` are byte positions (see
    `durable_sessions.protocol.offsets`); ``content_type`` is None when
    the source did not say.
    """

    path: str
    content_type: str | None
    tail: int
    closed: bool = False
    created_ms: int | None = None
    snapshot_offset: int | None = None

    @property
    def is_json(self) -> bool:
        """Whether the stream is in JSON mode."""
        return is_json(self.content_type)

    @classmethod
    def from_headers(cls, path: str, headers: Mapping[str, str]) -> StreamInfo:
        """From a HEAD (or read) response's headers; ``headers`` must look names up in any case
        (an ``httpx.Headers`` does)."""
        snapshot = headers.get(STREAM_SNAPSHOT_OFFSET)
        return cls(
            path=path,
            content_type=headers.get(CONTENT_TYPE),
            tail=parse_offset(headers.get(STREAM_NEXT_OFFSET) or "-1"),
            closed=is_true(headers.get(STREAM_CLOSED)),
            snapshot_offset=None if snapshot is None else parse_offset(snapshot),
        )


class _Row(msgspec.Struct):
    stream_id: str
    content_type: str
    tail_offset: int
    status: str = "Open"
    created_at_ms: int | None = None


class _Page(msgspec.Struct):
    streams: list[_Row]
    next_cursor: str | None = None
    has_more: bool = False


_page = msgspec.json.Decoder(_Page)


@dataclass(frozen=True, slots=True)
class ListingPage:
    """One page of a bucket listing; ``next_cursor`` is the next request's ``after``."""

    streams: list[StreamInfo]
    next_cursor: str | None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


class ListingFormatError(ValueError):
    """The listing body is not the documented JSON shape."""


def parse_listing(bucket: str, body: bytes) -> ListingPage:
    """A listing page of ``bucket``; stream paths are ``{bucket}/{stream_id}``."""
    try:
        page = _page.decode(body)
    except msgspec.DecodeError as exc:
        raise ListingFormatError(f"bucket {bucket}: malformed listing ({exc})") from None
    return ListingPage(
        streams=[
            StreamInfo(
                path=f"{bucket}/{row.stream_id}",
                content_type=row.content_type,
                tail=row.tail_offset,
                closed=row.status == CLOSED_STATUS,
                created_ms=row.created_at_ms,
            )
            for row in page.streams
        ],
        next_cursor=page.next_cursor if page.has_more else None,
    )
