"""Where a snapshot job reads the streams: the server, a token, the globs, and each stream's
bootstrap (its latest snapshot and the messages after it) cut at an offset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec
from durable_sessions.protocol.offsets import format_offset

from ds_spark.tokens import token_options

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession

    from ds_spark.tokens import Token


@dataclass(frozen=True, slots=True)
class StreamSource:
    """Where the streams are: the server, a bearer token, the stream globs."""

    url: str
    token: Token | None
    patterns: str


def read_up_to(spark: SparkSession, source: StreamSource, ends: Mapping[str, int]) -> DataFrame:
    """Each stream named in ``ends``: its bootstrap, cut at its end."""
    reader = (
        spark.read.format("durable_streams")
        .option("url", source.url)
        .option("streams", source.patterns)
        .option("startingOffsets", "bootstrap")
        .option(
            "endingOffsets",
            msgspec.json.encode({path: format_offset(end) for path, end in ends.items()}).decode(),
        )
        .option("onlyEndingStreams", "true")
    )
    return reader.options(**token_options(source.token)).load()
