"""`StreamServer`: a ds-server addressed by stream path, for synchronous batch readers.

What analytics jobs and tools say to a server, as blocking calls on one
httpx client: a stream's metadata, a bucket's streams, one catch-up read of
a JSON stream, where a read would end (headers only), a streamed
``/bootstrap``, and a stream's snapshots. Stream paths are as on
``/v1/stream/{path}``; a path of two segments is also a bucket stream
(``/ds/{bucket}/{stream}``), which is where snapshots and ``/bootstrap``
live. Nothing here holds a whole stream: reads are one page, a bootstrap's
messages are yielded as they arrive.

Failures raise the official client's exceptions (`StreamNotFoundError`
for 404, `RetentionGoneError` for 410, ``DurableStreamError`` with the
status otherwise, ``BootstrapFormatError`` for a malformed bootstrap), and
`ServerUnreachableError` when the server does not answer; their
``message`` is one line that names the stream.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import msgspec
from durable_streams import DurableStreamError, FetchError, RetentionGoneError, StreamNotFoundError

from durable_sessions._http import shared_ssl_context
from durable_sessions.protocol.bootstrap import NO_SNAPSHOT, BootstrapFormatError
from durable_sessions.protocol.content_types import JSON, is_json
from durable_sessions.protocol.headers import (
    CONTENT_TYPE,
    STREAM_NEXT_OFFSET,
    STREAM_SNAPSHOT_OFFSET,
    STREAM_UP_TO_DATE,
    is_true,
)
from durable_sessions.protocol.listing import LISTING_PAGE_LIMIT, StreamInfo, parse_listing
from durable_sessions.protocol.multipart import MultipartError, boundary_of, iter_parts
from durable_sessions.protocol.offsets import format_offset, parse_offset
from durable_sessions.protocol.patterns import PatternError
from durable_sessions.protocol.urls import (
    bucket_stream_url,
    listing_url,
    snapshot_url,
    stream_url,
)
from durable_sessions.tokens import token_auth

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterator

    from durable_sessions.protocol.patterns import Pattern
    from durable_sessions.tokens import TokenSource

# Reads of a large stream may wait on the server's disk; connecting should not wait long.
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)

_raw_messages = msgspec.json.Decoder(list[msgspec.Raw])


class ServerUnreachableError(FetchError):
    """The server did not answer (refused, reset, timed out)."""


@dataclass(frozen=True, slots=True)
class JsonRead:
    """One catch-up read of a JSON stream: its messages as stored, and where to go on."""

    start: int
    """The byte position the read started at."""
    messages: list[bytes]
    """Each message's JSON text, byte for byte as the server stored it."""
    next_offset: int
    """The byte position the next read starts at."""
    up_to_date: bool
    """Whether the read reached the tail."""


@dataclass(frozen=True, slots=True)
class BootstrapStream:
    """A ``/bootstrap`` of a JSON stream being received: the snapshot, then the messages.

    ``messages`` yields each retained message's JSON text as its part
    arrives; consume it inside `StreamServer.bootstrap`'s ``with``.
    """

    snapshot: bytes | None
    """The snapshot (JSON), None when the stream has none."""
    start: int
    """Where the snapshot was taken; the messages follow it (0 without a snapshot)."""
    next_offset: int
    """The byte position a read continues from after the messages."""
    messages: Iterator[bytes]


