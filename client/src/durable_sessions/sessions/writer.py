"""``AsyncSessionWriter``: writing a session's events, exactly once, in the contract's shapes.

Events go out through one `AsyncIdempotentProducer`, so they are batched,
pipelined and stored exactly once, in the order written. Writing methods
return at once (like ``append``); `flush` waits until the server has
everything. Users who `join` stay present: a background task re-upserts
their presence every ``presence_refresh`` with a new ``expires_at``
(`durable_sessions.sessions.liveness`); `close` says they left.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durable_sessions.producer import (
    AsyncIdempotentProducer,
    ProducerClosedError,
    ProducerFailedError,
)
from durable_sessions.protocol.content_types import JSON
from durable_sessions.sessions.builders import (
    chunk_event,
    deleted_message_event,
    message_event,
    presence_event,
    reaction_event,
    stopped_typing_event,
    typing_event,
)
from durable_sessions.sessions.liveness import (
    PRESENCE_REFRESH,
    PRESENCE_TTL,
    TYPING_REFRESH,
    TYPING_TTL,
)
from durable_sessions.sessions.timestamps import utc_now

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Mapping
    from datetime import datetime, timedelta

    import httpx

    from durable_sessions.sessions.builders import Role, Status
    from durable_sessions.tokens import TokenSource


@dataclass(frozen=True, slots=True)
class Reply:
    """A streamed reply as written: its message id, whole text and number of chunks."""

    id: str
    text: str
    chunks: int


class ReplyStream:
    """A reply being written: `add` appends a chunk, `finish` the whole message (once)."""

    def __init__(
        self, writer: AsyncSessionWriter, message_id: str, *, author: str, role: Role
    ) -> None:
        self.id = message_id
        self._writer = writer
        self._author = author
        self._role: Role = role
        self._pieces: list[str] = []
        self._finished: Reply | None = None

    @property
    def text(self) -> str:
        """The text so far."""
        return "".join(self._pieces)

    def add(self, text: str) -> None:
        """Append a piece of the reply (an empty one writes nothing)."""
        if self._finished is not None:
            raise RuntimeError(f"reply {self.id} is finished")
        if text:
            index = len(self._pieces)
            clock = self._writer.clock
            self._writer.append(chunk_event(self.id, text, index, role=self._role, at=clock()))
            self._pieces.append(text)

    def finish(self) -> Reply:
        """Write the whole message (an upsert of its text so far); again: the same `Reply`."""
        if self._finished is None:
            event = message_event(
                self.id,
                self.text,
                role=self._role,
                author=self._author,
                edit=bool(self._pieces),
                at=self._writer.clock(),
            )
            self._writer.append(event)
            self._finished = Reply(id=self.id, text=self.text, chunks=len(self._pieces))
        return self._finished


def new_message_id() -> str:
    """A fresh message id (a random UUID's hex)."""
    return uuid.uuid4().hex


class AsyncSessionWriter:
    """Writes events to the session at ``url`` (``/ds/{bucket}/{session}``).

    ``producer_id`` names the writer to the server (default: a new random
    one per writer, so no two writers share a sequence); an id that is
    reused across restarts claims a new epoch by itself. ``token``,
    ``headers`` and ``client`` are as for the producer. ``clock`` is where
    event times come from (tests move it). Use it as ``async with`` or
    call `close`.
    """

    def __init__(
        self,
        url: str,
        *,
        producer_id: str | None = None,
        token: TokenSource | None = None,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        presence_ttl: timedelta = PRESENCE_TTL,
        presence_refresh: timedelta = PRESENCE_REFRESH,
        typing_ttl: timedelta = TYPING_TTL,
        typing_refresh: timedelta = TYPING_REFRESH,
        clock: Callable[[], datetime] = utc_now,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self.url = url
        self.producer = AsyncIdempotentProducer(
            url,
            producer_id or f"session-writer-{uuid.uuid4().hex}",
            auto_claim=True,
            content_type=JSON,
            headers=headers,
            token=token,
            client=client,
            on_error=on_error,
        )
        self._presence_ttl = presence_ttl
        self._presence_refresh = presence_refresh
        self._typing_ttl = typing_ttl
        self._typing_refresh = typing_refresh
        self.clock = clock
        self._present: dict[str, Status] = {}
        self._typing_since: dict[str, datetime] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self._closed = False

    # -- messages ----------------------------------------------------------

    def message(
        self, text: str, *, author: str, role: Role = "user", message_id: str | None = None
    ) -> str:
        """Post a message; its id (``message_id``, or a new one)."""
        message_id = message_id or new_message_id()
        self.append(message_event(message_id, text, role=role, author=author, at=self.clock()))
        return message_id

    def edit(self, message_id: str, text: str, *, author: str, role: Role = "user") -> None:
        """Replace a message's text (an upsert of the whole message: give its author and role)."""
        self.append(
            message_event(message_id, text, role=role, author=author, edit=True, at=self.clock())
        )

    def delete(self, message_id: str) -> None:
        """Remove a message."""
        self.append(deleted_message_event(message_id, at=self.clock()))

    def reply(
        self, *, author: str = "assistant", role: Role = "assistant", message_id: str | None = None
    ) -> ReplyStream:
        """Start a reply written piece by piece (`ReplyStream.add`, then `ReplyStream.finish`):
        for text that arrives in something `stream_reply` can't iterate, e.g. the text parts
        of an AI SDK UI message stream."""
        return ReplyStream(self, message_id or new_message_id(), author=author, role=role)

    async def stream_reply(
        self,
        chunks: AsyncIterable[str] | Iterable[str],
        *,
        author: str = "assistant",
        role: Role = "assistant",
        message_id: str | None = None,
    ) -> Reply:
        """Write a reply as it is generated: a ``chunk`` append per piece of text, in order,
        then the whole message as one upsert.

        ``chunks`` is any (async) iterator of text, e.g. an LLM's stream. Each
        chunk goes out as soon as the producer's linger allows (5 ms), so
        readers see the reply grow. If the iterator fails (or the task is
        cancelled), the text so far is still written as the message, so it
        no longer shows as streaming, and the error propagates.
        """
        reply = self.reply(author=author, role=role, message_id=message_id)
        try:
            async for text in _aiter(chunks):
                reply.add(text)
        finally:
            written = reply.finish()
        return written

    # -- reactions ---------------------------------------------------------

    def react(self, message_id: str, user: str, emoji: str) -> None:
        """``user`` reacts to a message with ``emoji``."""
        self.append(reaction_event(message_id, user, emoji, at=self.clock()))

    def unreact(self, message_id: str, user: str, emoji: str) -> None:
        """``user`` takes a reaction back."""
        self.append(reaction_event(message_id, user, emoji, remove=True, at=self.clock()))

    # -- presence and typing ----------------------------------------------

    def join(self, user: str, status: Status = "online") -> None:
        """``user`` is present (``online`` or ``away``) and stays so while this writer runs:
        their presence is refreshed every ``presence_refresh`` until `leave` or `close`.

        Needs a running event loop (the refreshes are a task on it).
        """
        if status == "offline":
            self.leave(user)
            return
        self._present[user] = status
        self._write_presence(user, status)
        if self._heartbeat is None:
            self._heartbeat = asyncio.get_running_loop().create_task(self._refresh_presence())

    def leave(self, user: str) -> None:
        """``user`` is gone: presence ``offline``, and their refreshes stop."""
        self._present.pop(user, None)
        self._write_presence(user, "offline")

    def typing(self, user: str) -> None:
        """``user`` is typing: call it as they type; it writes at most every ``typing_refresh``,
        and the entry expires ``typing_ttl`` after the last write."""
        now = self.clock()
        since = self._typing_since.get(user)
        if since is not None and now - since < self._typing_refresh:
            return
        self._typing_since[user] = now
        self.append(typing_event(user, ttl=self._typing_ttl, at=now))

    def stop_typing(self, user: str) -> None:
        """``user`` stopped typing (written only if this writer said they were typing)."""
        if self._typing_since.pop(user, None) is not None:
            self.append(stopped_typing_event(user, at=self.clock()))

    @contextlib.asynccontextmanager
    async def keep_typing(self, user: str) -> AsyncIterator[None]:
        """``user`` types for as long as the block runs (an agent thinking), refreshed as needed."""

        async def refresh() -> None:
            while True:
                self.typing(user)
                await asyncio.sleep(self._typing_refresh.total_seconds())

        task = asyncio.get_running_loop().create_task(refresh())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.stop_typing(user)

    # -- the producer ------------------------------------------------------

    @property
    def last_offset(self) -> str | None:
        """The stream's offset after the last event the server acknowledged."""
        return self.producer.last_successful_offset

    async def flush(self) -> None:
        """Wait until the server has every event written so far (raises a failed append's error)."""
        await self.producer.flush()

    async def close(self, *, end_session: bool = False) -> None:
        """Say that present users left and typing users stopped, flush, and stop.

        ``end_session=True`` also closes the session's stream (readers see
        its end; nothing can be appended any more). Idempotent.
        """
        if self._closed:
            return
        self._closed = True
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
        for user in list(self._typing_since):
            self.stop_typing(user)
        for user in list(self._present):
            self.leave(user)
        if end_session:
            await self.producer.close()
            return
        try:
            await self.producer.flush()
        finally:
            await self.producer.detach()

    async def __aenter__(self) -> AsyncSessionWriter:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def append(self, event: dict[str, Any]) -> None:
        """Append any event (e.g. built with `durable_sessions.sessions.builders`), in order."""
        self.producer.append(event)

    def _write_presence(self, user: str, status: Status) -> None:
        self.append(presence_event(user, status, ttl=self._presence_ttl, at=self.clock()))

    async def _refresh_presence(self) -> None:
        while True:
            await asyncio.sleep(self._presence_refresh.total_seconds())
            try:
                for user, status in list(self._present.items()):
                    self._write_presence(user, status)
            except (ProducerClosedError, ProducerFailedError):
                return  # the failure itself reaches on_error and the next flush()


async def _aiter(chunks: AsyncIterable[str] | Iterable[str]) -> AsyncIterator[str]:
    if isinstance(chunks, AsyncIterable):
        async for text in chunks:
            yield text
    else:
        for text in chunks:
            yield text
