"""A generation's UI message chunks into a durable stream, exactly once, then closed.

Each chunk (an AI SDK ``UIMessageChunk``: ``{"type": "text-delta", ...}``)
is one JSON message of the stream, in order, written by an idempotent
producer; when the source ends the stream is closed, which is how readers
(the official transport's ``stream()``) learn that the generation is over.
A source that fails (or a task cancelled) gets an ``error`` chunk (the AI
SDK's way to say so) before the close, and its exception propagates.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from durable_sessions.producer import AsyncIdempotentProducer
from durable_sessions.protocol.content_types import JSON

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, Mapping

    import httpx

    from durable_sessions.tokens import TokenSource

ERROR_TEXT = "The generation failed."


async def write_chunks(
    source: AsyncIterable[dict[str, Any]],
    url: str,
    *,
    token: TokenSource | None = None,
    client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
    error_text: str = ERROR_TEXT,
) -> str:
    """Append every chunk of ``source`` to the (existing) JSON stream at ``url``, then close
    it; the stream's final offset."""
    producer = AsyncIdempotentProducer(
        url,
        f"generation-{uuid.uuid4().hex}",
        content_type=JSON,
        token=token,
        client=client,
        headers=headers,
    )
    try:
        async for chunk in source:
            producer.append(chunk)
    except BaseException:
        # The reader gets the AI SDK's error chunk (not the exception's text) and the
        # stream's end, also when the task was cancelled: no reader waits forever.
        await producer.close({"type": "error", "errorText": error_text})
        raise
    return (await producer.close()).final_offset
