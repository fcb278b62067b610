"""Single calls on one stream: its metadata (HEAD) and creating it (PUT)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_sessions._errors import http_error
from durable_sessions._http import auth_for, owned_client
from durable_sessions.protocol.headers import CONTENT_TYPE
from durable_sessions.protocol.listing import StreamInfo
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from durable_sessions.tokens import TokenSource


async def head(
    url: str,
    *,
    client: httpx.AsyncClient | None = None,
    token: TokenSource | None = None,
    headers: Mapping[str, str] | None = None,
) -> StreamInfo:
    """The stream's metadata (content type, tail, closure, snapshot offset).

    ``StreamInfo.path`` is the URL's path. Raises the official client's
    ``StreamNotFoundError`` for 404, ``DurableStreamError`` otherwise.
    """
    provider = token_provider(token)
    async with owned_client(client) as http:
        response = await http.head(url, headers=headers, auth=auth_for(provider))
    if response.status_code != 200:
        raise http_error(response.status_code, url)
    return StreamInfo.from_headers(response.url.path, response.headers)


async def create(
    url: str,
    *,
    content_type: str,
    client: httpx.AsyncClient | None = None,
    token: TokenSource | None = None,
    headers: Mapping[str, str] | None = None,
) -> bool:
    """Create the stream unless it exists with this content type; True when created.

    Raises ``DurableStreamError`` (status 409) when it exists with another
    configuration.
    """
    provider = token_provider(token)
    sent = {**(headers or {}), CONTENT_TYPE: content_type}
    async with owned_client(client) as http:
        response = await http.put(url, headers=sent, auth=auth_for(provider))
    if response.status_code not in (200, 201):
        raise http_error(response.status_code, url, response.text)
    return response.status_code == 201
