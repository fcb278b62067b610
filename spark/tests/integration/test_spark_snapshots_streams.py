"""Snapshots folded on Spark and published to a real ds-server, incrementally."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import httpx
import msgspec
from ds_spark.snapshots.job import outcome_counts, publish
from ds_spark.snapshots.source import StreamSource, read_up_to
from ds_spark.snapshots.states import encode_state, to_states
from durable_sessions.protocol.offsets import parse_offset
from generator import generate
from reference import replay
from spark_support import append_batch, create_stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _bootstrap_state(url: str) -> tuple[str, dict[str, object]]:
    """The offset and state of a stream's latest snapshot, read with ds-server's bootstrap."""
    response = httpx.get(f"{url}/bootstrap")
    assert response.status_code == 200
    snapshot_part = response.content.split(b"\r\n\r\n", 1)[1].split(b"\r\n--", 1)[0]
    document = msgspec.json.decode(snapshot_part)
    assert document["offset"] == response.headers["Stream-Snapshot-Offset"]
    return document["offset"], document["state"]


def test_publish_incrementally_then_verify_against_full_replay(
    spark: SparkSession, server_url: str, bucket: str
) -> None:
    sessions = {name: m for name, m in generate(seed=5, sessions=6).items() if len(m) > 4}
    # The default patterns name session-events, which this server does not have.
    source = StreamSource(server_url, None, f"no-such-stream,{bucket}/*")
    halfway: dict[str, int] = {}
    for name, messages in sessions.items():
        url = f"{server_url}/ds/{bucket}/{name}"
        create_stream(url)
        halfway[f"{bucket}/{name}"] = parse_offset(
            append_batch(url, messages[: len(messages) // 2])
        )

    # As if ds-sync had committed every stream up to halfway.
    first = outcome_counts(publish(spark, source, halfway))

    assert first == {"published": len(sessions)}
    tails = {}
    for name, messages in sessions.items():
        url = f"{server_url}/ds/{bucket}/{name}"
        offset, state = _bootstrap_state(url)
        assert parse_offset(offset) == halfway[f"{bucket}/{name}"]
        assert state == replay(messages[: len(messages) // 2])
        assert httpx.get(url, params={"offset": "-1"}).status_code == 410
        tails[f"{bucket}/{name}"] = parse_offset(append_batch(url, messages[len(messages) // 2 :]))

    # The second run folds only what came after the first snapshot.
    second = publish(spark, source, tails).cache()
    assert outcome_counts(second) == {"published": len(sessions)}
    for name, messages in sessions.items():
        assert _bootstrap_state(f"{server_url}/ds/{bucket}/{name}")[1] == replay(messages)
    assert outcome_counts(publish(spark, source, tails)) == {"unchanged": len(sessions)}

    # Bootstrap + the messages after it, folded by Spark, equals the full replay.
    more = {name: [{"type": "t", "key": name, "operation": "set", "value": 1}] for name in sessions}
    for name, extra in more.items():
        tails[f"{bucket}/{name}"] = parse_offset(
            append_batch(f"{server_url}/ds/{bucket}/{name}", extra)
        )
    folded = read_up_to(spark, source, tails).transform(to_states).collect()
    assert {row.stream: row.state for row in folded} == {
        f"{bucket}/{name}": encode_state(replay(messages + more[name]))
        for name, messages in sessions.items()
    }
    assert all(row.folded == 1 for row in folded)


def test_a_top_level_stream_gets_its_snapshot_too(spark: SparkSession, server_url: str) -> None:
    # session-events, the heartbeat's stream, is top-level: its snapshots and bootstrap are
    # served below its /v1/stream path, and are what bound it.
    name = f"top-{uuid.uuid4().hex[:10]}"
    url = f"{server_url}/v1/stream/{name}"
    messages = next(iter(generate(seed=7, sessions=1).values()))
    create_stream(url)
    tail = parse_offset(append_batch(url, messages))
    source = StreamSource(server_url, None, name)
    assert outcome_counts(publish(spark, source, {name: tail})) == {"published": 1}
    offset, state = _bootstrap_state(url)
    assert (parse_offset(offset), state) == (tail, replay(messages))
    assert httpx.get(url, params={"offset": "-1"}).status_code == 410
