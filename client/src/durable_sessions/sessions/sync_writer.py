"""``SessionWriter``: the session writer for synchronous code.

It runs an `AsyncSessionWriter` on an event loop in a thread of its own
(presence refreshes need timers, which synchronous code has none of): each
method is handed to that loop and waited for. A streamed reply is read from
the caller's iterator in the caller's thread, piece by piece.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from durable_sessions._loop_thread import LoopThread
from durable_sessions.sessions.liveness import (
    PRESENCE_REFRESH,
    PRESENCE_TTL,
    TYPING_REFRESH,
    TYPING_TTL,
)
from durable_sessions.sessions.timestamps import utc_now
from durable_sessions.sessions.writer import AsyncSessionWriter

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Mapping
    from datetime import datetime, timedelta

    from durable_sessions.sessions.builders import Role, Status
    from durable_sessions.sessions.writer import Reply
    from durable_sessions.tokens import TokenSource

_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class SessionWriter:
    """`AsyncSessionWriter` for synchronous code: the same arguments (but ``client``) and
    methods; ``with`` closes it on exit."""

    def __init__(
        self,
        url: str,
        *,
        producer_id: str | None = None,
        token: TokenSource | None = None,
        headers: Mapping[str, str] | None = None,
        presence_ttl: timedelta = PRESENCE_TTL,
        presence_refresh: timedelta = PRESENCE_REFRESH,
        typing_ttl: timedelta = TYPING_TTL,
        typing_refresh: timedelta = TYPING_REFRESH,
        clock: Callable[[], datetime] = utc_now,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self._runner = LoopThread(f"session writer {url}")

        async def make() -> AsyncSessionWriter:
            return AsyncSessionWriter(
                url,
                producer_id=producer_id,
                token=token,
                headers=headers,
                presence_ttl=presence_ttl,
                presence_refresh=presence_refresh,
                typing_ttl=typing_ttl,
                typing_refresh=typing_refresh,
                clock=clock,
                on_error=on_error,
            )

        try:
            self._writer = self._runner.run(make())
        except BaseException:
            self._runner.stop()
            raise

    def message(
        self, text: str, *, author: str, role: Role = "user", message_id: str | None = None
    ) -> str:
        """Post a message; its id."""
        return self._runner.call(
            lambda: self._writer.message(text, author=author, role=role, message_id=message_id)
        )

    def edit(self, message_id: str, text: str, *, author: str, role: Role = "user") -> None:
        """Replace a message's text."""
        self._runner.call(lambda: self._writer.edit(message_id, text, author=author, role=role))

    def delete(self, message_id: str) -> None:
        """Remove a message."""
        self._runner.call(lambda: self._writer.delete(message_id))

    def stream_reply(
        self,
        chunks: Iterable[str],
        *,
        author: str = "assistant",
        role: Role = "assistant",
        message_id: str | None = None,
    ) -> Reply:
        """Write a reply from an iterator of text, chunk by chunk, then as a whole message."""
        loop = self._runner.loop
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def pieces() -> AsyncIterator[str]:
            while (item := await queue.get()) is not _END:
                if isinstance(item, _Failed):
                    raise item.error
                yield item

        written = asyncio.run_coroutine_threadsafe(
            self._writer.stream_reply(pieces(), author=author, role=role, message_id=message_id),
            loop,
        )
        try:
            for text in chunks:
                loop.call_soon_threadsafe(queue.put_nowait, text)
        except BaseException as exc:
            loop.call_soon_threadsafe(queue.put_nowait, _Failed(exc))
            # The text so far is written as the message; then the error goes on here.
            try:
                written.result()
            except BaseException as relayed:
                if relayed is not exc:
                    raise
            raise
        loop.call_soon_threadsafe(queue.put_nowait, _END)
        return written.result()

    def react(self, message_id: str, user: str, emoji: str) -> None:
        """``user`` reacts to a message with ``emoji``."""
        self._runner.call(lambda: self._writer.react(message_id, user, emoji))

    def unreact(self, message_id: str, user: str, emoji: str) -> None:
        """``user`` takes a reaction back."""
        self._runner.call(lambda: self._writer.unreact(message_id, user, emoji))

    def join(self, user: str, status: Status = "online") -> None:
        """``user`` is present, refreshed in the background until `leave` or `close`."""
        self._runner.call(lambda: self._writer.join(user, status))

    def leave(self, user: str) -> None:
        """``user`` is gone."""
        self._runner.call(lambda: self._writer.leave(user))

    def typing(self, user: str) -> None:
        """``user`` is typing (written at most every ``typing_refresh``)."""
        self._runner.call(lambda: self._writer.typing(user))

    def stop_typing(self, user: str) -> None:
        """``user`` stopped typing."""
        self._runner.call(lambda: self._writer.stop_typing(user))

    @property
    def last_offset(self) -> str | None:
        """The stream's offset after the last event the server acknowledged."""
        return self._writer.last_offset

    def flush(self) -> None:
        """Wait until the server has every event written so far."""
        self._runner.run(self._writer.flush())

    def close(self, *, end_session: bool = False) -> None:
        """Say who left, flush and stop (``end_session``: close the stream too); idempotent."""
        if self._runner.loop.is_closed():
            return
        try:
            self._runner.run(self._writer.close(end_session=end_session))
        finally:
            self._runner.stop()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
