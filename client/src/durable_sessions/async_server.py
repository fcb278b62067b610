"""`AsyncStreamServer`: a ds-server addressed by stream path, for asyncio services.

The async twin of `durable_sessions.server.StreamServer`, for services
that watch many streams (ds-sync): a stream's metadata, a bucket's streams,
the streams a pattern names, creating buckets and JSON streams, appending,
publishing snapshots, and pull-wake subscriptions (configure, claim, ack,
renew, release). Reading streams is left to `durable_sessions.follow`,
`durable_sessions.bootstrap` and `durable_sessions.sse_reader`; they take
`AsyncStreamServer.http` and `AsyncStreamServer.auth_headers`.

Calls made many times a second — claims, acks, renewals, appends — go
through `durable_sessions.http1.Http1Client` (a twentieth of httpx's CPU
per request); the rest through an httpx client. Every request carries the
token the provider holds at that moment; after a 401 the provider is asked
to refresh and the request is sent once more if the token changed.

An answer other than the ones a call expects raises
`UnexpectedStatusError` (the official client's ``DurableStreamError``,
with the status and the server's error ``code``). A server that does not
answer raises what the transport raises: ``httpx.TransportError`` from the
httpx calls (`head`, `list_bucket`, `find`, `ensure_bucket`,
`create_json_stream`, `put_subscription`, `publish_snapshot`), ``OSError``
or ``TimeoutError`` from the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import msgspec
from durable_streams import DurableStreamError

from durable_sessions._http import DEFAULT_TIMEOUT, shared_ssl_context
from durable_sessions.http1 import Http1Client
from durable_sessions.protocol.content_types import JSON
from durable_sessions.protocol.headers import AUTHORIZATION, CONTENT_TYPE
from durable_sessions.protocol.listing import LISTING_PAGE_LIMIT, StreamInfo, parse_listing
from durable_sessions.protocol.offsets import format_offset
from durable_sessions.protocol.patterns import PatternError
from durable_sessions.protocol.subscriptions import (
    ack_body,
    claim_body,
    error_code,
    parse_grant,
    release_body,
    renew_body,
)
from durable_sessions.protocol.urls import (
    bucket_stream_url,
    bucket_url,
    listing_url,
    snapshot_url,
    stream_url,
    subscription_url,
)
from durable_sessions.tokens import UNAUTHORIZED, token_provider

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterable, Mapping
    from typing import Any

    from durable_sessions.http1 import Response
    from durable_sessions.protocol.patterns import Pattern
    from durable_sessions.protocol.subscriptions import Grant
    from durable_sessions.tokens import TokenProvider, TokenSource

__all__ = ["AsyncStreamServer", "UnexpectedStatusError"]

_CREATED, _OK, _NO_CONTENT, _NOT_FOUND, _CONFLICT = 201, 200, 204, 404, 409


class UnexpectedStatusError(DurableStreamError):
    """The server answered with a status the call does not expect.

    ``status`` is the HTTP status, ``code`` the ``error.code`` of the body
    when the server sent one (``ALREADY_CLAIMED``, ``STREAM_EXISTS``, ...),
    ``details`` the body's text.
    """

    status: int

    def __init__(self, what: str, status: int, body: str) -> None:
        super().__init__(
            f"{what}: HTTP {status} {body[:200]}".rstrip(),
            status=status,
            code=error_code(body),
            details=body,
        )


class AsyncStreamServer:
    """A ds-server at ``base_url``; ``async with`` closes the connections it opened.

    ``token`` is a bearer token source (`durable_sessions.tokens`). ``http``
    and ``lean`` are clients to share (a service's readers use the same
    httpx client); what is not given is made here and closed by `aclose`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource | None = None,
        http: httpx.AsyncClient | None = None,
        lean: Http1Client | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        verify: ssl.SSLContext | bool | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token: TokenProvider | None = token_provider(token)
        self._subscription_urls: dict[str, str] = {}
        context = _ssl_context(verify)
        self._own_http = http is None
        self.http = http or httpx.AsyncClient(timeout=timeout, verify=context)
        """The httpx client: for the calls made now and then, and for stream readers."""
        self._own_lean = lean is None
        self.lean = lean or Http1Client(timeout_secs=timeout.connect or 10.0, ssl_context=context)
        """The lean HTTP/1.1 client: for the calls made many times a second."""

    async def __aenter__(self) -> AsyncStreamServer:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the clients made here (given ones stay open)."""
        if self._own_http:
            await self.http.aclose()
        if self._own_lean:
            await self.lean.aclose()

    # -- addresses -----------------------------------------------------------

    def stream_url(self, path: str) -> str:
        """``{base}/v1/stream/{path}``."""
        return stream_url(self.base_url, path)

    def bucket_stream_url(self, path: str) -> str:
        """``{base}/ds/{bucket}/{stream}`` for ``path`` = ``{bucket}/{stream}``: where a
        bucket stream's snapshots and ``/bootstrap`` live."""
        return bucket_stream_url(self.base_url, path)

    def extension_url(self, path: str) -> str | None:
        """Where a stream's snapshots and ``/bootstrap`` are served: below ``/ds`` for a
        stream of two segments, below ``/v1/stream`` for a top-level one; None for
        deeper paths, which have neither."""
        segments = path.strip("/").split("/")
        if len(segments) == 1:
            return self.stream_url(path)
        return self.bucket_stream_url(path) if len(segments) == 2 else None

    async def auth_headers(self) -> dict[str, str]:
        """``Authorization`` with the token the provider holds now (empty without a token):
        for readers that send their own requests."""
        if self.token is None:
            return {}
        return {AUTHORIZATION: f"Bearer {await self.token.atoken()}"}

    # -- metadata ------------------------------------------------------------

    async def head(self, path: str) -> StreamInfo | None:
        """The stream's metadata, or None when it does not exist."""
        response = await self._httpx("HEAD", self.stream_url(path))
        if response.status_code == _NOT_FOUND:
            return None
        _expect(response, f"HEAD {path}", _OK)
        return StreamInfo.from_headers(path, response.headers)

    async def list_bucket(self, bucket: str) -> list[StreamInfo]:
        """Every stream of ``bucket`` (all pages); empty when the bucket does not exist."""
        streams: list[StreamInfo] = []
        params = {"limit": str(LISTING_PAGE_LIMIT)}
        url = listing_url(self.base_url, bucket)
        while True:
            response = await self._httpx("GET", url, params=params)
            if response.status_code == _NOT_FOUND:
                return []
            _expect(response, f"list bucket {bucket}", _OK)
            page = parse_listing(bucket, response.content)
            streams += page.streams
            if page.next_cursor is None:
                return streams
            params = {**params, "after": page.next_cursor}

    async def find(self, pattern: Pattern) -> list[StreamInfo]:
        """The streams ``pattern`` names now: one HEAD for a literal path (nothing when
        it does not exist), one bucket listing otherwise.

        Raises `PatternError` for a pattern that is not `Pattern.listable`.
        """
        if pattern.literal:
            info = await self.head(pattern.text)
            return [] if info is None else [info]
        if pattern.bucket is None:
            raise PatternError(f"stream pattern {pattern.text!r} cannot be listed")
        streams = await self.list_bucket(pattern.bucket)
        return [info for info in streams if pattern.matches(info.path)]

    # -- creating and writing -----------------------------------------------

    async def ensure_bucket(self, bucket: str) -> None:
        """Create ``bucket`` unless it exists (``PUT /ds/{bucket}``; 409 means it does)."""
        response = await self._httpx("PUT", bucket_url(self.base_url, bucket))
        if response.status_code != _CONFLICT:
            _expect(response, f"create bucket {bucket}", _CREATED, _OK)

    async def create_json_stream(self, path: str) -> bool:
        """Create the JSON stream ``path`` (True), or confirm it exists as one (False).

        A stream of another content type (or a closed one) answers 409:
        `UnexpectedStatusError` with status 409.
        """
        response = await self._httpx("PUT", self.stream_url(path), headers={CONTENT_TYPE: JSON})
        _expect(response, f"create stream {path}", _CREATED, _OK)
        return response.status_code == _CREATED

    async def append_json(self, path: str, body: bytes) -> None:
        """Append ``body`` (a JSON value, or an array of messages) to a JSON stream."""
        response = await self._lean("POST", self.stream_url(path), body, {CONTENT_TYPE: JSON})
        _expect(response, f"append to {path}", _OK, _NO_CONTENT)

    async def publish_snapshot(self, path: str, position: int, body: bytes) -> None:
        """Publish ``body`` (JSON) as the fold of stream ``path`` before byte ``position``
        (a message boundary); reads before it answer 410 afterwards.

        Raises `UnexpectedStatusError` for any answer but 204 (409: a newer
        snapshot exists; 400: ``position`` is not a message boundary), and
        ``DurableStreamError`` for a stream that has no snapshots (deeper
        than two segments).
        """
        url = self.extension_url(path)
        if url is None:
            raise DurableStreamError(
                f"stream {path} is in no bucket, so it has no snapshots", code="NO_SNAPSHOTS"
            )
        target = snapshot_url(url, format_offset(position))
        response = await self._httpx("PUT", target, content=body, headers={CONTENT_TYPE: JSON})
        _expect(response, f"snapshot {path}", _NO_CONTENT)

    # -- subscriptions -------------------------------------------------------

    async def put_subscription(self, subscription_id: str, config: Mapping[str, Any]) -> bool:
        """Create (True) or confirm (False) a subscription with ``config``.

        One configured differently (the server answers 409) is deleted and
        made again with ``config``: the caller's configuration wins.
        """
        url = self._subscription_url(subscription_id)
        body = msgspec.json.encode(config)
        headers = {CONTENT_TYPE: JSON}
        response = await self._httpx("PUT", url, content=body, headers=headers)
        if response.status_code == _CONFLICT:
            await self._httpx("DELETE", url)
            response = await self._httpx("PUT", url, content=body, headers=headers)
        _expect(response, f"subscription {subscription_id}", _CREATED, _OK)
        return response.status_code == _CREATED

    async def claim(self, subscription_id: str, worker: str) -> Grant | str:
        """Lease the subscription's pending work as ``worker``: the `Grant`, or the code of
        the 409 refusing it (``ALREADY_CLAIMED``: another worker holds it;
        ``NO_PENDING_WORK``: nothing to hold; ``CONFLICT`` when the body says none)."""
        url = self._subscription_url(subscription_id) + "/claim"
        response = await self._lean("POST", url, claim_body(worker), {CONTENT_TYPE: JSON})
        if response.status_code == _CONFLICT:
            return error_code(response.body) or "CONFLICT"
        _expect(response, f"claim {subscription_id}", _OK)
        return parse_grant(response.body)

    async def ack(
        self, subscription_id: str, grant: Grant, acks: Iterable[tuple[str, str]]
    ) -> None:
        """Acknowledge ``(stream path, offset)`` pairs and end the wake."""
        await self._settle(subscription_id, grant, "ack", ack_body(grant, acks))

    async def renew(self, subscription_id: str, grant: Grant) -> None:
        """Extend the claim's lease (an ack of nothing that does not end the wake)."""
        await self._settle(subscription_id, grant, "ack", renew_body(grant))

    async def release(self, subscription_id: str, grant: Grant) -> None:
        """Hand the wake back unacknowledged (the server announces it again)."""
        await self._settle(subscription_id, grant, "release", release_body(grant))

    async def _settle(self, subscription_id: str, grant: Grant, verb: str, body: bytes) -> None:
        # The grant's token authorises settling the wake, in place of the provider's.
        url = f"{self._subscription_url(subscription_id)}/{verb}"
        headers = {CONTENT_TYPE: JSON, AUTHORIZATION: f"Bearer {grant.token}"}
        response = await self.lean.request("POST", url, content=body, headers=headers)
        _expect(response, f"{verb} {subscription_id}", _OK, _NO_CONTENT)

    def _subscription_url(self, subscription_id: str) -> str:
        # Claims, acks and renewals go to a handful of subscriptions many times a second.
        url = self._subscription_urls.get(subscription_id)
        if url is None:
            url = subscription_url(self.base_url, subscription_id)
            self._subscription_urls[subscription_id] = url
        return url

    # -- requests ------------------------------------------------------------

    async def _httpx(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        token = None if self.token is None else await self.token.atoken()
        sent = _with_token(headers, token)
        response = await self.http.request(
            method, url, params=params, content=content, headers=sent
        )
        if response.status_code == UNAUTHORIZED and token is not None:
            fresh = await self._refreshed(token)
            if fresh is not None:
                sent = _with_token(headers, fresh)
                response = await self.http.request(
                    method, url, params=params, content=content, headers=sent
                )
        return response

    async def _lean(self, method: str, url: str, body: bytes, headers: dict[str, str]) -> Response:
        token = None if self.token is None else await self.token.atoken()
        response = await self.lean.request(
            method, url, content=body, headers=_with_token(headers, token)
        )
        if response.status == UNAUTHORIZED and token is not None:
            fresh = await self._refreshed(token)
            if fresh is not None:
                response = await self.lean.request(
                    method, url, content=body, headers=_with_token(headers, fresh)
                )
        return response

    async def _refreshed(self, rejected: str) -> str | None:
        """A token to retry with after ``rejected`` was answered 401; None if there is no
        other (the 401 stands)."""
        assert self.token is not None
        fresh = await self.token.arefresh(rejected)
        return None if fresh == rejected else fresh


def _ssl_context(verify: ssl.SSLContext | bool | None) -> ssl.SSLContext:
    if verify is None or verify is True:
        return shared_ssl_context()
    if verify is False:
        return httpx.create_ssl_context(verify=False)
    return verify


def _with_token(headers: Mapping[str, str] | None, token: str | None) -> dict[str, str]:
    sent = dict(headers or {})
    if token is not None:
        sent[AUTHORIZATION] = f"Bearer {token}"
    return sent


def _expect(response: httpx.Response | Response, what: str, *statuses: int) -> None:
    if response.status_code not in statuses:
        raise UnexpectedStatusError(what, response.status_code, response.text)
