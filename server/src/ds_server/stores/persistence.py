"""The interface a storage backend implements: ``Persistence`` (and ``InlinePersistence``).

Everything of the protocol lives above it, in the stream engine
(``_engine.Engine``) and the extensions composed on it (``_buckets``,
``_snapshots``): validation, producer and ``Stream-Seq`` rules, forks,
expiry, live wake-ups, serialization per stream, retention. A backend only
stores and returns bytes and state, keyed by ``stream_id`` (unique per
stream incarnation, so a re-created path never meets its predecessor's
data), and makes them durable when it says so. Every method below is
required; ``docs/storage-backends.md`` describes the contract and how the
backend contract suite checks it.

A backend is then its ``Persistence`` and one function that builds it from
the settings (see ``memory.py``), registered by name in ``ds_server.backends``;
``registry.open_store`` gives it to ``LogStore``, every backend's ``Store``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

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
    """Storage of stream states, bytes, buckets and snapshots for one backend."""

    # -- lifecycle --------------------------------------------------------------

    @abc.abstractmethod
    async def open(self) -> list[StreamState]:
        """Open storage, repair what a crash left, and return every stored stream's state.

        The engine keeps and mutates the returned states (and those ``create``
        receives) for the life of the store.
        """

    @abc.abstractmethod
    async def close(self) -> None:
        """Flush and release files and connections (the last call made)."""

    @abc.abstractmethod
    def reserve(self, size: int) -> None:
        """Raise PayloadTooLarge/StorageFull now if ``size`` more bytes cannot be stored.

        Called before a write is decided; a backend that only learns of a
        full disk when it writes may do nothing here.
        """

    # -- streams ------------------------------------------------------------------

    @abc.abstractmethod
    async def create(self, state: StreamState, messages: Sequence[bytes]) -> None:
        """Store a new stream (state and initial messages), durably before returning."""

    @abc.abstractmethod
    async def append(self, commit: AppendCommit) -> Awaitable[None] | None:
        """Write an append; return None if it is durable already, else an awaitable for that.

        The bytes, the producer claim, the ``Stream-Seq`` and the close flag of
        the commit become durable together. Returning before the fsync lets
        concurrent appends share one (group commit); the engine acknowledges
        only after the awaitable, and a failed awaitable rewinds the stream
        (that write and every later one of the stream must fail too).
        Appends of one stream are called one at a time, in order.
        """

    @abc.abstractmethod
    async def save_state(self, state: StreamState) -> None:
        """Persist a metadata change (soft delete) durably."""

    @abc.abstractmethod
    async def save_access(self, accesses: Sequence[tuple[str, float]]) -> None:
        """Record last-access times ``(stream_id, when)`` (sliding TTLs); best effort, batched."""

    @abc.abstractmethod
    async def purge(self, state: StreamState) -> None:
        """Remove a stream's state, bytes and snapshot for good."""

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

    # -- buckets ------------------------------------------------------------------

    @abc.abstractmethod
    async def load_buckets(self) -> list[tuple[str, float]]:
        """Every stored bucket as ``(bucket_id, created_at)``."""

    @abc.abstractmethod
    async def save_bucket(self, bucket_id: str, created_at: float) -> None:
        """Store a new bucket durably."""

    @abc.abstractmethod
    async def drop_bucket(self, bucket_id: str) -> None:
        """Remove a bucket durably."""

    # -- snapshots and retention ----------------------------------------------------

    @abc.abstractmethod
    async def save_snapshot(self, state: StreamState, data: bytes) -> None:
        """Store ``state.snapshot``'s blob and ``state.earliest_offset`` durably, together.

        The previous snapshot of the stream is dropped in the same step. Only
        those two fields of the state change here: appends run concurrently.
        ``open()`` must restore both fields.
        """

    @abc.abstractmethod
    async def load_snapshot(self, stream_id: str, offset: int) -> bytes:
        """The stored blob of the stream's snapshot at ``offset``."""

    @abc.abstractmethod
    async def reclaim_before(self, stream_id: str, before: int) -> None:
        """Free the space of chunks that end at or before ``before``, crash-safely.

        Called after a snapshot moved the earliest retained offset; ``before``
        never exceeds it nor the earliest offset of any fork of the stream (at
        any depth), whose reads below its fork offset come here. Reads
        below the earliest offset are refused by the engine, so this may run
        lazily, but it must never remove data at or after ``before``.
        """


class InlinePersistence(Persistence):
    """A backend that stores an append at once, without suspending (the memory backend).

    The engine then appends with plain calls: no lock, no task to protect the
    write from cancellation, no coroutine (what keeps the in-memory append
    path at its speed). Implement ``append_now``; ``append`` is derived.
    """

    @abc.abstractmethod
    def append_now(self, commit: AppendCommit) -> None:
        """Store an append before returning, without suspending."""

    async def append(self, commit: AppendCommit) -> None:
        self.append_now(commit)


@dataclass(frozen=True, slots=True)
class StreamChange:
    """A change of the stored catalog, as a shared backend announces it to every process."""

    # "create", "append", "state" (soft delete), "snapshot", "purge" or "bucket".
    kind: str
    stream_id: str  # the bucket id for "bucket"
    path: str
    version: int  # the stream's state version after the change
    tail: int
    closed: bool
    origin: str  # ``SharedPersistence.origin`` of the process that made it


class SharedPersistence(Persistence):
    """A backend several ds-server processes use at once (the postgres one).

    Each process's engine then treats its states as a cache: writes carry the
    version they were decided on (``AppendCommit.version``) and fail with
    ``StaleStream`` if another process changed the stream first; readers
    reload what another process changed, learning of it from ``listen``.
    """

    # Unique per process (per open persistence): tells a process its own changes.
    origin: str

    @abc.abstractmethod
    async def load_stream(self, path: str) -> StreamState | None:
        """The stored state of the stream at ``path`` (soft-deleted included), or None."""

    @abc.abstractmethod
    async def stream_version(self, stream_id: str) -> int | None:
        """The stored state version of a stream, or None once it is purged."""

    @abc.abstractmethod
    async def load_streams(self) -> list[StreamState]:
        """Every stored stream's state, as ``open`` returns them (after missed changes)."""

    @abc.abstractmethod
    async def count_forks(self, stream_id: str) -> int:
        """How many un-purged streams are forks of this one (any process's)."""

    @abc.abstractmethod
    async def load_usage(self, buckets: Sequence[str]) -> list[tuple[str, int, int]]:
        """The stored totals ``(bucket, bytes, streams)`` of those of ``buckets`` that have some.

        A shared backend keeps each bucket's totals (``_quotas``) itself and
        updates them in the transaction of every write that changes them,
        refusing one its bucket's quota has no room for: appends with
        ``QuotaRefused`` (the engine reloads and decides again), creates and
        snapshots with ``QuotaExceeded``.
        """

    @abc.abstractmethod
    async def barrier(self) -> None:
        """Return once every change committed before the call was passed to ``on_change``."""

    @abc.abstractmethod
    async def listen(self, on_change: Callable[[StreamChange | None], None]) -> None:
        """Call ``on_change`` for every change any process commits, from now on, in commit order.

        Returns once listening. ``None`` means changes may have been missed (the
        connection was lost and is back): the caller resynchronises.
        """
