"""The batch ``durable_streams`` source against a real ds-server."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx
import msgspec
import pytest
from ds_spark.errors import one_line
from pyspark.errors import PySparkException
from spark_support import append, append_batch, create_stream

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _read(spark: SparkSession, server_url: str, streams: str, **options: str) -> DataFrame:
    return (
        spark.read.format("durable_streams")
        .option("url", server_url)
        .option("streams", streams)
        .options(**options)
        .load()
    )


def _rows(frame: DataFrame) -> list[tuple[object, ...]]:
    ordered = frame.orderBy("stream", "offset", "event_index")
    return [tuple(row) for row in ordered.collect()]


def test_reads_both_shapes_normalised(spark: SparkSession, server_url: str, bucket: str) -> None:
    url = f"{server_url}/ds/{bucket}/room-1"
    create_stream(url)
    state_change = {
        "type": "message",
        "key": "msg:1",
        "value": {"role": "user", "text": "hi"},
        "headers": {"operation": "insert", "timestamp": "2026-11-26T10:00:00.125Z"},
    }
    flat = {
        "type": "presence",
        "key": "user:alice",
        "operation": "set",
        "value": {"status": "online"},
        "timestamp": "2026-11-26T11:00:00+01:00",
    }
    append(url, state_change, flat, 42, {"type": "chunk"}, {"headers": {"control": "reset"}})

    rows = _rows(_read(spark, server_url, f"{bucket}/*"))

    path = f"{bucket}/room-1"
    assert [row[:3] for row in rows] == [
        (path, "00000000000000000000", 0),
        (path, "00000000000000000000", 1),
        (path, "00000000000000000000", 2),
        (path, "00000000000000000000", 3),
        (path, "00000000000000000000", 4),
    ]
    assert rows[0][3:7] == (
        "message",
        "msg:1",
        "insert",
        datetime(2026, 11, 26, 10, 0, 0, 125000, tzinfo=UTC).replace(tzinfo=None),
    )
    assert rows[1][3:7] == ("presence", "user:alice", "set", datetime(2026, 11, 26, 10, 0))
    assert rows[2][3:] == (None, None, None, None, "42")
    assert rows[3][3:7] == (None, None, None, None)
    assert msgspec.json.decode(rows[0][7]) == state_change


def test_empty_bucket_gives_no_rows(spark: SparkSession, server_url: str, bucket: str) -> None:
    assert _read(spark, server_url, f"{bucket}/*").count() == 0


def test_large_stream_splits_by_offset_range(
    spark: SparkSession, server_url: str, bucket: str
) -> None:
    url = f"{server_url}/ds/{bucket}/big"
    create_stream(url)
    # Several server reads' worth (a read returns about 1 MiB).
    filler = "x" * 1000
    for batch in range(6):
        append_batch(
            url,
            [{"type": "t", "key": f"k{batch}-{i}", "value": filler} for i in range(1000)],
        )

    frame = _read(spark, server_url, f"{bucket}/big", splitBytes=str(1024 * 1024))

    assert frame.rdd.getNumPartitions() > 2
    keys = [row.key for row in frame.orderBy("offset", "event_index").collect()]
    assert keys == [f"k{batch}-{i}" for batch in range(6) for i in range(1000)]


def test_from_bootstrap_reads_snapshot_then_retained(
    spark: SparkSession, server_url: str, bucket: str
) -> None:
    url = f"{server_url}/ds/{bucket}/snapped"
    create_stream(url)
    cut = append(url, {"type": "t", "key": "a"}, {"type": "t", "key": "b"})
    append(url, {"type": "t", "key": "c"})
    snapshot = b'{"format": "ds-session-state/1", "state": {}}'
    put = httpx.put(
        f"{url}/snapshot/{cut}", content=snapshot, headers={"Content-Type": "application/json"}
    )
    assert put.status_code == 204

    bootstrapped = _rows(_read(spark, server_url, f"{bucket}/snapped"))
    earliest = _rows(_read(spark, server_url, f"{bucket}/snapped", startingOffsets="earliest"))

    path = f"{bucket}/snapped"
    assert bootstrapped == [
        (path, cut, -1, None, None, None, None, snapshot.decode()),
        (path, cut, 0, "t", "c", None, None, '{"type":"t","key":"c"}'),
    ]
    assert earliest == bootstrapped[1:]


def test_from_an_offset_and_up_to_an_ending_offset(
    spark: SparkSession, server_url: str, bucket: str
) -> None:
    url = f"{server_url}/ds/{bucket}/ranged"
    create_stream(url)
    first = append(url, {"type": "t", "key": "a"})
    second = append(url, {"type": "t", "key": "b"})
    append(url, {"type": "t", "key": "c"})
    path = f"{bucket}/ranged"

    frame = _read(
        spark,
        server_url,
        path,
        startingOffsets=first,
        endingOffsets=msgspec.json.encode({path: second}).decode(),
    )

    assert [row.key for row in frame.collect()] == ["b"]


def test_non_json_stream_is_a_clear_error(
    spark: SparkSession, server_url: str, bucket: str
) -> None:
    create_stream(f"{server_url}/ds/{bucket}/text", content_type="text/plain")

    with pytest.raises(PySparkException) as caught:
        _read(spark, server_url, f"{bucket}/*").count()

    assert one_line(caught.value) == (
        f"stream {bucket}/text holds text/plain data, not JSON session events; "
        "narrow the stream patterns to leave it out"
    )


def test_unreachable_server_is_a_clear_error(spark: SparkSession) -> None:
    with pytest.raises(PySparkException) as caught:
        _read(spark, "http://127.0.0.1:9", "sessions/*").count()

    assert one_line(caught.value) == (
        "ds-server at http://127.0.0.1:9 is unreachable (ConnectError)"
    )


def test_offset_before_retention_is_a_clear_error(
    spark: SparkSession, server_url: str, bucket: str
) -> None:
    url = f"{server_url}/ds/{bucket}/gone"
    create_stream(url)
    cut = append(url, {"type": "t", "key": "a"})
    assert httpx.put(f"{url}/snapshot/{cut}", content=b"{}").status_code == 204

    with pytest.raises(PySparkException) as caught:
        _read(spark, server_url, f"{bucket}/gone", startingOffsets="-1").count()

    message = one_line(caught.value)
    assert message is not None
    assert message.startswith(f"stream {bucket}/gone: offset before the earliest retained one")
