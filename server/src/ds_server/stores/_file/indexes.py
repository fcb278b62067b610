"""In-memory record indexes: built on first read, bounded in total, saved now and then."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING

from ds_server.stores._file.files import LogMoved, unlink_quietly
from ds_server.stores._file.index import RecordIndex
from ds_server.stores.errors import StreamNotFound

if TYPE_CHECKING:
    from ds_server.stores._file.files import Files, StreamLog

log = logging.getLogger("ds_server.stores.file")

# Bound on indexed records held in memory across streams (16 bytes each).
MAX_INDEXED_RECORDS = 4_000_000


class IndexCache:
    """Indexes of recently read or written streams, least recently used dropped first."""

    def __init__(self, files: Files, max_records: int = MAX_INDEXED_RECORDS) -> None:
        self._files = files
        self._max_records = max_records
        self._logs: OrderedDict[str, StreamLog] = OrderedDict()
        self._records = 0

    async def get(self, stream: StreamLog) -> RecordIndex:
        """The stream's index, built from its side file and log on first use."""
        index = stream.index
        if index is None:
            async with stream.index_lock:
                index = stream.index
                if index is None:
                    index = await self._build(stream)
        self._touch(stream)
        return index

    async def _build(self, stream: StreamLog) -> RecordIndex:
        files = self._files
        while True:
            generation, path = stream.generation, stream.path
            try:
                index = await files.run(
                    files.with_fd,
                    stream,
                    path,
                    RecordIndex.load,
                    files.index_path(stream.stream_id),
                    generation,
                    stream.end_pos,
                )
                # Appends meanwhile are not in it yet: catch up, then publish on the
                # event loop, where no append can slip in between.
                while index.end_pos < stream.end_pos and stream.generation == generation:
                    end_pos, end_crc = stream.end_pos, stream.last_crc
                    await files.run(
                        files.with_fd, stream, path, index.extend_from_log, end_pos, end_crc
                    )
            except LogMoved:
                continue
            if stream.purged:
                raise StreamNotFound()
            if stream.generation == generation:
                break  # else a rewrite replaced the log meanwhile: build again
        stream.index = index
        self._records += len(index)
        return index

    def created(self, stream: StreamLog, start: int | None) -> None:
        """A new stream: its index is its CREATE record (``start`` None: it has no data)."""
        index = stream.index = RecordIndex(stream.generation)
        if start is not None:
            index.add(start, 0)
        index.advance(stream.end_pos, stream.last_crc)
        self._records += len(index)
        self._touch(stream)

    def written(self, stream: StreamLog, data_start: int | None, pos: int) -> None:
        """A record was written at ``pos`` (``data_start`` None: it carries no data)."""
        index = stream.index
        if index is None:
            return
        if data_start is not None:
            index.add(data_start, pos)
            self._records += 1
        index.advance(stream.end_pos, stream.last_crc)

    def replace(self, stream: StreamLog, index: RecordIndex) -> None:
        """A rewrite gave the stream a new log; this is its index."""
        old = stream.index
        self._records += len(index) - (len(old) if old is not None else 0)
        stream.index = index
        self._touch(stream)

    def drop(self, stream: StreamLog) -> None:
        """Forget a stream's index (a later read rebuilds it)."""
        self._logs.pop(stream.stream_id, None)
        if stream.index is not None:
            self._records -= len(stream.index)
            stream.index = None

    async def save(self, threshold: int) -> None:
        """Write the side file of every index with ``threshold`` records not in it yet."""
        for stream in list(self._logs.values()):
            index = stream.index
            if index is None or len(index) - index.saved < threshold:
                continue
            snapshot = index.snapshot()
            path = self._files.index_path(stream.stream_id)
            try:
                await self._files.run(snapshot.save, path)
            except OSError as error:
                log.warning("could not save %s: %s", path.name, error)
                continue
            index.saved = len(snapshot)
            if stream.purged or stream.generation != snapshot.generation:
                await self._files.run(unlink_quietly, path)

    def _touch(self, stream: StreamLog) -> None:
        key = stream.stream_id
        self._logs[key] = stream
        self._logs.move_to_end(key)
        while self._records > self._max_records and len(self._logs) > 1:
            self.drop(next(iter(self._logs.values())))
