"""Publishing folded states as snapshots, from the executors: ``PUT {stream}/snapshot/{offset}``."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import pyarrow as pa
from durable_sessions.protocol.offsets import parse_offset

from ds_spark.server import stream_server
from ds_spark.snapshots.fold import SNAPSHOT_FORMAT

if TYPE_CHECKING:
    from collections.abc import Iterator

    from durable_sessions.server import StreamServer
    from pyspark.sql import DataFrame

    from ds_spark.tokens import Token

OUTCOMES_SCHEMA = "stream string, offset string, outcome string"
PUBLISHED = "published"
UNCHANGED = "unchanged"
AHEAD = "snapshot ahead of checkpoint"
NO_BUCKET = "in no bucket (nor top-level): it can't have a snapshot"
_OUTPUT = pa.schema([("stream", pa.string()), ("offset", pa.string()), ("outcome", pa.string())])


def publish_states(states: DataFrame, ends: DataFrame, url: str, token: Token | None) -> DataFrame:
    """``stream, offset, outcome`` for each stream of ``states`` that has an end in ``ends``.

    ``ends`` (``stream, end``) says where each stream's fold stopped: the
    snapshot is published there. A stream whose snapshot is already at (or,
    published by someone else, beyond) its end is left as it is.
    """
    return states.join(ends, "stream").mapInArrow(
        partial(_publish_batches, url, token), OUTCOMES_SCHEMA
    )


def _publish_batches(
    url: str, token: Token | None, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    with stream_server(url, token) as api:
        for batch in batches:
            columns = batch.to_pydict()
            outcomes = [
                _publish_one(api, stream, base, state, end)
                for stream, base, state, end in zip(
                    columns["stream"],
                    columns["base"],
                    columns["state"],
                    columns["end"],
                    strict=True,
                )
            ]
            yield pa.RecordBatch.from_pydict(
                {
                    "stream": columns["stream"],
                    "offset": columns["end"],
                    "outcome": outcomes,
                },
                schema=_OUTPUT,
            )


def _publish_one(api: StreamServer, stream: str, base: str | None, state: str, end: str) -> str:
    position = parse_offset(end)
    if base is not None and parse_offset(base) >= position:
        return UNCHANGED if parse_offset(base) == position else AHEAD
    if position == 0:
        return UNCHANGED
    if api.extension_url(stream) is None:
        return NO_BUCKET
    # The state is canonical JSON already; the document around it is written as text.
    document = f'{{"format":"{SNAPSHOT_FORMAT}","offset":"{end}","state":{state}}}'.encode()
    status = api.put_snapshot(stream, position, document)
    if status == 204:
        return PUBLISHED
    return f"refused: HTTP {status}"
