"""Signed webhook POSTs.

One attempt per call; the waker decides about retries, because only it knows
whether the wake being delivered is still current.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from ds_server.subscriptions.signing import SIGNATURE_HEADER
from ds_server.subscriptions.targets import UnsafeTarget, pin, system_resolver

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable

    import httpx

    from ds_server.subscriptions.signing import SigningKey
    from ds_server.subscriptions.targets import Resolver

DELIVERY_TIMEOUT_SECS = 30.0
# A receiver's answer is only inspected for {"done": true}; ignore anything longer.
MAX_RESPONSE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    delivered: bool  # the receiver answered 2xx
    done: bool  # ... with a JSON body whose "done" is true
    detail: str = ""


class WebhookSender:
    """POSTs wake notifications, signed with the server's key.

    The HTTP client, its CA bundle and the key are made on the first delivery:
    together they add ~10 MiB to a process, which a server without webhook
    subscriptions never needs.
    """

    def __init__(
        self,
        key: Callable[[], SigningKey],
        transport: httpx.AsyncBaseTransport | None = None,
        timeout_secs: float = DELIVERY_TIMEOUT_SECS,
        *,
        allow_private: bool = False,
        resolve: Resolver = system_resolver,
    ) -> None:
        self._key = key
        self._transport = transport
        self._timeout = timeout_secs
        self._allow_private = allow_private
        self._resolve = resolve
        self._client: httpx.AsyncClient | None = None

    async def send(self, url: str, body: bytes) -> DeliveryResult:
        """POST ``body`` to ``url`` once; never raises for network or HTTP failures."""
        try:
            target = await pin(url, allow_private=self._allow_private, resolve=self._resolve)
        except UnsafeTarget as exc:
            return DeliveryResult(delivered=False, done=False, detail=str(exc))
        client = await self._http()
        headers = {
            "host": target.host_header,
            "content-type": "application/json",
            SIGNATURE_HEADER: self._key().signature_header(body, int(time.time())),
        }
        # TLS checks the certificate against the host name, not the pinned address.
        extensions = {"sni_hostname": target.server_name} if target.server_name else None
        import httpx  # loaded by _http() already

        try:
            response, answer = await _post(client, target.urls, body, headers, extensions)
        except httpx.HTTPError as exc:
            return DeliveryResult(delivered=False, done=False, detail=f"{type(exc).__name__}")
        if not response.is_success:
            return DeliveryResult(
                delivered=False, done=False, detail=f"HTTP {response.status_code}"
            )
        return DeliveryResult(delivered=True, done=_says_done(answer))

    async def _http(self) -> httpx.AsyncClient:
        # Created on first use so it belongs to the serving event loop.
        if self._client is None:
            # Importing httpx and loading the CA bundle take ~0.2 s of CPU: off the loop.
            tls = await asyncio.to_thread(_tls_context)
            import httpx

            if self._client is None:  # another delivery may have made it meanwhile
                self._client = httpx.AsyncClient(
                    transport=self._transport,
                    verify=tls,
                    timeout=self._timeout,
                    follow_redirects=False,
                )
        return self._client

    async def close(self) -> None:
        """Release pooled connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _tls_context() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


async def _post(
    client: httpx.AsyncClient,
    urls: tuple[str, ...],
    body: bytes,
    headers: dict[str, str],
    extensions: dict[str, Any] | None,
) -> tuple[httpx.Response, bytes]:
    """POST to the first of ``urls`` that accepts a connection (each a checked address)."""
    import httpx

    for url in urls[:-1]:
        try:
            return await _post_once(client, url, body, headers, extensions)
        except httpx.ConnectError:
            continue
    return await _post_once(client, urls[-1], body, headers, extensions)


async def _post_once(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    extensions: dict[str, Any] | None,
) -> tuple[httpx.Response, bytes]:
    async with client.stream(
        "POST", url, content=body, headers=headers, extensions=extensions
    ) as response:
        return response, await _read_capped(response)


async def _read_capped(response: httpx.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for part in response.aiter_bytes():
        parts.append(part)
        size += len(part)
        if size > MAX_RESPONSE_BYTES:
            break
    return b"".join(parts)


def _says_done(answer: bytes) -> bool:
    try:
        decoded = msgspec.json.decode(answer)
    except (msgspec.DecodeError, RecursionError):
        return False
    return isinstance(decoded, dict) and decoded.get("done") is True
