"""What a storage backend must do, below the shared stream engine.

The engine (``_engine.LogStore``) owns the protocol: validation, forks,
expiry, live wake-ups, serialization per stream. A ``Persistence`` only
stores and returns bytes and state, keyed by ``stream_id`` (unique per
stream incarnation, so a re-created path never meets its predecessor's
data).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from ds_server.stores._commit import AppendCommit
    from ds_server.stores._rules import StreamState


# Not frozen: built on every request, and frozen dataclasses cost ~7x to construct.
# Treat as immutable.
@dataclass(slots=True)
class Chunk:
    """Stored bytes at a stream offset: a JSON message, or (part of) one byte append."""

    start: int
    data: bytes


class Persistence(abc.ABC):
    """Storage of stream states and bytes for one backend."""

    # True when the backend stores an append at once (append_now): the engine
    # then needs no task to protect the write from cancellation, and no
    # coroutine at all on the append path.
    inline = False

    async def open(self) -> list[StreamState]:
        """Open storage, repair what a crash left, and return every stored stream's state."""
        return []

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Flush and release files and connections."""

    def reserve(self, size: int) -> None:  # noqa: B027 - optional hook
        """Raise PayloadTooLarge/StorageFull if ``size`` more bytes cannot be stored."""

    @abc.abstractmethod
    async def create(self, state: StreamState, messages: Sequence[bytes]) -> None:
        """Store a new stream (state and initial messages), durably before returning."""

    @abc.abstractmethod
    async def append(self, commit: AppendCommit) -> Awaitable[None] | None:
        """Write an append; return None if it is durable already, else an awaitable for that.

        Returning before the fsync lets concurrent appends share one
        (group commit); the engine acknowledges only after the awaitable.
        """

    def append_now(self, commit: AppendCommit) -> None:
        """Store an append durably before returning; only backends that are ``inline``."""
        raise NotImplementedError

    @abc.abstractmethod
    async def save_state(self, state: StreamState) -> None:
        """Persist a metadata change (soft delete) durably."""

    @abc.abstractmethod
    async def save_access(self, accesses: Sequence[tuple[str, float]]) -> None:
        """Record last-access times (sliding TTLs); best effort, batched."""

    @abc.abstractmethod
    async def purge(self, state: StreamState) -> None:
        """Remove a stream's state and bytes for good."""

    @abc.abstractmethod
    async def read(
        self, stream_id: str, start: int, limit: int, max_bytes: int, *, whole: bool
    ) -> list[Chunk]:
        """Chunks overlapping ``[start, limit)``, in order, about ``max_bytes`` in all.

        At least one chunk when any exists; every chunk is cut to the range.
        ``whole=False`` (byte reads) also cuts the last one at ``max_bytes``.
        ``whole=True`` (JSON reads, and whole-append reads of byte streams)
        never cuts a chunk for ``max_bytes``: each is a whole message or
        append, except where ``start`` or ``limit`` falls inside one (a
        fork's inherited range may end inside an append).
        """

    @abc.abstractmethod
    async def is_boundary(self, stream_id: str, position: int) -> bool:
        """True when a stored chunk of this stream starts exactly at ``position``."""

    # -- extensions: buckets, snapshots, retention ----------------------------

    async def load_buckets(self) -> list[tuple[str, float]]:
        """Every stored bucket as ``(bucket_id, created_at)``."""
        return []

    async def save_bucket(self, bucket_id: str, created_at: float) -> None:
        """Store a new bucket durably."""
        raise NotImplementedError(f"{type(self).__name__} does not store buckets")

    async def drop_bucket(self, bucket_id: str) -> None:
        """Remove a bucket durably."""
        raise NotImplementedError(f"{type(self).__name__} does not store buckets")

    async def save_snapshot(self, state: StreamState, data: bytes) -> None:
        """Store ``state.snapshot``'s blob and ``state.earliest_offset`` durably, together.

        The previous snapshot of the stream is dropped in the same step. Only
        those two fields of the state change here: appends run concurrently.
        ``open()`` must restore both fields.
        """
        raise NotImplementedError(f"{type(self).__name__} does not store snapshots")

    async def load_snapshot(self, stream_id: str, offset: int) -> bytes:
        """The stored blob of the stream's snapshot at ``offset``."""
        raise NotImplementedError(f"{type(self).__name__} does not store snapshots")

    async def reclaim_before(self, stream_id: str, before: int) -> None:
        """Free the space of chunks that end at or before ``before``, crash-safely.

        Called after a snapshot moved the earliest retained offset; ``before``
        never exceeds it nor the earliest offset of any fork of the stream (at
        any depth), whose reads below its fork offset come here. Reads
        below the earliest offset are refused by the engine, so this may run
        lazily, but it must never remove data at or after ``before``.
        """
        raise NotImplementedError(f"{type(self).__name__} does not reclaim space")
