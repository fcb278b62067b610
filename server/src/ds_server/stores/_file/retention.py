"""Freeing the bytes a snapshot retired: rewrite the log from the first record still needed.

Worth it only when the retired prefix is a good part of the log: each
rewrite copies what is kept, so it runs once the prefix is at least a
quarter of the file (and not tiny); until then reads below the earliest
offset are refused anyway, and a later snapshot triggers it. See
``rewrite`` for the file-level steps and why a crash at any point is safe.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from ds_server.stores._file import codec, records, rewrite

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.stores._file.files import Files, StreamLog
    from ds_server.stores._file.index import RecordIndex
    from ds_server.stores._file.indexes import IndexCache

# Rewrite only once this much (and a quarter of the log) is retired.
MIN_RECLAIM_BYTES = 64 * 1024


def plan(index: RecordIndex, before: int, tail: int, end_pos: int) -> tuple[int, int, int] | None:
    """Where to cut: (first kept record, its file position, its stream offset), or None.

    A record is kept unless its data ends at or before ``before``.
    """
    count = len(index)
    first = index.locate(before)
    if first < 0:
        return None
    end = index.starts[first + 1] if first + 1 < count else tail
    if end <= before:
        first += 1
    if first == 0:
        return None
    if first < count:
        return first, index.positions[first], index.starts[first]
    return first, end_pos, tail


class Retention:
    def __init__(
        self, files: Files, indexes: IndexCache, sync: Callable[[int], None] | None
    ) -> None:
        self._files = files
        self._indexes = indexes
        self._sync = sync  # None: no fsync (file-fast)
        self._rewriting: set[str] = set()

    async def reclaim(self, stream: StreamLog, before: int) -> bool:
        """Rewrite the stream's log without what ends at or before ``before``; True if done."""
        key = stream.stream_id
        if key in self._rewriting:
            return False
        index = await self._indexes.get(stream)
        cut = plan(index, before, stream.state.tail, stream.end_pos)
        if cut is None or cut[1] < max(MIN_RECLAIM_BYTES, stream.end_pos // 4):
            return False
        self._rewriting.add(key)
        try:
            await self._rewrite(stream, index, *cut)
        finally:
            self._rewriting.discard(key)
        return True

    async def _rewrite(
        self, stream: StreamLog, index: RecordIndex, first: int, cut_pos: int, base_start: int
    ) -> None:
        files = self._files
        # The state as of the log's end, where the kept records start: replaying
        # them over it changes nothing, so it may be taken now, before they are copied.
        copied_to, old_path, generation = stream.end_pos, stream.path, stream.generation + 1
        meta = codec.encoder.encode(stream.entry())
        base, base_crc = records.encode(records.Kind.BASE, records.Flag.NONE, base_start, meta, ())
        new_path = files.log_file(stream.stream_id, generation)
        tmp = new_path + ".tmp"
        fd = await files.run(files.with_fd, stream, old_path, _begin, tmp, base, cut_pos, copied_to)
        delta = len(base) - cut_pos
        async with stream.write_lock:
            if stream.purged or stream.path != old_path:
                await files.run(rewrite.abort, tmp, fd)
                return
            end_pos = stream.end_pos
            await files.run(
                files.with_fd,
                stream,
                old_path,
                self._finish,
                stream.stream_id,
                tmp,
                fd,
                new_path,
                copied_to,
                end_pos,
                copied_to + delta,
            )
            # From here on the new file is the log.
            stream.path, stream.generation = new_path, generation
            stream.end_pos = end_pos + delta
            if end_pos == cut_pos:
                stream.last_crc = base_crc  # nothing kept: the BASE record is the last
            stream.synced_pos = stream.end_pos if self._sync is not None else 0
            if stream.index is index:
                moved = index.rebased(generation, first, delta, stream.end_pos, stream.last_crc)
                self._indexes.replace(stream, moved)
            else:
                self._indexes.drop(stream)
        await files.run(self._retire, old_path)

    def _finish(
        self,
        src_fd: int,
        stream_id: str,
        tmp: str,
        fd: int,
        path: str,
        start: int,
        end: int,
        at: int,
    ) -> None:
        try:
            rewrite.copy(src_fd, fd, start, end, at)
        except BaseException:
            rewrite.abort(tmp, fd)
            raise
        # The side file indexes the old positions.
        with contextlib.suppress(OSError):
            self._files.index_path(stream_id).unlink()
        rewrite.finish(tmp, fd, path, self._sync)
        if self._sync is not None and self._files.dir_fd is not None:
            self._sync(self._files.dir_fd)

    def _retire(self, old_path: str) -> None:
        self._files.pool.discard(old_path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old_path)


def _begin(src_fd: int, tmp: str, base: bytes, start: int, end: int) -> int:
    return rewrite.begin(tmp, base, src_fd, start, end)
