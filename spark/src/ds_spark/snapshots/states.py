"""Folding many sessions at once on Spark: each stream's rows in order, one state per stream.

Rows are shuffled by stream and sorted into stream order within each
partition, then folded by a Python function that keeps one session's state
at a time, so an executor's memory holds a state, never a whole partition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import pyarrow as pa
from pyspark.sql import functions as F

from ds_spark.snapshots.fold import State, apply_raw, state_of_snapshot
from ds_spark.sources.rows import SNAPSHOT_INDEX

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import DataFrame

STATES_SCHEMA = "stream string, base string, state string, folded long"
"""``base``: the offset of the snapshot the fold started from (null: the beginning);
``state``: the state as JSON with sorted keys, so equal states are equal strings;
``folded``: how many messages were folded onto the base."""
_OUTPUT = pa.schema(
    [("stream", pa.string()), ("base", pa.string()), ("state", pa.string()), ("folded", pa.int64())]
)


def to_states(events: DataFrame) -> DataFrame:
    """One row per stream of ``events`` (reader schema): its state after its last row."""
    return (
        events.select("stream", "offset", "event_index", "payload")
        .repartition("stream")
        .sortWithinPartitions("stream", "offset", "event_index")
        .mapInArrow(_fold_batches, STATES_SCHEMA)
    )


def with_matching_states(left: DataFrame, right: DataFrame) -> DataFrame:
    """``stream, matches``: whether two states frames agree on each stream of either."""
    joined = left.select("stream", F.col("state").alias("l")).join(
        right.select("stream", F.col("state").alias("r")), "stream", "full_outer"
    )
    return joined.select(
        "stream", F.coalesce(F.col("l") == F.col("r"), F.lit(False)).alias("matches")
    )


def encode_state(state: State) -> str:
    """A state as canonical JSON (keys sorted)."""
    return msgspec.json.encode(state, order="sorted").decode()


def _fold_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    out: dict[str, list[object]] = {"stream": [], "base": [], "state": [], "folded": []}
    current: str | None = None
    base: str | None = None
    state: State = {}
    folded = 0

    def emit() -> None:
        out["stream"].append(current)
        out["base"].append(base)
        out["state"].append(encode_state(state))
        out["folded"].append(folded)

    for batch in batches:
        columns = batch.to_pydict()
        for stream, offset, index, payload in zip(
            columns["stream"],
            columns["offset"],
            columns["event_index"],
            columns["payload"],
            strict=True,
        ):
            if stream != current:
                if current is not None:
                    emit()
                current, base, state, folded = stream, None, {}, 0
            if index == SNAPSHOT_INDEX:
                base, state, folded = offset, state_of_snapshot(stream, payload), 0
            else:
                apply_raw(state, payload)
                folded += 1
        if len(out["stream"]) >= 1024:
            yield pa.RecordBatch.from_pydict(out, schema=_OUTPUT)
            out = {name: [] for name in out}
    if current is not None:
        emit()
    if out["stream"]:
        yield pa.RecordBatch.from_pydict(out, schema=_OUTPUT)
