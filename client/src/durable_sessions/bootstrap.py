"""``GET {stream}/bootstrap``: a stream's snapshot and retained messages in one response.

The multipart body is parsed as it arrives; the result holds the whole
bootstrap in memory, which is what a caller applying it needs anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_sessions._errors import http_error
from durable_sessions._http import auth_for, owned_client
from durable_sessions.protocol.bootstrap import BootstrapReader
from durable_sessions.protocol.headers import CONTENT_TYPE
from durable_sessions.protocol.urls import bootstrap_url
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from durable_sessions.protocol.bootstrap import Bootstrap
    from durable_sessions.tokens import TokenSource


async def fetch_bootstrap(
    url: str,
    *,
    client: httpx.AsyncClient | None = None,
    token: TokenSource | None = None,
    headers: Mapping[str, str] | None = None,
) -> Bootstrap:
    """Fetch and parse the bootstrap at ``url`` (the ``.../bootstrap`` URL itself)."""
    async with owned_client(client) as http:
        request = http.build_request("GET", url, headers=headers)
        response = await http.send(request, stream=True, auth=auth_for(token_provider(token)))
        try:
            if response.status_code != 200:
                body = (await response.aread()).decode("utf-8", "replace")
                raise http_error(response.status_code, url, body)
            reader = BootstrapReader(response.headers.get(CONTENT_TYPE, ""))
            async for chunk in response.aiter_bytes():
                reader.feed(chunk)
        finally:
            await response.aclose()
    return reader.finish(response.headers)


async def bootstrap(
    url: str,
    *,
    client: httpx.AsyncClient | None = None,
    token: TokenSource | None = None,
    headers: Mapping[str, str] | None = None,
) -> Bootstrap:
    """Fetch and parse ``{url}/bootstrap`` (``url``: a bucket stream's ``/ds/{bucket}/{stream}``).

    Raises the official client's ``StreamNotFoundError`` for 404,
    ``DurableStreamError`` for other failures, and ``BootstrapFormatError``
    when the body is not valid multipart.
    """
    return await fetch_bootstrap(bootstrap_url(url), client=client, token=token, headers=headers)
