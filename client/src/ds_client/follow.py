"""Follow a stream: bootstrap, then tail it live, re-bootstrapping when retention moves on."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

import httpx
from durable_streams import AsyncDurableStream, DurableStreamError, RetentionGoneError

from ds_client._http import owned_client
from ds_client._live import SseUnavailableError, long_poll_round, sse_session
from ds_client.bootstrap import bootstrap
from ds_client.events import Bootstrapped

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from ds_client.events import Event

LiveMode = Literal["auto", "sse", "long-poll"]
# Pause before reopening an SSE connection that ended without a single event.
_EMPTY_SESSION_PAUSE_SECS = 0.5


async def follow(
    url: str,
    *,
    offset: str | None = None,
    live: LiveMode = "auto",
    client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[Event]:
    """Yield a ``Bootstrapped`` first, then an ``Update`` for each batch of new data.

    ``offset`` resumes from a checkpoint (an ``Update.next_offset``) instead
    of bootstrapping. ``live="auto"`` reads over SSE, reconnecting from the
    last control event's offset whenever the server ends the connection,
    and falls back to long-poll for good if SSE is refused. When a read is
    answered 410 Gone (a snapshot moved the stream's retention past the
    reader), it bootstraps again and yields another ``Bootstrapped``.
    Iteration ends after the stream is closed; a deleted stream raises
    ``StreamNotFoundError``.
    """
    async with owned_client(client) as http:
        sent = dict(headers or {})
        info = await AsyncDurableStream.head_static(url, client=http, headers=dict(sent))
        content_type = info.content_type or "application/octet-stream"
        mode: LiveMode = "long-poll" if live == "long-poll" else "sse"
        position = offset
        while True:
            if position is None:
                state = await bootstrap(url, client=http, headers=sent)
                yield Bootstrapped(state)
                position = state.next_offset
            try:
                if mode == "sse":
                    received = False
                    async for update in sse_session(
                        http, url, position, content_type=content_type, headers=sent
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
                        http, url, position, content_type=content_type, headers=sent
                    )
                    position = update.next_offset
                    if update.messages or update.closed:
                        yield update
                    if update.closed:
                        return
            except RetentionGoneError:
                position = None
            except httpx.ReadTimeout:
                # A long-poll outlasted the client's read timeout: poll again.
                if mode == "sse":
                    raise
            except SseUnavailableError as exc:
                if live == "sse":
                    raise DurableStreamError(f"SSE is not available: {exc}") from exc
                mode = "long-poll"
