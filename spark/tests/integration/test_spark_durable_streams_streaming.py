"""The streaming ``durable_streams`` source: Spark offsets are stream offsets."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest
from pyspark.errors import StreamingQueryException
from spark_support import append, append_batch, create_stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Starts of a query whose Python worker missed Spark's connect-back timeout.
WORKER_START_ATTEMPTS = 3
QUERY_SCRIPT = Path(__file__).resolve().parents[1] / "streaming_query.py"


def _run_available_now(
    spark: SparkSession,
    server_url: str,
    streams: str,
    out: Path,
    checkpoint: Path,
    start: str = "bootstrap",
) -> None:
    events = (
        spark.readStream.format("durable_streams")
        .option("url", server_url)
        .option("streams", streams)
        .option("startingOffsets", start)
        .load()
    )
    for attempt in range(1, WORKER_START_ATTEMPTS + 1):
        query = (
            events.writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination()
            return
        except StreamingQueryException as failed:
            # Spark gives a Python streaming source's worker a fixed 10 s to
            # connect back (PythonWorkerFactory.createSimpleWorker); a loaded
            # 2-core run can miss it. The query then failed before reading,
            # and a restart resumes from its checkpoint, as any would.
            if "failed to connect back" not in str(failed) or attempt == WORKER_START_ATTEMPTS:
                raise


def test_restarted_query_reads_only_what_is_new(
    spark: SparkSession, server_url: str, bucket: str, tmp_path: Path
) -> None:
    for name in ("a", "b"):
        create_stream(f"{server_url}/ds/{bucket}/{name}")
        append(
            f"{server_url}/ds/{bucket}/{name}", {"type": "t", "key": f"{name}1", "operation": "set"}
        )
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    _run_available_now(spark, server_url, f"{bucket}/*", out, checkpoint)
    assert sorted(row.key for row in spark.read.parquet(str(out)).collect()) == ["a1", "b1"]

    append(f"{server_url}/ds/{bucket}/a", {"type": "t", "key": "a2", "operation": "set"})
    create_stream(f"{server_url}/ds/{bucket}/c")  # a stream that appears later
    append(f"{server_url}/ds/{bucket}/c", {"type": "t", "key": "c1", "operation": "set"})
    _run_available_now(spark, server_url, f"{bucket}/*", out, checkpoint)

    keys = sorted(row.key for row in spark.read.parquet(str(out)).collect())
    assert keys == ["a1", "a2", "b1", "c1"]


def _produce(
    server_url: str, bucket: str, streams: list[str], total: int, done: threading.Event
) -> None:
    """Unique ids 0..total-1 spread over the streams, a few per append, in id order per stream."""
    rng = random.Random(3)
    next_id = 0
    while next_id < total:
        stream = rng.choice(streams)
        count = min(rng.randint(1, 5), total - next_id)
        batch = [
            {"type": "t", "key": f"id:{i}", "operation": "set", "value": {"id": i}}
            for i in range(next_id, next_id + count)
        ]
        append_batch(f"{server_url}/ds/{bucket}/{stream}", batch)
        next_id += count
        time.sleep(0.01)
    done.set()


def _id(payload: str) -> int:
    value: int = msgspec.json.decode(payload)["value"]["id"]
    return value


def _batch_in_flight(checkpoint: Path) -> bool:
    """A batch is planned (its offsets logged) but not committed yet."""
    offsets = {p.name for p in (checkpoint / "offsets").glob("[0-9]*")}
    commits = {p.name for p in (checkpoint / "commits").glob("[0-9]*")}
    return len(commits) >= 2 and bool(offsets - commits)


# Separate JVMs start here: slow on a busy 2-core machine.
@pytest.mark.timeout(900)
def test_sigkill_mid_batch_then_restart_skips_and_repeats_nothing(
    spark: SparkSession, server_url: str, bucket: str, tmp_path: Path
) -> None:
    streams = ["s0", "s1", "s2", "s3"]
    for name in streams:
        create_stream(f"{server_url}/ds/{bucket}/{name}")
    total = 600
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    args = [sys.executable, str(QUERY_SCRIPT), server_url, f"{bucket}/*", str(out), str(checkpoint)]
    done = threading.Event()
    producer = threading.Thread(target=_produce, args=(server_url, bucket, streams, total, done))
    producer.start()
    log = (tmp_path / "query.log").open("wb")
    query = subprocess.Popen([*args, "continuous"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while not _batch_in_flight(checkpoint):
            assert query.poll() is None, "the streaming query exited on its own"
            assert time.monotonic() < deadline, (tmp_path / "query.log").read_text()[-3000:]
            time.sleep(0.02)
        query.kill()
        query.wait()
        killed_at = sorted(int(p.name) for p in (checkpoint / "offsets").glob("[0-9]*"))[-1]
    finally:
        if query.poll() is None:
            query.kill()
            query.wait()
        producer.join()
        log.close()
    assert done.is_set()
    assert not (checkpoint / "commits" / str(killed_at)).exists()

    # The restart: this process's Spark, the killed query's checkpoint.
    _run_available_now(spark, server_url, f"{bucket}/*", out, checkpoint, start="earliest")

    rows = (
        spark.read.parquet(str(out)).select("stream", "offset", "event_index", "payload").collect()
    )
    ids = [_id(row.payload) for row in rows]
    lost = set(range(total)) - set(ids)
    duplicated = len(ids) - len(set(ids))
    print(
        f"kill test: {total} appended, {len(set(ids))} read, {len(lost)} lost, "
        f"{duplicated} duplicated; killed during batch {killed_at}"
    )
    assert (len(lost), duplicated) == (0, 0)
    for stream in streams:
        in_order = sorted(
            (r for r in rows if r.stream == f"{bucket}/{stream}"),
            key=lambda r: (r.offset, r.event_index),
        )
        stream_ids = [_id(r.payload) for r in in_order]
        assert stream_ids == sorted(stream_ids)
