"""``GET {stream}/bootstrap``: a stream's snapshot and retained messages in one response.

The multipart body is parsed with the standard library's MIME parser
(``email``), fed as the response arrives. The parsed result holds the whole
bootstrap in memory; that is what a caller applying it needs anyway.
"""

from __future__ import annotations

import email.parser
import email.policy
from dataclasses import dataclass
from email.message import EmailMessage
from typing import TYPE_CHECKING

from durable_streams import DurableStreamError

from ds_client._errors import http_error
from ds_client._http import owned_client

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import httpx

NO_SNAPSHOT = "-1"
STREAM_SNAPSHOT_OFFSET = "Stream-Snapshot-Offset"
STREAM_NEXT_OFFSET = "Stream-Next-Offset"
STREAM_UP_TO_DATE = "Stream-Up-To-Date"


class BootstrapFormatError(DurableStreamError):
    """The bootstrap response is not a well-formed multipart/mixed body."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="BAD_BOOTSTRAP")


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """A stream's state to start from: the snapshot, then every message after it.

    ``snapshot`` is None (and ``snapshot_offset`` is ``-1``) when the stream
    has no snapshot; ``messages`` then start at the stream's beginning.
    Continue with a live read from ``next_offset``.
    """

    snapshot: bytes | None
    snapshot_content_type: str | None
    snapshot_offset: str
    messages: list[tuple[str, bytes]]
    next_offset: str
    up_to_date: bool


async def bootstrap(
    url: str,
    *,
    client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
) -> Bootstrap:
    """Fetch and parse ``{url}/bootstrap``.

    Raises the official client's ``StreamNotFoundError`` for 404,
    ``DurableStreamError`` for other failures, and ``BootstrapFormatError``
    when the body is not valid multipart.
    """
    async with owned_client(client) as http:
        request = http.build_request("GET", url.rstrip("/") + "/bootstrap", headers=headers)
        response = await http.send(request, stream=True)
        try:
            if response.status_code != 200:
                body = (await response.aread()).decode("utf-8", "replace")
                raise http_error(response.status_code, url, body)
            parser = _start(response.headers.get("Content-Type", ""))
            async for chunk in response.aiter_bytes():
                parser.feed(chunk)
        finally:
            await response.aclose()
    return _finish(parser, response.headers)


def parse_bootstrap(
    content_type: str, body: bytes | Iterable[bytes], headers: Mapping[str, str]
) -> Bootstrap:
    """Parse a bootstrap response already received (``headers`` are the response's)."""
    parser = _start(content_type)
    for chunk in [body] if isinstance(body, bytes) else body:
        parser.feed(chunk)
    return _finish(parser, headers)


def _start(content_type: str) -> email.parser.BytesFeedParser[EmailMessage]:
    if not content_type.lower().startswith("multipart/"):
        raise BootstrapFormatError(f"expected a multipart body, got {content_type!r}")
    parser = email.parser.BytesFeedParser(EmailMessage, policy=email.policy.HTTP)
    # The MIME parser reads an entity: its header is the response's Content-Type.
    parser.feed(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n")
    return parser


def _finish(
    parser: email.parser.BytesFeedParser[EmailMessage], headers: Mapping[str, str]
) -> Bootstrap:
    message = parser.close()
    if not message.is_multipart() or message.defects:
        raise BootstrapFormatError(f"malformed multipart body: {message.defects}")
    parts: list[tuple[str, bytes]] = []
    for part in message.iter_parts():
        body = part.get_payload(decode=True)
        if part.defects or not isinstance(body, bytes):
            raise BootstrapFormatError(f"malformed part: {part.defects}")
        # The header as sent: the parsed form would re-quote its parameters.
        content_type = next(
            (value for name, value in part.raw_items() if name.lower() == "content-type"),
            "application/octet-stream",
        )
        parts.append((content_type, body))
    if not parts:
        raise BootstrapFormatError("a bootstrap has at least the snapshot part")
    headers = {name.lower(): value for name, value in headers.items()}
    snapshot_offset = _header(headers, STREAM_SNAPSHOT_OFFSET)
    (first_type, first_body), messages = parts[0], parts[1:]
    has_snapshot = snapshot_offset != NO_SNAPSHOT
    return Bootstrap(
        snapshot=first_body if has_snapshot else None,
        snapshot_content_type=first_type if has_snapshot else None,
        snapshot_offset=snapshot_offset,
        messages=messages,
        next_offset=_header(headers, STREAM_NEXT_OFFSET),
        up_to_date=headers.get(STREAM_UP_TO_DATE.lower(), "").lower() == "true",
    )


def _header(headers: Mapping[str, str], name: str) -> str:
    value = headers.get(name.lower())
    if value is None:
        raise BootstrapFormatError(f"the response has no {name} header")
    return value
