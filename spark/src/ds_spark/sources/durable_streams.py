"""``spark.read.format("durable_streams")``: session streams of a ds-server, read over HTTP.

Options: ``url`` (default ``http://127.0.0.1:4437``), ``streams`` (comma-
separated globs: stream paths or ``{bucket}/*``), ``token`` (a bearer
token, for a server behind the gateway) or ``tokenFile`` (a file holding
it, read again when it changes: ``ds_spark.tokens``), ``startingOffsets`` (``bootstrap``:
the snapshot and every message after it, the default; ``earliest``: the
retained messages only; ``-1`` or a 20-digit offset; or a JSON object of
stream -> any of these), ``endingOffsets`` (``latest``, or a JSON object of
stream -> offset), ``onlyEndingStreams`` (``true``: read only the streams that
``endingOffsets`` names), ``splitBytes`` (a stream with more to read is split into
partitions of about this size) and, for streaming, ``maxBytesPerTrigger``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSourceReader, InputPartition

from ds_spark.server import stream_server
from ds_spark.sources.event_source import EventDataSource
from ds_spark.sources.options import parse_options
from ds_spark.sources.plan import discover, plan_slices
from ds_spark.sources.rows import read_slice

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from pyspark.sql.datasource import DataSourceStreamReader
    from pyspark.sql.types import StructType

    from ds_spark.sources.options import SourceOptions
    from ds_spark.sources.rows import EventRow

SOURCE_NAME = "durable_streams"


class DurableStreamsDataSource(EventDataSource):
    """Batch and streaming reads of JSON session streams, normalised per sessions.md §2."""

    source_name = SOURCE_NAME

    def reader(self, schema: StructType) -> DataSourceReader:
        return DurableStreamsReader(parse_options(self.options))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        # Imported here: the batch reader does not need the streaming machinery.
        from ds_spark.sources.streaming import DurableStreamsStreamReader

        return DurableStreamsStreamReader(parse_options(self.options))


class DurableStreamsReader(DataSourceReader):
    """One partition per stream, or per offset range of a large stream."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        with stream_server(self.options.url, self.options.token) as api:
            streams = discover(api, self.options)
            return [InputPartition(piece) for piece in plan_slices(api, streams, self.options)]

    def read(self, partition: InputPartition) -> Iterator[EventRow]:
        if partition.value is None:
            return  # Spark reads one empty partition when there are none
        with stream_server(self.options.url, self.options.token) as api:
            yield from read_slice(api, partition.value)
