"""The file backend's ``Persistence``: one append-only log per stream plus a catalog.

Layout under ``{data_dir}/files/``::

    LOCK                      flock'ed while a server uses the directory
    catalog.log               metadata index: configs, checkpoints, access times
    buckets.msgpack           the buckets of the /ds surface
    streams/{stream_id}.log   the stream's records (the source of truth)
    streams/{stream_id}.idx   offset index side file (a cache)
    streams/{stream_id}.snap  the stream's snapshot, if it has one

(see ``files`` for log generations, which retention rewrites start)

Durability (``durable=True``, ``file-durable``): a create returns after its
log and the directory entry are fsynced; an append returns an awaitable
that resolves once an fdatasync covering its record has finished (group
commit, see ``flusher``), and the engine acknowledges only then. The record
carries the producer claim and Stream-Seq that guard it, so they are
durable exactly when the bytes are. ``durable=False`` (``file-fast``) skips
every fsync: a killed process loses nothing (the page cache survives it),
a power cut may lose recent writes.

The engine keeps and mutates the ``StreamState`` objects ``open`` returns
and ``create`` receives; checkpoints snapshot them on the event loop, where
they always match the log's end (the engine applies a write right after
``append`` returns, with no await in between).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ds_server.stores._file import buckets, codec, records, segment, snapshots
from ds_server.stores._file.catalog import Access, Drop
from ds_server.stores._file.checkpoint import Checkpointer
from ds_server.stores._file.files import Files, LogMoved, StreamLog
from ds_server.stores._file.flusher import Flusher
from ds_server.stores._file.indexes import IndexCache
from ds_server.stores._file.reads import boundary_in_index, boundary_in_record, read_chunks
from ds_server.stores._file.recovery import recover, trusted
from ds_server.stores._file.retention import Retention
from ds_server.stores._file.space import FreeSpace
from ds_server.stores.errors import StorageFull, StreamNotFound
from ds_server.stores.persistence import Persistence

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence
    from concurrent.futures import Future
    from typing import TypeVar

    from ds_server.stores._commit import AppendCommit
    from ds_server.stores._file.catalog import Loaded
    from ds_server.stores._file.codec import Snapshot
    from ds_server.stores._file.files import Found
    from ds_server.stores._file.recovery import Recovered
    from ds_server.stores._rules import StreamState
    from ds_server.stores.persistence import Chunk

    T = TypeVar("T")

log = logging.getLogger("ds_server.stores.file")

# Save an index side file once this many records are not in it yet.
_INDEX_SAVE_EVERY = 4096
# At shutdown, smaller indexes are not worth a file: rebuilding them is quick.
_INDEX_SAVE_AT_CLOSE = 256
_RECOVERY_BATCH = 256


class FilePersistence(Persistence):
    def __init__(
        self,
        root: Path,
        *,
        durable: bool,
        max_open_files: int = 512,
        checkpoint_secs: float = 1.0,
        io_threads: int = 8,
    ) -> None:
        self.durable = durable
        self._files = Files(root, max_open_files=max_open_files, io_threads=io_threads)
        self._flusher = Flusher(self._files.pool)
        self._logs: dict[str, StreamLog] = {}
        self._checkpoints = Checkpointer(root / "catalog.log", self._logs)
        self._indexes = IndexCache(self._files)
        self._retention = Retention(self._files, self._indexes, self._sync if durable else None)
        self._space = FreeSpace(root)
        self._buckets_path = root / "buckets.msgpack"
        self._buckets: dict[str, float] = {}
        self._checkpoint_secs = checkpoint_secs
        self._checkpointer: asyncio.Task[None] | None = None

    # -- observability (tests, metrics) -------------------------------------

    @property
    def fsync_count(self) -> int:
        return self._flusher.fsyncs

    @property
    def open_files(self) -> int:
        return self._files.pool.open_files

    def log_path(self, stream_id: str) -> Path:
        """The stream's current log file."""
        stream = self._logs.get(stream_id)
        return Path(self._files.log_file(stream_id, 0 if stream is None else stream.generation))

    # -- lifecycle ------------------------------------------------------------

    async def open(self) -> list[StreamState]:
        try:
            return await self._open()
        except BaseException:
            await asyncio.to_thread(self._shutdown)
            raise

    async def _open(self) -> list[StreamState]:
        found = await self._files.run(self._files.open)
        loaded = await self._checkpoints.load()
        ids = list(found)
        batches = [ids[i : i + _RECOVERY_BATCH] for i in range(0, len(ids), _RECOVERY_BATCH)]
        repaired = not loaded.clean
        for batch in await asyncio.gather(
            *(self._files.run(self._recover_batch, batch, found, loaded) for batch in batches)
        ):
            for stream_id, recovered, snapshot in batch:
                self._adopt(stream_id, recovered, found[stream_id], snapshot, loaded)
                repaired = repaired or bool(recovered.replayed or recovered.truncated)
        if repaired or loaded.entries.keys() != self._logs.keys():
            # Replace checkpoints the repair made stale; after a clean shutdown
            # with nothing to repair, the catalog is current as it is.
            await self._checkpoints.compact()
        self._checkpointer = asyncio.create_task(self._checkpoint_forever())
        return [stream.state for stream in self._logs.values()]

    async def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checkpointer
            self._checkpointer = None
        try:
            await self._indexes.save(threshold=_INDEX_SAVE_AT_CLOSE)
            await self._checkpoints.compact(clean=True)
        finally:
            await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        self._flusher.close()
        self._checkpoints.close()
        self._files.close()

    def _recover_batch(
        self, stream_ids: Sequence[str], found: dict[str, Found], loaded: Loaded
    ) -> list[tuple[str, Recovered, Snapshot | None]]:
        out = []
        for stream_id in stream_ids:
            on_disk = found[stream_id]
            path = self._files.log_file(stream_id, on_disk.generation)
            entry = loaded.entries.get(stream_id)
            recovered = None
            if entry is not None:
                recovered = trusted(entry, on_disk.size, on_disk.generation, clean=loaded.clean)
            if recovered is None:
                recovered = recover(
                    path, stream_id, entry, on_disk.generation, durable=self.durable
                )
            if recovered is None:
                log.warning("removing %s: its stream was never completely created", path)
                self._files.remove(stream_id, path)
                continue
            if recovered.truncated:
                log.warning("%s: cut a torn tail of %d bytes", path, recovered.truncated)
            snapshot = None
            if on_disk.snapshot_key is not None:
                cached = entry.checkpoint if entry is not None else None
                if cached is not None and cached.snapshot_key == on_disk.snapshot_key:
                    snapshot = cached.snapshot
                else:
                    snapshot = snapshots.read_info(self._files.snapshot_path(stream_id))
            out.append((stream_id, recovered, snapshot))
        return out

    def _adopt(
        self,
        stream_id: str,
        recovered: Recovered,
        on_disk: Found,
        snapshot: Snapshot | None,
        loaded: Loaded,
    ) -> None:
        state = recovered.state
        state.last_access = max(state.last_access, loaded.accesses.get(stream_id, 0.0))
        if snapshot is not None:
            state.snapshot = codec.snapshot_info(snapshot)
            state.earliest_offset = max(state.earliest_offset, snapshot[0])
        self._logs[stream_id] = StreamLog(
            state,
            self._files.log_file(stream_id, on_disk.generation),
            recovered.end_pos,
            recovered.last_crc,
            synced_pos=recovered.end_pos if recovered.synced else 0,
            generation=on_disk.generation,
            snapshot_key=on_disk.snapshot_key if snapshot is not None else None,
        )

    async def _checkpoint_forever(self) -> None:
        while True:
            await asyncio.sleep(self._checkpoint_secs)
            try:
                await self.checkpoint()
            except Exception:
                log.exception("checkpoint failed; start-up will replay more of the logs")

    async def checkpoint(self) -> None:
        """Checkpoint changed streams and save grown indexes (runs every second)."""
        await self._checkpoints.checkpoint()
        await self._indexes.save(threshold=_INDEX_SAVE_EVERY)

    # -- writes ---------------------------------------------------------------

    def reserve(self, size: int) -> None:
        self._check_healthy()
        self._space.reserve(size)

    async def create(self, state: StreamState, messages: Sequence[bytes]) -> None:
        self._check_healthy()
        flags = records.Flag.CLOSE if state.closed else records.Flag.NONE
        meta = codec.encoder.encode(codec.config_of(state))
        data, crc = records.encode(records.Kind.CREATE, flags, state.fork_offset, meta, messages)
        stream = StreamLog(state, self._files.log_file(state.stream_id), len(data), crc)
        await self._files.run(self._create_file, stream, data)
        if self.durable:
            stream.synced_pos = stream.end_pos
        self._logs[state.stream_id] = stream
        self._indexes.created(stream, state.fork_offset if state.tail > state.fork_offset else None)
        self._checkpoints.mark(state.stream_id)

    def _create_file(self, stream: StreamLog, data: bytes) -> None:
        try:
            handle = self._files.pool.acquire(stream.path, stream.path, create=True)
        except OSError as error:
            if segment.no_space(error):  # no inode left, say
                raise StorageFull() from error
            raise
        try:
            segment.write_at(handle.fd, 0, data)
            if self.durable:
                self._flusher.sync_now(handle.fd)
                self._sync_dir()
        except BaseException:
            self._files.pool.release(handle)
            self._files.remove(stream.stream_id, stream.path)
            raise
        self._files.pool.release(handle)

    async def append(self, commit: AppendCommit) -> Awaitable[None] | None:
        self._check_healthy()
        if not (commit.messages or commit.close or commit.producer or commit.stream_seq):
            return None  # nothing the engine will change needs recording
        stream = self._stream(commit.stream_id)
        meta = codec.AppendMeta(
            producer=codec.claim_of(commit.producer),
            writer=commit.writer,
            stream_seq=commit.stream_seq,
            last_access=commit.last_access,
        )
        flags = records.Flag.CLOSE if commit.close else records.Flag.NONE
        data, crc = records.encode(
            records.Kind.APPEND, flags, commit.start, codec.encoder.encode(meta), commit.messages
        )
        return await self._write(stream, data, crc, commit.start if commit.size else None)

    async def save_state(self, state: StreamState) -> None:
        self._check_healthy()
        stream = self._stream(state.stream_id)
        meta = codec.encoder.encode(codec.StateMeta(soft_deleted=state.soft_deleted))
        data, crc = records.encode(records.Kind.STATE, records.Flag.NONE, state.tail, meta, ())
        synced = await self._write(stream, data, crc, None)
        if synced is not None:
            await synced

    async def _write(
        self, stream: StreamLog, data: bytes, crc: int, data_start: int | None
    ) -> asyncio.Future[None] | None:
        """Write a record at the log's end; the awaitable resolves once it is fsynced."""
        async with stream.write_lock:
            pos = stream.end_pos
            synced = await self._files.run(self._write_at, stream, stream.path, pos, data)
            stream.end_pos, stream.last_crc = pos + len(data), crc
            self._indexes.written(stream, data_start, pos)
        self._checkpoints.mark(stream.stream_id)
        return None if synced is None else self._on_synced(stream, synced)

    def _write_at(self, stream: StreamLog, path: str, pos: int, data: bytes) -> Future[None] | None:
        handle = self._files.pool.acquire(path, path)
        try:
            segment.write_at(handle.fd, pos, data)
            self._space.spend(len(data))
            return self._flusher.submit(handle) if self.durable else None
        finally:
            self._files.pool.release(handle)

    def _on_synced(self, stream: StreamLog, synced: Future[None]) -> asyncio.Future[None]:
        """An awaitable for the fsync; once done, the next checkpoint says so."""
        end_pos, generation = stream.end_pos, stream.generation
        waiter = asyncio.wrap_future(synced)

        def done(future: asyncio.Future[None]) -> None:
            if not future.cancelled() and future.exception() is None:
                if stream.generation == generation:
                    stream.synced_pos = max(stream.synced_pos, end_pos)
                if not stream.purged:
                    self._checkpoints.mark(stream.stream_id)

        waiter.add_done_callback(done)
        return waiter

    async def save_access(self, accesses: Sequence[tuple[str, float]]) -> None:
        times = [(sid, moment) for sid, moment in accesses if sid in self._logs]
        if times:
            await self._checkpoints.write([Access(times)])

    async def purge(self, state: StreamState) -> None:
        stream = self._logs.pop(state.stream_id, None)
        if stream is None:
            return
        stream.purged = True
        self._indexes.drop(stream)
        self._checkpoints.forget(state.stream_id)
        # Unlinking the log is the commit point; the catalog entry is only a cache.
        async with stream.write_lock:
            await self._files.run(self._remove, stream)
        await self._checkpoints.write([Drop(state.stream_id)])

    def _remove(self, stream: StreamLog) -> None:
        self._files.remove(stream.stream_id, stream.path)
        if self.durable:
            self._sync_dir()

    # -- extensions: buckets, snapshots, retention -----------------------------

    async def load_buckets(self) -> list[tuple[str, float]]:
        # The engine asks before ``open``: read the file itself.
        self._buckets = dict(await self._files.run(buckets.load, self._buckets_path))
        return sorted(self._buckets.items())

    async def save_bucket(self, bucket_id: str, created_at: float) -> None:
        await self._save_buckets({**self._buckets, bucket_id: created_at})

    async def drop_bucket(self, bucket_id: str) -> None:
        await self._save_buckets({k: v for k, v in self._buckets.items() if k != bucket_id})

    async def _save_buckets(self, new: dict[str, float]) -> None:
        self._check_healthy()
        await self._files.run(buckets.save, self._buckets_path, new, durable=self.durable)
        self._buckets = new

    async def save_snapshot(self, state: StreamState, data: bytes) -> None:
        self._check_healthy()
        stream = self._stream(state.stream_id)
        snapshot = codec.snapshot_of(state.snapshot)
        assert snapshot is not None
        path = self._files.snapshot_path(state.stream_id)
        sync = self._sync if self.durable else None
        key = await self._files.run(snapshots.write, path, snapshot, data, sync)
        if self.durable:
            await self._files.run(self._sync_dir)
        stream.snapshot_key = key
        self._checkpoints.mark(state.stream_id)

    async def load_snapshot(self, stream_id: str, offset: int) -> bytes:
        self._stream(stream_id)
        return await self._files.run(
            snapshots.read_blob, self._files.snapshot_path(stream_id), offset
        )

    async def reclaim_before(self, stream_id: str, before: int) -> None:
        stream = self._stream(stream_id)
        if await self._retention.reclaim(stream, before):
            self._checkpoints.mark(stream_id)

    # -- reads ----------------------------------------------------------------

    async def read(
        self, stream_id: str, start: int, limit: int, max_bytes: int, *, whole: bool
    ) -> list[Chunk]:
        return await self._read(stream_id, read_chunks, start, limit, max_bytes, whole)

    async def is_boundary(self, stream_id: str, position: int) -> bool:
        known = boundary_in_index(await self._indexes.get(self._stream(stream_id)), position)
        if known is not None:
            return known
        return await self._read(stream_id, boundary_in_record, position)

    async def _read(self, stream_id: str, fn: Callable[..., T], *args: object) -> T:
        """``fn(fd, index, *args)`` on the stream's log, looking again if a rewrite moved it."""
        stream = self._stream(stream_id)
        files = self._files
        while True:
            index = await self._indexes.get(stream)
            path = stream.path
            if index.generation != stream.generation:
                continue  # a rewrite swapped the log while the index was fetched
            try:
                return await files.run(files.with_fd, stream, path, fn, index, *args)
            except LogMoved:
                continue

    # -- helpers ----------------------------------------------------------------

    def _stream(self, stream_id: str) -> StreamLog:
        stream = self._logs.get(stream_id)
        if stream is None:
            raise StreamNotFound()
        return stream

    def _sync(self, fd: int) -> None:
        self._flusher.sync_now(fd)

    def _sync_dir(self) -> None:
        assert self._files.dir_fd is not None
        self._flusher.sync_now(self._files.dir_fd)

    def _check_healthy(self) -> None:
        failure = self._flusher.error
        if failure is not None:
            raise StorageFull(failure.reason) from failure.__cause__
