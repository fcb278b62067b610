"""The few ds-server requests the readers and the snapshot job make, over a sync httpx client.

Stream paths are as on ``/v1/stream/{path}``; a path of two segments may
also be a bucket stream (``/ds/{bucket}/{stream}``), which is where
snapshots and /bootstrap live.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

import httpx
import msgspec
from durable_sessions.tokens import token_auth

from ds_spark.errors import ServerUnreachable, StreamError
from ds_spark.multipart import MultipartError, boundary_of, iter_parts
from ds_spark.offsets import format_offset, parse_offset

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_spark.tokens import Token

STREAM_NEXT_OFFSET = "Stream-Next-Offset"
STREAM_SNAPSHOT_OFFSET = "Stream-Snapshot-Offset"
STREAM_UP_TO_DATE = "Stream-Up-To-Date"
STREAM_CLOSED = "Stream-Closed"
NO_SNAPSHOT = "-1"
JSON = "application/json"
# Reads of a large stream may wait on the server's disk; connecting should not wait long.
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """What a HEAD or a bucket listing says of a stream."""

    path: str
    content_type: str
    tail: int
    snapshot_offset: int | None = None

    @property
    def is_json(self) -> bool:
        return self.content_type.split(";", 1)[0].strip().lower() == JSON


@dataclass(frozen=True, slots=True)
class Read:
    """One catch-up read: its start, its messages as stored, and where the next read starts."""

    start: int
    messages: list[bytes]
    next_offset: int
    up_to_date: bool


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """A /bootstrap response being received: the snapshot, then the retained messages."""

    snapshot: bytes | None
    start: int
    next_offset: int
    messages: Iterator[bytes]


class _ListingRow(msgspec.Struct):
    stream_id: str
    content_type: str
    tail_offset: int


class _Listing(msgspec.Struct):
    streams: list[_ListingRow]
    next_cursor: str | None = None
    has_more: bool = False


_raw_messages = msgspec.json.Decoder(list[msgspec.Raw])
_listing = msgspec.json.Decoder(_Listing)


class ServerApi:
    """A ds-server at ``base_url``; use as a context manager so the connections close."""

    def __init__(self, base_url: str, token: Token | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        # A token file is read again when it changes, and after a 401 (ds_spark.tokens).
        self._http = httpx.Client(timeout=DEFAULT_TIMEOUT, auth=token_auth(token or None))

    def __enter__(self) -> ServerApi:
        return self

    def __exit__(self, *_: object) -> None:
        self._http.close()

    def stream_url(self, path: str) -> str:
        return f"{self.base_url}/v1/stream/{_quote_path(path)}"

    def extension_url(self, path: str) -> str | None:
        """Where a stream's snapshots and /bootstrap are served: below /ds for a stream of
        two segments (its bucket's), below /v1/stream for a top-level one (``session-events``);
        None for deeper paths, which have neither."""
        segments = path.split("/")
        if len(segments) == 1:
            return self.stream_url(path)
        if len(segments) != 2:
            return None
        return f"{self.base_url}/ds/{_quote_path(path)}"

    # -- metadata ------------------------------------------------------------

    def head(self, path: str) -> StreamInfo | None:
        """The stream's metadata, or None when it does not exist."""
        response = self._send("HEAD", self.stream_url(path))
        if response.status_code == 404:
            return None
        _expect(response, 200, path)
        snapshot = response.headers.get(STREAM_SNAPSHOT_OFFSET)
        return StreamInfo(
            path=path,
            content_type=response.headers.get("Content-Type", ""),
            tail=parse_offset(response.headers[STREAM_NEXT_OFFSET]),
            snapshot_offset=None if snapshot is None else parse_offset(snapshot),
        )

    def list_bucket(self, bucket: str) -> list[StreamInfo]:
        """Every stream of a bucket (paged); empty when the bucket does not exist."""
        streams: list[StreamInfo] = []
        after: str | None = None
        while True:
            params = {"limit": "1000"} if after is None else {"limit": "1000", "after": after}
            url = f"{self.base_url}/ds/{quote(bucket, safe='')}/streams"
            response = self._send("GET", url, params=params)
            if response.status_code == 404:
                return []
            _expect(response, 200, bucket)
            page = _listing.decode(response.content)
            streams += [
                StreamInfo(f"{bucket}/{row.stream_id}", row.content_type, row.tail_offset)
                for row in page.streams
            ]
            if not page.has_more or page.next_cursor is None:
                return streams
            after = page.next_cursor

    # -- reads ---------------------------------------------------------------

    def read(self, path: str, position: int) -> Read:
        """One catch-up read from ``position`` (a message boundary) of a JSON stream."""
        response = self._send(
            "GET", self.stream_url(path), params={"offset": format_offset(position)}
        )
        _expect(response, 200, path)
        try:
            messages = [bytes(raw) for raw in _raw_messages.decode(response.content)]
        except msgspec.DecodeError:
            raise StreamError(f"stream {path} did not answer a JSON array: not JSON") from None
        return Read(
            start=position,
            messages=messages,
            next_offset=parse_offset(response.headers[STREAM_NEXT_OFFSET]),
            up_to_date=response.headers.get(STREAM_UP_TO_DATE, "").lower() == "true",
        )

    def next_boundary(self, path: str, position: int) -> int:
        """Where a read from ``position`` would end: a message boundary about one read past it.

        Only the response's headers are read; the connection is dropped
        before its body, so finding boundaries costs no transfer of data.
        """
        request = self._http.build_request(
            "GET", self.stream_url(path), params={"offset": format_offset(position)}
        )
        try:
            response = self._http.send(request, stream=True)
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from None
        try:
            if response.status_code != 200:
                response.read()
                _expect(response, 200, path)
            return parse_offset(response.headers[STREAM_NEXT_OFFSET])
        finally:
            response.close()

    @contextlib.contextmanager
    def bootstrap(self, path: str) -> Iterator[Bootstrap]:
        """The snapshot and retained messages; a stream outside any bucket reads from -1."""
        url = self.extension_url(path)
        if url is None:
            yield self._from_beginning(path)
            return
        request = self._http.build_request("GET", url + "/bootstrap")
        try:
            response = self._http.send(request, stream=True)
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from None
        try:
            if response.status_code == 404 and self.head(path) is not None:
                # Two segments but no such bucket: a plain stream has no snapshot.
                yield self._from_beginning(path)
                return
            if response.status_code != 200:
                response.read()
                _expect(response, 200, path)
            parts = iter_parts(response.iter_bytes(), _boundary(response, path))
            snapshot_type, snapshot = next(parts)
            snapshot_at = response.headers.get(STREAM_SNAPSHOT_OFFSET, NO_SNAPSHOT)
            has_snapshot = snapshot_at != NO_SNAPSHOT
            if has_snapshot and not _is_json(snapshot_type):
                raise StreamError(f"stream {path} has a snapshot of type {snapshot_type}, not JSON")
            yield Bootstrap(
                snapshot=snapshot if has_snapshot else None,
                # Without a snapshot nothing was cut: the retained messages start at 0.
                start=parse_offset(snapshot_at) if has_snapshot else 0,
                next_offset=parse_offset(response.headers[STREAM_NEXT_OFFSET]),
                messages=_bodies(parts, path),
            )
        except MultipartError as exc:
            raise StreamError(f"stream {path}: malformed bootstrap ({exc})") from None
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from None
        finally:
            response.close()

    def _from_beginning(self, path: str) -> Bootstrap:
        first = self.read(path, 0)
        return Bootstrap(None, 0, first.next_offset, iter(first.messages))

    # -- snapshots -----------------------------------------------------------

    def snapshot(self, path: str, position: int) -> bytes:
        """The snapshot published at ``position`` (a JSON blob)."""
        url = self.extension_url(path)
        if url is None:
            raise StreamError(f"stream {path} is in no bucket, so it has no snapshot")
        response = self._send("GET", f"{url}/snapshot/{format_offset(position)}")
        if response.status_code == 404:
            raise StreamError(
                f"stream {path}: its snapshot at {format_offset(position)} was replaced "
                "while reading; run again"
            )
        _expect(response, 200, path)
        if not _is_json(response.headers.get("Content-Type", "")):
            raise StreamError(f"stream {path} has a snapshot that is not JSON")
        return response.content

    def put_snapshot(self, path: str, position: int, body: bytes) -> int:
        """``PUT {stream}/snapshot/{offset}``; the status code (204 when published)."""
        url = self.extension_url(path)
        if url is None:
            raise StreamError(f"stream {path} is in no bucket, so it can't have a snapshot")
        response = self._send(
            "PUT",
            f"{url}/snapshot/{format_offset(position)}",
            content=body,
            headers={"Content-Type": JSON},
        )
        return response.status_code

    def _send(self, method: str, url: str, **kwargs: object) -> httpx.Response:
        try:
            return self._http.request(method, url, **kwargs)  # type: ignore[arg-type]
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from None


def _bodies(parts: Iterator[tuple[str, bytes]], path: str) -> Iterator[bytes]:
    for content_type, body in parts:
        if not _is_json(content_type):
            raise StreamError(f"stream {path} holds {content_type} data, not JSON")
        yield body


def _boundary(response: httpx.Response, path: str) -> bytes:
    try:
        return boundary_of(response.headers.get("Content-Type", ""))
    except MultipartError as exc:
        raise StreamError(f"stream {path}: {exc}") from None


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == JSON


def _quote_path(path: str) -> str:
    return "/".join(quote(segment, safe="") for segment in path.split("/"))


def _expect(response: httpx.Response, status: int, what: str) -> None:
    if response.status_code == status:
        return
    reason = response.text.strip().splitlines()[0] if response.text.strip() else ""
    if response.status_code == 404:
        raise StreamError(f"stream {what} does not exist (404)")
    if response.status_code == 410:
        raise StreamError(
            f"stream {what}: offset before the earliest retained one (410); "
            "a snapshot moved retention, its history is in Postgres"
        )
    raise StreamError(f"{what}: HTTP {response.status_code} {reason}".rstrip())


def _unreachable(base_url: str, exc: httpx.TransportError) -> ServerUnreachable:
    return ServerUnreachable(f"ds-server at {base_url} is unreachable ({type(exc).__name__})")
