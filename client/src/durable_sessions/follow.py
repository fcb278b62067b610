"""Follow a stream: bootstrap, then tail it live, re-bootstrapping when retention moves on."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

import httpx
from durable_streams import DurableStreamError, RetentionGoneError, StreamNotFoundError

from durable_sessions._http import owned_client
from durable_sessions._live import SseUnavailableError, long_poll_round, sse_session
from durable_sessions.bootstrap import fetch_bootstrap
from durable_sessions.events import Bootstrapped
from durable_sessions.protocol.bootstrap import NO_SNAPSHOT, Bootstrap
from durable_sessions.protocol.content_types import OCTET_STREAM
from durable_sessions.protocol.offsets import BEGINNING
from durable_sessions.protocol.urls import bootstrap_url
from durable_sessions.streams import head
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Mapping

    from durable_sessions.events import Event
    from durable_sessions.tokens import TokenSource

LiveMode = Literal["auto", "sse", "long-poll"]
# What a stream without a bootstrap starts from: nothing, then everything from -1.
EMPTY_BOOTSTRAP = Bootstrap(
    snapshot=None,
    snapshot_content_type=None,
    snapshot_offset=NO_SNAPSHOT,
    messages=[],
    next_offset=BEGINNING,
    up_to_date=False,
)
# Pause before reopening an SSE connection that ended without a single event.
_EMPTY_SESSION_PAUSE_SECS = 0.5


async def follow(
    url: str,
    *,
    offset: str | None = None,
    live: LiveMode = "auto",
    client: httpx.AsyncClient | None = None,
    token: TokenSource | None = None,
    headers: Mapping[str, str] | None = None,
    bootstrap_from: str | None = None,
    without_bootstrap: Literal["raise", "read-from-start"] = "raise",
) -> AsyncGenerator[Event]:
    """Yield a ``Bootstrapped`` first, then an ``Update`` for each batch of new data.

    ``offset`` resumes from a checkpoint (an ``Update.next_offset``) instead
    of bootstrapping. ``live="auto"`` reads over SSE, reconnecting from the
    last control event's offset whenever the server ends the connection,
    and falls back to long-poll for good if SSE is refused. When a read is
    answered 410 Gone (a snapshot moved the stream's retention past the
    reader), it bootstraps again and yields another ``Bootstrapped``.
    Iteration ends after the stream is closed; a deleted stream raises
    ``StreamNotFoundError``. ``bootstrap_from`` is the bootstrap's URL when
    it is not ``{url}/bootstrap``. A bootstrap the server does not serve
    there (404 while the stream exists) raises ``StreamNotFoundError`` too,
    unless ``without_bootstrap="read-from-start"``: then the first
    ``Bootstrapped`` is empty and reading starts at ``-1`` (a 410 there
    raises ``RetentionGoneError``: history is gone and nothing replaces it).
    ``token`` is sent on every request (see `durable_sessions.tokens`).
    """
    provider = token_provider(token)
    async with owned_client(client) as http:
        sent = dict(headers or {})
        info = await head(url, client=http, token=provider, headers=sent)
        content_type = info.content_type or OCTET_STREAM
        mode: LiveMode = "long-poll" if live == "long-poll" else "sse"
        position = offset
        from_start = False
        while True:
            if position is None:
                try:
                    state = await fetch_bootstrap(
                        bootstrap_from or bootstrap_url(url),
                        client=http,
                        token=provider,
                        headers=sent,
                    )
                except StreamNotFoundError:
                    if without_bootstrap == "raise":
                        raise
                    # Gone for good, or no bootstrap here: only the first reads on.
                    await head(url, client=http, token=provider, headers=sent)
                    state = EMPTY_BOOTSTRAP
                from_start = state is EMPTY_BOOTSTRAP
                yield Bootstrapped(state)
                position = state.next_offset
            try:
                if mode == "sse":
                    received = False
                    async for update in sse_session(
                        http, url, position, content_type=content_type, headers=sent, token=provider
                    ):
                        received = True
                        position = update.next_offset
                        if update.messages or update.closed:
                            yield update
                        if update.closed:
                            return
                    if not received:
                        await asyncio.sleep(_EMPTY_SESSION_PAUSE_SECS)
                else:
                    update = await long_poll_round(
                        http, url, position, content_type=content_type, headers=sent, token=provider
                    )
                    position = update.next_offset
                    if update.messages or update.closed:
                        yield update
                    if update.closed:
                        return
            except RetentionGoneError:
                if from_start and position == BEGINNING:
                    raise
                position = None
            except httpx.ReadTimeout:
                # A long-poll outlasted the client's read timeout: poll again.
                if mode == "sse":
                    raise
            except SseUnavailableError as exc:
                if live == "sse":
                    raise DurableStreamError(f"SSE is not available: {exc}") from exc
                mode = "long-poll"
