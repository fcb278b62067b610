"""The HTTP client a call uses, and how a token rides on its requests."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import httpx

from durable_sessions.protocol.headers import AUTHORIZATION
from durable_sessions.tokens import TokenAuth

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

    from httpx._client import UseClientDefault

    from durable_sessions.tokens import TokenProvider

# Live reads wait up to the server's long-poll timeout (30 s by default) and
# SSE connections stay quiet up to its keep-alive interval (15 s).
DEFAULT_TIMEOUT = httpx.Timeout(10.0, read=60.0)


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context, made once: loading the CA bundle costs ~70 ms of CPU,
    which every new client would otherwise spend (16 producers: a second)."""
    return httpx.create_ssl_context()


class owned_client:  # lower case: used like the function it replaced
    """``client`` as is, or a new client that is closed on exit.

    A class, not an ``asynccontextmanager``: inside an async generator
    (``follow()``) a generator-based one is a second async generator, and
    when the outer one is abandoned, the event loop's shutdown closes both
    at once and fails ("aclose(): asynchronous generator is already running").
    """

    def __init__(self, client: httpx.AsyncClient | None) -> None:
        self._given = client
        self._own: httpx.AsyncClient | None = None

    async def __aenter__(self) -> httpx.AsyncClient:
        if self._given is not None:
            return self._given
        self._own = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, verify=shared_ssl_context())
        return self._own

    async def __aexit__(self, *_: object) -> None:
        if self._own is not None:
            await self._own.aclose()


def auth_for(provider: TokenProvider | None) -> httpx.Auth | UseClientDefault:
    """The per-request ``auth=`` for ``provider`` (the client's default without one)."""
    return httpx.USE_CLIENT_DEFAULT if provider is None else TokenAuth(provider)


async def with_bearer(
    provider: TokenProvider | None, headers: Mapping[str, str] | None, *, refresh_of: str = ""
) -> dict[str, str]:
    """``headers`` plus ``Authorization: Bearer`` for calls into the official client,
    which takes headers, not an httpx ``auth``; ``refresh_of`` asks for a token
    to replace one answered 401."""
    sent = dict(headers or {})
    if provider is not None:
        token = await (provider.arefresh(refresh_of) if refresh_of else provider.atoken())
        sent[AUTHORIZATION] = f"Bearer {token}"
    return sent


def bearer_of(headers: Mapping[str, str]) -> str:
    """The token in ``headers``' Authorization (empty without one)."""
    value = headers.get(AUTHORIZATION, "")
    return value.removeprefix("Bearer ")
