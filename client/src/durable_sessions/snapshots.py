"""Publishing a snapshot of a stream (``PUT {stream}/snapshot/{offset}``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_sessions._errors import http_error
from durable_sessions._http import auth_for, owned_client
from durable_sessions.protocol.content_types import OCTET_STREAM
from durable_sessions.protocol.headers import CONTENT_TYPE
from durable_sessions.protocol.urls import snapshot_url
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from durable_sessions.tokens import TokenSource


async def publish_snapshot(
    url: str,
    offset: str,
    data: bytes,
    *,
    content_type: str = OCTET_STREAM,
    client: httpx.AsyncClient | None = None,
    token: TokenSource | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Publish ``data`` as the fold of the stream before ``offset`` (a Stream-Next-Offset).

    Reads before ``offset`` answer 410 afterwards. Raises the official
    client's exceptions (``DurableStreamError`` with the status) on failure.
    """
    sent = {**(headers or {}), CONTENT_TYPE: content_type}
    async with owned_client(client) as http:
        response = await http.put(
            snapshot_url(url, offset),
            content=data,
            headers=sent,
            auth=auth_for(token_provider(token)),
        )
    if response.status_code != 204:
        raise http_error(response.status_code, url, response.text)
