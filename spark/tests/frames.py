"""Tiny event frames for the transform tests, in the reader schema."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec
from ds_spark.schema import EVENT_SCHEMA

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

T0 = datetime(2026, 11, 26, 10, 0, 0)


def at(seconds: float) -> datetime:
    """T0 plus ``seconds`` (naive UTC, as Spark returns timestamps in a UTC session)."""
    return T0 + timedelta(seconds=seconds)


def event(
    stream: str,
    position: int,
    type_: str | None,
    key: str | None,
    operation: str | None,
    time: datetime | None = None,
    value: Any = None,
) -> tuple[Any, ...]:
    """One row; ``position`` orders events within the stream (one read per event)."""
    payload: dict[str, Any] = {}
    if type_ is not None:
        payload["type"] = type_
    if key is not None:
        payload["key"] = key
    if value is not None:
        payload["value"] = value
    return (
        stream,
        str(position).zfill(20),
        0,
        type_,
        key,
        operation,
        time,
        msgspec.json.encode(payload).decode(),
    )


def frame(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    return spark.createDataFrame(rows, EVENT_SCHEMA)
