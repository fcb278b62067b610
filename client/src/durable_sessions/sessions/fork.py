"""Forking a session at an offset: a new session that shares its history up to there.

Edit and regenerate: fork before the message to rewrite (`ChatMessage.offset`,
or a `SessionEvent.offset`), then write the new version and a new reply in
the fork; the original session is untouched. The server's fork is a ``PUT``
of the new stream with ``Stream-Forked-From`` (the source's path) and
``Stream-Fork-Offset`` (docs/server.md, Forks); the fork shares the
source's messages before the offset and goes on on its own. A token needs
``write`` on the new session's bucket and ``read`` on the source's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from durable_sessions._errors import http_error
from durable_sessions._http import auth_for, owned_client
from durable_sessions.protocol.content_types import JSON
from durable_sessions.protocol.headers import CONTENT_TYPE, STREAM_FORK_OFFSET, STREAM_FORKED_FROM
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from durable_sessions.tokens import TokenSource


async def fork_session(
    source_url: str,
    target_url: str,
    *,
    offset: str | None = None,
    token: TokenSource | None = None,
    client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
) -> bool:
    """Create the session at ``target_url`` as a fork of ``source_url`` before ``offset``;
    True when created, False when that very fork exists already (a retry).

    ``offset`` must be a message boundary (an event's ``offset`` or
    ``next_offset``); None forks at the source's tail. Both URLs are on the
    same server. Raises the official client's ``DurableStreamError`` with the
    status on failure (409 when ``target_url`` exists as something else, 400
    for an offset that is not a boundary or past the tail, 404 for a missing
    source).
    """
    source, target = urlsplit(source_url), urlsplit(target_url)
    if (source.scheme, source.netloc) != (target.scheme, target.netloc):
        raise ValueError("a fork lives on the same server as its source")
    sent = {**(headers or {}), CONTENT_TYPE: JSON, STREAM_FORKED_FROM: source.path}
    if offset is not None:
        sent[STREAM_FORK_OFFSET] = offset
    async with owned_client(client) as http:
        response = await http.put(target_url, headers=sent, auth=auth_for(token_provider(token)))
    if response.status_code not in (200, 201):
        raise http_error(response.status_code, target_url, response.text)
    return response.status_code == 201
