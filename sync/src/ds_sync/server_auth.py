"""The server's bearer token on ds-sync's requests to the server, from the SDK's providers.

ds-sync's one HTTP client also talks to Electric, and acks a claimed wake
with the subscription's own callback token: the server's token goes only on
requests to the server that carry no ``Authorization`` of their own. A
token file is re-read whenever it changes, and after a 401 the request is
sent once more with what the file holds then (``durable_sessions.tokens``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
from durable_sessions.tokens import TokenAuth, token_provider

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator
    from pathlib import Path


class ServerAuth(httpx.Auth):
    """``Authorization: Bearer`` from ``token`` on requests to ``server_url``'s origin only."""

    def __init__(self, token: str | Path, server_url: str) -> None:
        provider = token_provider(token)
        assert provider is not None
        self._auth = TokenAuth(provider)
        self._origin = httpx.URL(server_url)

    def _applies(self, request: httpx.Request) -> bool:
        url, origin = request.url, self._origin
        return (url.scheme, url.host, url.port) == (
            origin.scheme,
            origin.host,
            origin.port,
        ) and "authorization" not in request.headers

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not self._applies(request):
            yield request
            return
        flow = self._auth.async_auth_flow(request)
        sent = await flow.__anext__()
        while True:
            response = yield sent
            try:
                sent = await flow.asend(response)
            except StopAsyncIteration:
                return


def server_auth(token: str | Path | None, server_url: str) -> ServerAuth | None:
    """The auth of ds-sync's client, or None when the server needs no token."""
    return None if token is None else ServerAuth(token, server_url)