class StreamServer:
    """A ds-server at ``base_url``; ``with`` closes its connections.

    ``token`` is a bearer token source (`durable_sessions.tokens`: a file is
    read again when it changes and after a 401). ``verify`` is httpx's
    (a CA bundle's SSL context, or False); the default trusts the system's
    and ``SSL_CERT_FILE``'s certificates.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        verify: ssl.SSLContext | bool | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            timeout=timeout,
            auth=token_auth(token),
            verify=shared_ssl_context() if verify is None else verify,
        )

    def __enter__(self) -> StreamServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def stream_url(self, path: str) -> str:
        """``{base}/v1/stream/{path}``."""
        return stream_url(self.base_url, path)

    def extension_url(self, path: str) -> str | None:
        """Where a stream's snapshots and ``/bootstrap`` are served: below ``/ds`` for a
        stream of two segments (its bucket's), below ``/v1/stream`` for a top-level one;
        None for deeper paths, which have neither."""
        segments = path.strip("/").split("/")
        if len(segments) == 1:
            return self.stream_url(path)
        if len(segments) != 2:
            return None
        return bucket_stream_url(self.base_url, path)

    # -- metadata ------------------------------------------------------------

    def head(self, path: str) -> StreamInfo | None:
        """The stream's metadata, or None when it does not exist."""
        response = self._send("HEAD", self.stream_url(path))
        if response.status_code == 404:
            return None
        _expect(response, path)
        return StreamInfo.from_headers(path, response.headers)

    def list_bucket(self, bucket: str) -> list[StreamInfo]:
        """Every stream of ``bucket`` (all pages); empty when the bucket does not exist."""
        streams: list[StreamInfo] = []
        after: str | None = None
        url = listing_url(self.base_url, bucket)
        while True:
            params = {"limit": str(LISTING_PAGE_LIMIT)}
            if after is not None:
                params["after"] = after
            response = self._send("GET", url, params=params)
            if response.status_code == 404:
                return []
            _expect(response, f"bucket {bucket}")
            page = parse_listing(bucket, response.content)
            streams += page.streams
            if page.next_cursor is None:
                return streams
            after = page.next_cursor

    def find(self, pattern: Pattern) -> list[StreamInfo]:
        """The streams ``pattern`` names now: one HEAD for a literal path (nothing when
        it does not exist), one bucket listing otherwise.

        Raises `PatternError` for a pattern that is not `Pattern.listable`.
        """
        if pattern.literal:
            info = self.head(pattern.text)
            return [] if info is None else [info]
        if pattern.bucket is None:
            raise PatternError(f"stream pattern {pattern.text!r} cannot be listed")
        return [info for info in self.list_bucket(pattern.bucket) if pattern.matches(info.path)]

    # -- reads ---------------------------------------------------------------

    def read(self, path: str, position: int) -> JsonRead:
        """One catch-up read of a JSON stream from ``position`` (a message boundary)."""
        response = self._send(
            "GET", self.stream_url(path), params={"offset": format_offset(position)}
        )
        _expect(response, f"stream {path}")
        try:
            messages = [bytes(raw) for raw in _raw_messages.decode(response.content)]
        except msgspec.DecodeError:
            raise DurableStreamError(
                f"stream {path} did not answer a JSON array: not JSON", code="NOT_JSON"
            ) from None
        return JsonRead(
            start=position,
            messages=messages,
            next_offset=parse_offset(response.headers[STREAM_NEXT_OFFSET]),
            up_to_date=is_true(response.headers.get(STREAM_UP_TO_DATE)),
        )

    def next_boundary(self, path: str, position: int) -> int:
        """Where a read from ``position`` would end: a message boundary about one read past it.

        Only the response's headers are read; the connection is dropped
        before its body, so finding boundaries (to split a stream into
        ranges read in parallel) transfers no data.
        """
        request = self._http.build_request(
            "GET", self.stream_url(path), params={"offset": format_offset(position)}
        )
        with self._streamed(request) as response:
            if response.status_code != 200:
                response.read()
                _expect(response, f"stream {path}")
            return parse_offset(response.headers[STREAM_NEXT_OFFSET])

    @contextlib.contextmanager
    def bootstrap(self, path: str) -> Iterator[BootstrapStream]:
        """A JSON stream's snapshot and retained messages, streamed.

        A stream with no ``/bootstrap`` (deeper than two segments, or two
        segments outside any bucket) has no snapshot: its first read from
        the beginning stands in.
        """
        url = self.extension_url(path)
        if url is None:
            yield self._from_beginning(path)
            return
        request = self._http.build_request("GET", url + "/bootstrap")
        with self._streamed(request) as response:
            if response.status_code == 404 and self.head(path) is not None:
                yield self._from_beginning(path)
                return
            if response.status_code != 200:
                response.read()
                _expect(response, f"stream {path}")
            try:
                parts = iter_parts(response.iter_bytes(), _boundary(response, path))
                snapshot_type, snapshot = next(parts)
            except MultipartError as exc:
                raise BootstrapFormatError(f"stream {path}: malformed bootstrap ({exc})") from None
            snapshot_at = response.headers.get(STREAM_SNAPSHOT_OFFSET, NO_SNAPSHOT)
            has_snapshot = snapshot_at != NO_SNAPSHOT
            if has_snapshot and not is_json(snapshot_type):
                raise _not_json(f"stream {path} has a snapshot of type {snapshot_type}, not JSON")
            yield BootstrapStream(
                snapshot=snapshot if has_snapshot else None,
                # Without a snapshot nothing was cut: the retained messages start at 0.
                start=parse_offset(snapshot_at) if has_snapshot else 0,
                next_offset=parse_offset(response.headers[STREAM_NEXT_OFFSET]),
                messages=_json_bodies(parts, path),
            )

    def _from_beginning(self, path: str) -> BootstrapStream:
        first = self.read(path, 0)
        return BootstrapStream(None, 0, first.next_offset, iter(first.messages))

    # -- snapshots -----------------------------------------------------------

    def snapshot(self, path: str, position: int) -> bytes:
        """The JSON snapshot published at ``position``.

        A 404 means it was replaced by a newer one since the stream's HEAD
        or bootstrap named it: `StreamNotFoundError` says so.
        """
        url = self._snapshots_of(path)
        response = self._send("GET", snapshot_url(url, format_offset(position)))
        if response.status_code == 404:
            raise StreamNotFoundError(
                f"stream {path}: its snapshot at {format_offset(position)} was replaced "
                "while reading; run again"
            )
        _expect(response, f"stream {path}")
        if not is_json(response.headers.get(CONTENT_TYPE)):
            raise _not_json(f"stream {path} has a snapshot that is not JSON")
        return response.content

    def put_snapshot(self, path: str, position: int, body: bytes) -> int:
        """``PUT {stream}/snapshot/{offset}`` of a JSON snapshot; the status code.

        204 when published; the caller decides what other answers mean (409:
        a newer snapshot exists; 400: ``position`` is not a message boundary).
        """
        url = self._snapshots_of(path)
        response = self._send(
            "PUT",
            snapshot_url(url, format_offset(position)),
            content=body,
            headers={CONTENT_TYPE: JSON},
        )
        return response.status_code

    def _snapshots_of(self, path: str) -> str:
        url = self.extension_url(path)
        if url is None:
            raise DurableStreamError(
                f"stream {path} is in no bucket, so it has no snapshots", code="NO_SNAPSHOTS"
            )
        return url

    # -- requests ------------------------------------------------------------

    def _send(self, method: str, url: str, **kwargs: object) -> httpx.Response:
        try:
            return self._http.request(method, url, **kwargs)  # type: ignore[arg-type]
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None

    @contextlib.contextmanager
    def _streamed(self, request: httpx.Request) -> Iterator[httpx.Response]:
        try:
            response = self._http.send(request, stream=True)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        try:
            yield response
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        finally:
            response.close()

    def _unreachable(self, exc: httpx.TransportError) -> ServerUnreachableError:
        return ServerUnreachableError(
            f"ds-server at {self.base_url} is unreachable ({type(exc).__name__})",
            url=self.base_url,
        )


def _json_bodies(parts: Iterator[tuple[str, bytes]], path: str) -> Iterator[bytes]:
    try:
        for content_type, body in parts:
            if not is_json(content_type):
                raise _not_json(f"stream {path} holds {content_type} data, not JSON")
            yield body
    except MultipartError as exc:
        raise BootstrapFormatError(f"stream {path}: malformed bootstrap ({exc})") from None


def _boundary(response: httpx.Response, path: str) -> bytes:
    try:
        return boundary_of(response.headers.get(CONTENT_TYPE, ""))
    except MultipartError as exc:
        raise BootstrapFormatError(f"stream {path}: {exc}") from None


def _not_json(message: str) -> DurableStreamError:
    return DurableStreamError(message, code="NOT_JSON")


def _expect(response: httpx.Response, what: str) -> None:
    """Raise for any answer but 200, naming ``what``."""
    status = response.status_code
    if status == 200:
        return
    if status == 404:
        raise StreamNotFoundError(f"{what} does not exist (404)")
    if status == 410:
        raise RetentionGoneError(
            f"{what}: offset before the earliest retained one (410); a snapshot moved retention"
        )
    text = response.text.strip()
    reason = text.splitlines()[0] if text else ""
    raise DurableStreamError(f"{what}: HTTP {status} {reason}".rstrip(), status=status)
