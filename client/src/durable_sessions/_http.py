"""The HTTP client a call uses, and how a token rides on its requests."""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING

import httpx

from durable_sessions.protocol.headers import AUTHORIZATION
from durable_sessions.tokens import TokenAuth

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator, Mapping

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


@contextlib.asynccontextmanager
async def owned_client(client: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """``client`` as is, or a new client that is closed on exit."""
    if client is not None:
        yield client
        return
    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, verify=shared_ssl_context()) as own:
        yield own


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
