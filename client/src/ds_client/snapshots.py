"""Publishing a snapshot of a stream (``PUT {stream}/snapshot/{offset}``)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from ds_client._errors import http_error
from ds_client._http import owned_client

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx


async def publish_snapshot(
    url: str,
    offset: str,
    data: bytes,
    *,
    content_type: str = "application/octet-stream",
    client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Publish ``data`` as the fold of the stream before ``offset`` (a Stream-Next-Offset).

    Reads before ``offset`` answer 410 afterwards. Raises the official
    client's exceptions (``DurableStreamError`` with the status) on failure.
    """
    # Offsets are opaque: encode whatever characters they hold (extensions section 5).
    target = url.rstrip("/") + "/snapshot/" + quote(offset, safe="")
    sent = {**(headers or {}), "Content-Type": content_type}
    async with owned_client(client) as http:
        response = await http.put(target, content=data, headers=sent)
    if response.status_code != 204:
        raise http_error(response.status_code, url, response.text)
