"""Where a session lives (``/ds/{bucket}/{session_id}``, sessions.md §1) and creating it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_sessions.protocol.content_types import JSON
from durable_sessions.protocol.urls import bucket_stream_url
from durable_sessions.streams import create

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from durable_sessions.tokens import TokenSource

DEFAULT_BUCKET = "sessions"


def session_url(base_url: str, session_id: str, *, bucket: str = DEFAULT_BUCKET) -> str:
    """The URL of session ``session_id``: ``{base}/ds/{bucket}/{session_id}``.

    ``base_url`` is the gateway's (``DS_GATEWAY_URL``). A session id is one
    path segment: it may not hold ``/``.
    """
    if not session_id or "/" in session_id or not bucket or "/" in bucket:
        raise ValueError("a bucket and a session id are non-empty and hold no '/'")
    return bucket_stream_url(base_url, f"{bucket}/{session_id}")


async def create_session(
    url: str,
    *,
    token: TokenSource | None = None,
    client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
) -> bool:
    """Create the session's stream (JSON mode) unless it exists; True when created.

    Its bucket must exist (``make dev`` creates ``sessions``).
    """
    return await create(url, content_type=JSON, token=token, client=client, headers=headers)
