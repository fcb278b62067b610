"""Which generation of a chat is in flight: what the reconnect endpoint asks.

A page that reloads mid-generation calls ``GET {api}/{chat id}/stream``;
the server answers with the stream of the generation in flight, or 204. The
default store keeps that in memory, which serves one process (a generation
lives in the process that runs it anyway); several app processes behind a
load balancer need a shared one (a database row, Redis): implement
`ActiveGenerations`.
"""

from __future__ import annotations

from typing import Protocol


class ActiveGenerations(Protocol):
    """Where the generation in flight of each chat is kept."""

    async def begin(self, chat_id: str, stream: str) -> None:
        """``stream`` (a stream name) is now the chat's generation in flight."""

    async def current(self, chat_id: str) -> str | None:
        """The stream of the chat's generation in flight, None when there is none."""

    async def end(self, chat_id: str, stream: str) -> None:
        """``stream`` finished: forget it, unless a newer generation replaced it."""


class MemoryActiveGenerations:
    """`ActiveGenerations` in this process's memory."""

    def __init__(self) -> None:
        self._streams: dict[str, str] = {}

    async def begin(self, chat_id: str, stream: str) -> None:
        self._streams[chat_id] = stream

    async def current(self, chat_id: str) -> str | None:
        return self._streams.get(chat_id)

    async def end(self, chat_id: str, stream: str) -> None:
        if self._streams.get(chat_id) == stream:
            del self._streams[chat_id]
