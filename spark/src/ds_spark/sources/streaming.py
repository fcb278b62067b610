"""``spark.readStream.format("durable_streams")``: Spark offsets are stream offsets.

A micro-batch's offset is a JSON object of stream path -> the stream
offset it has been read up to (a message boundary: a tail the server
reported), or ``bootstrap`` / ``earliest`` for a stream not read yet. A
batch reads each stream from its start offset up to its end offset and no
further, so a query restarted from its checkpoint re-reads exactly the
batch it had not committed: nothing is skipped or read twice. Streams that
appear later are picked up by the next batch, from their configured start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_sessions.protocol.offsets import format_offset, parse_offset
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    SupportsTriggerAvailableNow,
)

from ds_spark.server import stream_server
from ds_spark.sources.options import BOOTSTRAP, EARLIEST, Start
from ds_spark.sources.plan import discover, plan_stream
from ds_spark.sources.rows import read_slice

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from durable_sessions.server import StreamServer

    from ds_spark.sources.options import SourceOptions
    from ds_spark.sources.rows import EventRow

Offsets = dict[str, str]


class DurableStreamsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches over every matching stream, each from where the previous one ended."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._target: dict[str, int] | None = None

    def initialOffset(self) -> Offsets:
        with stream_server(self.options.url, self.options.token) as api:
            return {info.path: self._initial(info.path) for info in discover(api, self.options)}

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_bytes_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxBytes(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        with stream_server(self.options.url, self.options.token) as api:
            self._target = {info.path: info.tail for info in discover(api, self.options)}

    def latestOffset(self, start: Offsets, limit: ReadLimit) -> Offsets:
        with stream_server(self.options.url, self.options.token) as api:
            tails = {info.path: info.tail for info in discover(api, self.options)}
            if self._target is not None:
                tails = {p: min(t, self._target[p]) for p, t in tails.items() if p in self._target}
            # A stream gone from the server stays where it was read up to.
            latest = dict(start)
            budget = limit.max_bytes if isinstance(limit, ReadMaxBytes) else None
            for path in sorted(tails):
                begin = start.get(path, self._initial(path))
                end = tails[path]
                if begin == BOOTSTRAP or budget is None:
                    # A bootstrap is one response: it is read whole, whatever the limit.
                    latest[path] = format_offset(end) if end > 0 else begin
                    continue
                position = _earliest(api, path) if begin == EARLIEST else parse_offset(begin)
                if position >= end or budget <= 0:
                    continue
                if end - position > budget:
                    end = _capped(api, path, position, end, budget)
                budget -= end - position
                latest[path] = format_offset(end)
            return latest

    def partitions(self, start: Offsets, end: Offsets) -> Sequence[InputPartition]:
        slices = []
        with stream_server(self.options.url, self.options.token) as api:
            for path in sorted(end):
                begin = start.get(path, self._initial(path))
                if end[path] == begin or end[path] in (BOOTSTRAP, EARLIEST):
                    continue
                slices += plan_stream(
                    api, path, _start(begin), parse_offset(end[path]), self.options.split_bytes
                )
        return [InputPartition(piece) for piece in slices]

    def read(self, partition: InputPartition) -> Iterator[EventRow]:
        if partition.value is None:
            return  # Spark reads one empty partition when there are none
        with stream_server(self.options.url, self.options.token) as api:
            yield from read_slice(api, partition.value)

    def commit(self, end: Offsets) -> None:
        """Nothing to release: the server keeps messages until a snapshot retires them."""

    def _initial(self, path: str) -> str:
        start = self.options.start_of(path)
        return start.mode if start.mode in (BOOTSTRAP, EARLIEST) else format_offset(start.position)


def _start(token: str) -> Start:
    if token in (BOOTSTRAP, EARLIEST):
        return Start(token)
    return Start("position", parse_offset(token))


def _earliest(api: StreamServer, path: str) -> int:
    """Where a stream's retained messages begin: its snapshot's offset, or 0."""
    info = api.head(path)
    return 0 if info is None or info.snapshot_offset is None else info.snapshot_offset


def _capped(api: StreamServer, path: str, position: int, end: int, budget: int) -> int:
    """The last message boundary at most ``budget`` past ``position`` (at least one read)."""
    reached = position
    while reached < end:
        # ``end`` is a tail the server reported, so a boundary too.
        boundary = min(api.next_boundary(path, reached), end)
        if boundary <= reached:
            break
        if boundary - position > budget:
            return reached if reached > position else boundary
        reached = boundary
    return reached
