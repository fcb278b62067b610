"""Signed webhook POSTs.

One attempt per call; the waker decides about retries, because only it knows
whether the wake being delivered is still current.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

from ds_server.subscriptions.signing import SIGNATURE_HEADER

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable

    import httpx

    from ds_server.subscriptions.signing import SigningKey

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
    ) -> None:
        self._key = key
        self._transport = transport
        self._timeout = timeout_secs
        self._client: httpx.AsyncClient | None = None

    async def send(self, url: str, body: bytes) -> DeliveryResult:
        """POST ``body`` to ``url`` once; never raises for network or HTTP failures."""
        client = await self._http()
        headers = {
            "content-type": "application/json",
            SIGNATURE_HEADER: self._key().signature_header(body, int(time.time())),
        }
        import httpx  # loaded by _http() already

        try:
            async with client.stream("POST", url, content=body, headers=headers) as response:
                answer = await _read_capped(response)
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
    except msgspec.DecodeError:
        return False
    return isinstance(decoded, dict) and decoded.get("done") is True
