"""The in-memory backend: fast and volatile, for tests, benchmarks and development."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ds_server.protocol.offsets import Sentinel
from ds_server.stores import _rules
from ds_server.stores._forks import resolve_fork_offset
from ds_server.stores._rules import StreamState
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    AppendResult,
    CreateRequest,
    CreateResult,
    Expiry,
    ReadResult,
    Store,
    StreamInfo,
)
from ds_server.stores.errors import (
    InvalidOffset,
    PayloadTooLarge,
    StreamExists,
    StreamGone,
    StreamNotFound,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Self

    from ds_server.live import LiveNotifier
    from ds_server.settings import Settings

_SWEEP_INTERVAL_SECS = 1.0


@dataclass(slots=True, eq=False)
class _Stream:
    state: StreamState
    # The fork's source, kept even after the source is soft-deleted.
    base: _Stream | None = None
    # Own chunks (one per JSON message, one per byte append) and their start offsets.
    starts: list[int] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)

    def own_bytes(self) -> int:
        return self.state.tail - self.state.fork_offset


class MemoryStore(Store):
    """Streams held in process memory; lost on restart."""

    def __init__(self, live: LiveNotifier, *, max_stream_bytes: int, max_memory_bytes: int) -> None:
        super().__init__(live)
        self._streams: dict[str, _Stream] = {}
        self._ids = itertools.count(1)
        self._max_stream_bytes = max_stream_bytes
        self._max_memory_bytes = max_memory_bytes
        self._memory_bytes = 0
        self._sweeper: asyncio.Task[None] | None = None

    @classmethod
    def from_settings(cls, settings: Settings, live: LiveNotifier) -> Self:
        return cls(
            live,
            max_stream_bytes=settings.limits.max_stream_bytes,
            max_memory_bytes=settings.limits.max_memory_bytes,
        )

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper

    # -- operations -------------------------------------------------------

    async def create(self, request: CreateRequest) -> CreateResult:
        moment = _rules.now()
        existing = self._streams.get(request.path)
        if existing is not None:
            state = existing.state
            if state.soft_deleted:
                raise StreamExists(
                    "a deleted stream's path cannot be re-created while forks use it"
                )
            if state.is_expired(moment):
                self._expire(existing)
            else:
                expiry = request.expiry
                if request.fork is not None and expiry == Expiry():
                    expiry = self._source(request.fork.source, moment).state.expiry
                if not _rules.matches_existing(state, request, expiry):
                    raise StreamExists()
                return CreateResult(created=False, info=state.info())
        base: _Stream | None = None
        content_type = request.content_type or "application/octet-stream"
        expiry = request.expiry
        fork_offset = 0
        if request.fork is not None:
            base = self._source(request.fork.source, moment)
            if request.content_type is None:
                content_type = base.state.content_type
            elif not _rules.same_content_type(request.content_type, base.state.content_type):
                raise StreamExists("fork content type differs from the source's")
            if expiry == Expiry():
                expiry = base.state.expiry
            source = base
            fork_offset = resolve_fork_offset(
                request.fork,
                source.state,
                lambda position: self._is_boundary(source, position),
                lambda position: _iter_chunks(source, position, source.state.tail),
            )
        size = sum(len(message) for message in request.messages)
        self._reserve(fork_offset + size, size)
        state = StreamState(
            stream_id=f"m{next(self._ids)}",
            path=request.path,
            content_type=content_type,
            created_at=moment,
            expiry=expiry,
            last_access=moment,
            tail=fork_offset,
            fork_offset=fork_offset,
            forked_from=request.fork.source if request.fork else None,
            fork_requested_offset=request.fork.offset if request.fork else None,
            fork_sub_offset=request.fork.sub_offset if request.fork else 0,
            closed=request.closed,
        )
        stream = _Stream(state=state, base=base)
        self._write(stream, request.messages)
        state.tail += size
        if base is not None:
            base.state.fork_refs += 1
        self._streams[request.path] = stream
        self.live.notify(request.path)
        return CreateResult(created=True, info=state.info())

    async def append(self, request: AppendRequest) -> AppendResult:
        stream = self._lookup(request.path, touch=True)
        state = stream.state
        decision = _rules.decide_append(state, request, self._max_stream_bytes)
        if decision.outcome is AppendOutcome.DUPLICATE:
            echo = decision.echo
            return AppendResult(
                outcome=decision.outcome,
                info=state.info(),
                producer_epoch=echo.epoch if echo else None,
                producer_seq=echo.last_seq if echo else None,
            )
        size = sum(len(message) for message in decision.messages)
        self._reserve(state.tail + size, size)
        self._write(stream, decision.messages)
        _rules.apply_decision(state, request, decision)
        self.live.notify(request.path)
        claim = decision.producer
        return AppendResult(
            outcome=decision.outcome,
            info=state.info(),
            producer_epoch=claim.epoch if claim else None,
            producer_seq=claim.seq if claim else None,
        )

    async def read(self, path: str, offset: int | Sentinel, max_bytes: int) -> ReadResult:
        stream = self._lookup(path, touch=True)
        state = stream.state
        if offset is Sentinel.NOW:
            return ReadResult(info=state.info(), start=state.tail, next_offset=state.tail)
        start = 0 if offset is Sentinel.BEGINNING else offset
        if start > state.tail or (state.is_json and not self._is_boundary(stream, start)):
            raise InvalidOffset()
        chunks: list[bytes] = []
        position = start
        budget = max_bytes
        for chunk_start, chunk in self._visible_chunks(stream, start):
            if budget <= 0:
                break
            if not state.is_json and len(chunk) > budget:
                chunk = chunk[:budget]
            chunks.append(chunk)
            position = chunk_start + len(chunk)
            budget -= len(chunk)
        return ReadResult(info=state.info(), start=start, next_offset=position, chunks=chunks)

    async def head(self, path: str) -> StreamInfo:
        return self._lookup(path, touch=False).state.info()

    async def delete(self, path: str) -> None:
        stream = self._lookup(path, touch=False)
        if stream.state.fork_refs > 0:
            stream.state.soft_deleted = True
        else:
            self._purge(stream)
        self.live.notify(path)

    # -- internals --------------------------------------------------------

    def _lookup(self, path: str, *, touch: bool) -> _Stream:
        stream = self._streams.get(path)
        if stream is None:
            raise StreamNotFound()
        state = stream.state
        if state.soft_deleted:
            raise StreamGone()
        moment = _rules.now()
        if state.is_expired(moment):
            self._expire(stream)
            raise StreamGone() if state.soft_deleted else StreamNotFound()
        if touch:
            state.touch(moment)
        return stream

    def _source(self, path: str, moment: float) -> _Stream:
        """The live stream a fork is taken from."""
        stream = self._streams.get(path)
        if stream is None:
            raise StreamNotFound("fork source not found")
        if stream.state.soft_deleted:
            raise StreamExists("fork source was deleted")
        if stream.state.is_expired(moment):
            self._expire(stream)
            raise StreamNotFound("fork source expired")
        return stream

    def _visible_chunks(self, stream: _Stream, start: int) -> Iterator[tuple[int, bytes]]:
        """Chunks from ``start`` to the tail, through the fork chain, sliced at its edges."""
        return _iter_chunks(stream, start, stream.state.tail)

    def _is_boundary(self, stream: _Stream, position: int) -> bool:
        while True:
            state = stream.state
            if position == state.tail or position == state.fork_offset:
                return True
            if position > state.fork_offset:
                index = bisect_right(stream.starts, position) - 1
                return index >= 0 and stream.starts[index] == position
            if stream.base is None:
                return False
            stream = stream.base

    def _reserve(self, new_tail: int, size: int) -> None:
        if new_tail > self._max_stream_bytes:
            raise PayloadTooLarge(f"stream would exceed {self._max_stream_bytes} bytes")
        if self._memory_bytes + size > self._max_memory_bytes:
            raise PayloadTooLarge("server memory limit reached")

    def _write(self, stream: _Stream, messages: tuple[bytes, ...]) -> None:
        """Store messages at the stream's tail; the caller advances the tail."""
        position = stream.state.tail
        for message in messages:
            stream.starts.append(position)
            stream.chunks.append(message)
            position += len(message)
            self._memory_bytes += len(message)

    def _expire(self, stream: _Stream) -> None:
        if stream.state.fork_refs > 0:
            stream.state.soft_deleted = True
        else:
            self._purge(stream)
        self.live.notify(stream.state.path)

    def _purge(self, stream: _Stream) -> None:
        """Drop a stream's data, then release its hold on its source (cascading)."""
        current: _Stream | None = stream
        while current is not None:
            if self._streams.get(current.state.path) is current:
                del self._streams[current.state.path]
            self._memory_bytes -= current.own_bytes()
            base = current.base
            current.chunks.clear()
            current.starts.clear()
            if base is None:
                return
            base.state.fork_refs -= 1
            current = base if base.state.fork_refs == 0 and base.state.soft_deleted else None

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(_SWEEP_INTERVAL_SECS)
            moment = _rules.now()
            for stream in list(self._streams.values()):
                state = stream.state
                if not state.soft_deleted and state.is_expired(moment):
                    self._expire(stream)


def _iter_chunks(stream: _Stream, start: int, limit: int) -> Iterator[tuple[int, bytes]]:
    state = stream.state
    if start < state.fork_offset and stream.base is not None:
        yield from _iter_chunks(stream.base, start, min(limit, state.fork_offset))
        start = state.fork_offset
    starts, chunks = stream.starts, stream.chunks
    index = max(0, bisect_right(starts, start) - 1)
    while index < len(starts) and starts[index] < limit:
        chunk_start, chunk = starts[index], chunks[index]
        index += 1
        if chunk_start + len(chunk) <= start:
            continue
        piece = chunk[max(0, start - chunk_start) : min(len(chunk), limit - chunk_start)]
        yield max(start, chunk_start), piece
