"""A Structured Streaming query over ``durable_streams`` into Parquet, run as its own process.

The kill test starts it and SIGKILLs it mid-batch, then restarts the query
on the same checkpoint. Usage: streaming_query.py URL STREAMS OUT
CHECKPOINT MODE, MODE being ``continuous`` (small batches, a trigger every
200 ms, until killed) or ``available-now`` (everything there is now, then exit).
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from ds_spark.spark_session import build_session


def main(url: str, streams: str, out: str, checkpoint: str, mode: str) -> None:
    spark = build_session(
        "local[2]",
        "ds-spark-kill-test",
        ui=False,
        progress=False,
        conf={"spark.sql.shuffle.partitions": "2"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    reader = (
        spark.readStream.format("durable_streams")
        .option("url", url)
        .option("streams", streams)
        .option("startingOffsets", "earliest")
    )
    if mode == "continuous":
        # Small batches, so that there are many to be killed in the middle of.
        reader = reader.option("maxBytesPerTrigger", "2000")
    events = reader.load()
    writer = (
        events.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
    )
    if mode == "available-now":
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        writer.trigger(processingTime="200 milliseconds").start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:6])
