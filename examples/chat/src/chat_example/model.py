"""A deterministic fake model: the same question always gets the same reply, word by word.

No network, no weights: what matters here is how a reply travels, not what
it says. ``pause`` is the time between words (a real model's pace);
``hold``, when set, is a file that makes the model pause halfway through its
reply for as long as it exists (tests use it to reload a page while a
generation is surely in flight).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

_HOLD_POLL_SECS = 0.05


def reply_to(question: str) -> str:
    """What the model answers to ``question``."""
    asked = " ".join(question.split()) or "nothing"
    return (
        f"You asked: {asked}. This reply is written to a durable stream word by word, "
        "so a page that reloads in the middle of it reads it again from its first word."
    )


def words(text: str) -> list[str]:
    """``text`` cut into the deltas the model streams (each word with its trailing space)."""
    parts = text.split(" ")
    return [part + " " for part in parts[:-1]] + [parts[-1]]


def ui_chunks(reply: str, *, message_id: str) -> list[dict[str, Any]]:
    """The AI SDK UI message chunks of ``reply``: one text part, a delta per word."""
    return [
        {"type": "start", "messageId": message_id},
        {"type": "start-step"},
        {"type": "text-start", "id": "text-1"},
        *({"type": "text-delta", "id": "text-1", "delta": word} for word in words(reply)),
        {"type": "text-end", "id": "text-1"},
        {"type": "finish-step"},
        {"type": "finish"},
    ]


async def generate(
    question: str, *, message_id: str, pause: float, hold: Path | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The reply to ``question`` as UI message chunks, at the model's pace."""
    chunks = ui_chunks(reply_to(question), message_id=message_id)
    for index, chunk in enumerate(chunks):
        if hold is not None and index == len(chunks) // 2:
            # A file has nothing to await: poll it.
            while await asyncio.to_thread(hold.exists):  # noqa: ASYNC110
                await asyncio.sleep(_HOLD_POLL_SECS)
        if chunk["type"] == "text-delta" and pause:
            await asyncio.sleep(pause)
        yield chunk
