"""The in-memory backend: fast and volatile, for tests, benchmarks and development."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ds_server.stores._chunks import cut_chunks
from ds_server.stores.errors import PayloadTooLarge
from ds_server.stores.persistence import InlinePersistence

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ds_server.settings import Settings
    from ds_server.stores._commit import AppendCommit
    from ds_server.stores._rules import StreamState
    from ds_server.stores.persistence import Chunk


@dataclass(slots=True)
class _Log:
    # One chunk per JSON message or byte append, with its start offset.
    starts: list[int] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)

    def add(self, start: int, messages: Sequence[bytes]) -> int:
        first = start
        for message in messages:
            self.starts.append(start)
            self.chunks.append(message)
            start += len(message)
        return start - first


class MemoryPersistence(InlinePersistence):
    """Chunks in Python lists; a bounded total so a test server cannot eat the machine."""

    def __init__(self, max_memory_bytes: int) -> None:
        self._logs: dict[str, _Log] = {}
        self._snapshots: dict[str, bytes] = {}
        self._max_memory_bytes = max_memory_bytes
        self._memory_bytes = 0

    async def open(self) -> list[StreamState]:
        return []  # nothing survives a restart

    async def close(self) -> None:
        return None

    def reserve(self, size: int) -> None:
        if self._memory_bytes + size > self._max_memory_bytes:
            raise PayloadTooLarge("server memory limit reached")

    async def create(self, state: StreamState, messages: Sequence[bytes]) -> None:
        log = self._logs[state.stream_id] = _Log()
        self._memory_bytes += log.add(state.fork_offset, messages)

    def append_now(self, commit: AppendCommit) -> None:
        self._memory_bytes += self._logs[commit.stream_id].add(commit.start, commit.messages)

    async def save_state(self, state: StreamState) -> None:
        return None

    async def save_access(self, accesses: Sequence[tuple[str, float]]) -> None:
        return None

    async def purge(self, state: StreamState) -> None:
        self._snapshots.pop(state.stream_id, None)
        log = self._logs.pop(state.stream_id, None)
        if log is not None:
            self._memory_bytes -= sum(len(chunk) for chunk in log.chunks)

    async def read(
        self, stream_id: str, start: int, limit: int, max_bytes: int, *, whole: bool
    ) -> list[Chunk]:
        log = self._logs[stream_id]
        starts, chunks = log.starts, log.chunks
        first = max(0, bisect_right(starts, start) - 1)
        pieces = ((starts[i], False, chunks[i]) for i in range(first, len(starts)))
        return cut_chunks(pieces, start, limit, max_bytes, whole=whole)

    async def load_buckets(self) -> list[tuple[str, float]]:
        return []

    async def save_bucket(self, bucket_id: str, created_at: float) -> None:
        return None

    async def drop_bucket(self, bucket_id: str) -> None:
        return None

    async def save_snapshot(self, state: StreamState, data: bytes) -> None:
        self._snapshots[state.stream_id] = data

    async def load_snapshot(self, stream_id: str, offset: int) -> bytes:
        return self._snapshots[stream_id]

    async def reclaim_before(self, stream_id: str, before: int) -> None:
        log = self._logs[stream_id]
        # Drop the whole chunks that end at or before ``before``.
        count = bisect_right(log.starts, before)
        if count and log.starts[count - 1] + len(log.chunks[count - 1]) > before:
            count -= 1
        freed = sum(len(chunk) for chunk in log.chunks[:count])
        del log.starts[:count], log.chunks[:count]
        self._memory_bytes -= freed

    async def is_boundary(self, stream_id: str, position: int) -> bool:
        starts = self._logs[stream_id].starts
        index = bisect_right(starts, position) - 1
        return index >= 0 and starts[index] == position


def from_settings(settings: Settings) -> MemoryPersistence:
    """The ``memory`` backend: nothing survives a restart."""
    return MemoryPersistence(settings.limits.max_memory_bytes)
