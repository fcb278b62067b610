"""The streams directory: per-stream bookkeeping, file names, open files and the I/O threads.

A stream's files, all in ``{root}/streams``:

- ``{id}.log``, or ``{id}.{n}.log`` once a retention rewrite made its
  generation ``n``: the log. Only the highest generation counts; a lower
  one is what a crash left behind mid-rewrite and is removed on start.
- ``{id}.idx``: the offset index side file (a cache).
- ``{id}.snap``: the stream's snapshot, if it has one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from ds_server.stores._file import codec
from ds_server.stores._file.filepool import FilePool
from ds_server.stores.dir_lock import DirectoryLock
from ds_server.stores.errors import StreamNotFound

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ds_server.stores._file.codec import FileKey
    from ds_server.stores._file.index import RecordIndex
    from ds_server.stores._rules import StreamState

P = ParamSpec("P")
T = TypeVar("T")

_NAME = re.compile(r"^([0-9a-f]{1,64})(?:\.([0-9]{1,9}))?\.(log|idx|snap)$")


class LogMoved(Exception):
    """The log was replaced by a rewrite since the caller looked; look again."""


@dataclass(slots=True, eq=False)
class StreamLog:
    """What the backend tracks of one stream's log; ``state`` is the engine's own object."""

    state: StreamState
    path: str  # the current log file
    end_pos: int  # where the next record goes
    last_crc: int  # of the last record
    synced_pos: int = 0  # the log is on disk up to here (durable mode)
    generation: int = 0
    snapshot_key: FileKey | None = None
    index: RecordIndex | None = None  # built on first read
    index_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Serializes writes to the log: appends (already one at a time, per the
    # engine), snapshot-time state records and rewrites.
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    purged: bool = False

    @property
    def stream_id(self) -> str:
        return self.state.stream_id

    def entry(self) -> codec.Entry:
        """A catalog entry checkpointing this log's current end."""
        checkpoint = codec.checkpoint_of(
            self.state,
            self.end_pos,
            self.last_crc,
            synced=self.synced_pos >= self.end_pos,
            generation=self.generation,
            snapshot_key=self.snapshot_key,
        )
        return codec.entry_of(self.state, checkpoint)


@dataclass(frozen=True, slots=True)
class Found:
    """What start-up finds of one stream on disk."""

    generation: int
    size: int  # of the log
    snapshot_key: FileKey | None


class Files:
    """Owns ``{root}/streams``: a directory lock, the file-handle pool, the I/O threads."""

    def __init__(self, root: Path, *, max_open_files: int, io_threads: int) -> None:
        self.root = root
        self.streams_dir = root / "streams"
        self._streams_root = str(self.streams_dir)
        self.pool = FilePool(max_open_files)
        self._executor = ThreadPoolExecutor(max_workers=io_threads, thread_name_prefix="ds-file")
        self._lock: DirectoryLock | None = None
        self.dir_fd: int | None = None

    def log_file(self, stream_id: str, generation: int = 0) -> str:
        # A plain string: built once per stream at start-up, 10,000 times over.
        name = f"{stream_id}.log" if generation == 0 else f"{stream_id}.{generation}.log"
        return os.path.join(self._streams_root, name)

    def index_path(self, stream_id: str) -> Path:
        return self.streams_dir / f"{stream_id}.idx"

    def snapshot_path(self, stream_id: str) -> Path:
        return self.streams_dir / f"{stream_id}.snap"

    def open(self) -> dict[str, Found]:
        """Create and lock the layout, drop leftovers; what is stored of each stream."""
        # Locked before anything is touched: a second store here would corrupt the logs.
        self._lock = DirectoryLock.acquire(self.root)
        self.streams_dir.mkdir(exist_ok=True)
        self.dir_fd = os.open(self.streams_dir, os.O_RDONLY)
        logs: dict[str, tuple[int, int]] = {}
        snaps: dict[str, FileKey] = {}
        indexes: list[str] = []
        leftovers: list[str] = []
        with os.scandir(self.streams_dir) as entries:
            for entry in entries:
                match = _NAME.match(entry.name)
                if match is None:
                    leftovers.append(entry.name)  # half-written temporaries
                    continue
                stream_id, generation, kind = match.group(1), int(match.group(2) or 0), match[3]
                if kind == "log":
                    size = entry.stat().st_size
                    older = logs.get(stream_id)
                    if older is not None:
                        # A rewrite's new generation is complete once it has its name.
                        keep, drop = sorted([older, (generation, size)])[::-1]
                        leftovers.append(os.path.basename(self.log_file(stream_id, drop[0])))
                        logs[stream_id] = keep
                    else:
                        logs[stream_id] = (generation, size)
                elif kind == "snap":
                    stat = entry.stat()
                    snaps[stream_id] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
                else:
                    indexes.append(stream_id)
        for name in leftovers:
            unlink_quietly(self.streams_dir / name)
        # Side files of streams whose purge a crash interrupted.
        for stream_id in set(snaps) - set(logs):
            unlink_quietly(self.snapshot_path(stream_id))
        for stream_id in set(indexes) - set(logs):
            unlink_quietly(self.index_path(stream_id))
        return {
            stream_id: Found(generation, size, snaps.get(stream_id))
            for stream_id, (generation, size) in logs.items()
        }

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self.pool.close()
        if self.dir_fd is not None:
            os.close(self.dir_fd)
            self.dir_fd = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run blocking file work in an I/O thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def with_fd(self, stream: StreamLog, path: str, fn: Callable[..., T], *args: object) -> T:
        """``fn(fd, *args)`` on the log file ``path`` the caller saw (in an I/O thread)."""
        try:
            handle = self.pool.acquire(path, path)
        except FileNotFoundError:
            if stream.path != path:
                raise LogMoved() from None
            raise StreamNotFound() from None  # purged meanwhile
        try:
            return fn(handle.fd, *args)
        finally:
            self.pool.release(handle)

    def remove(self, stream_id: str, path: str) -> None:
        """Close and unlink a stream's log (the commit point of a purge), then its other files."""
        self.pool.discard(path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        unlink_quietly(self.index_path(stream_id))
        unlink_quietly(self.snapshot_path(stream_id))


def unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
