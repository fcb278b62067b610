"""A producer's requests: POSTs retried until the server gives an answer worth deciding on.

Broken connections, 408, 429 and 5xx are retried with the same headers (so
with the same epoch and seq: the server keeps a batch once whatever happened
to earlier attempts) under a :class:`RetryPolicy`; any other answer is the
producer's to interpret. The stream's content type is asked once, with a
HEAD, when the producer was not told it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import httpx

from durable_sessions._errors import http_error
from durable_sessions._http import shared_ssl_context
from durable_sessions.producer.batches import Backoff, RetryPolicy
from durable_sessions.protocol.content_types import OCTET_STREAM
from durable_sessions.protocol.headers import CONTENT_TYPE

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Mapping

    from httpx._client import UseClientDefault

# Answers after which the request may or may not have been applied: retried.
RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class ProducerTransport:
    """POSTs to one stream with retries; its own httpx client unless given one."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str],
        auth: httpx.Auth | UseClientDefault,
        retry: RetryPolicy | None,
        content_type: str | None,
        client: httpx.AsyncClient | None,
        connections: int,
        verify: ssl.SSLContext | bool | None = None,
    ) -> None:
        self.url = url
        self.headers = dict(headers)
        self._auth = auth
        self._retry = retry or RetryPolicy()
        self._content_type = content_type
        self._content_type_lock = asyncio.Lock()
        self._own_client = client is None
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(30.0),
            limits=httpx.Limits(max_connections=connections),
            verify=shared_ssl_context() if verify is None else verify,
        )

    async def post(
        self, body: bytes, headers: Mapping[str, str], maybe_applied: Callable[[], None]
    ) -> httpx.Response:
        """POST until an answer that is not retried; ``maybe_applied()`` is called whenever an
        attempt ended without telling whether the server applied it."""
        backoff = Backoff(self._retry)
        while True:
            try:
                response = await self._client.post(
                    self.url, content=body, headers=headers, auth=self._auth
                )
            except httpx.TransportError as exc:
                maybe_applied()
                await asyncio.sleep(backoff.next_delay(f"{type(exc).__name__}: {exc}"))
                continue
            status = response.status_code
            if status not in RETRIED_STATUSES:
                return response
            if status >= 500:
                maybe_applied()
            await asyncio.sleep(backoff.next_delay(f"HTTP {status}"))

    def known_content_type(self) -> str:
        """The content type for request headers: as known so far."""
        return self._content_type or OCTET_STREAM

    async def content_type(self) -> str:
        """The stream's content type: as given, or asked once with a HEAD."""
        if self._content_type is None:
            async with self._content_type_lock:
                if self._content_type is None:
                    response = await self._client.head(
                        self.url, headers=self.headers, auth=self._auth
                    )
                    if response.status_code != 200:
                        raise http_error(response.status_code, self.url)
                    self._content_type = response.headers.get(CONTENT_TYPE, OCTET_STREAM)
        return self._content_type

    async def aclose(self) -> None:
        """Close the client if it is the transport's own."""
        if self._own_client:
            await self._client.aclose()
