"""Extensions 2.2 (retention effect, concurrency) and 3.4: what a snapshot does to the stream."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TYPE_CHECKING

import httpx
import pytest
from ext_helpers import (
    DURABLE_BACKENDS,
    JSON_TYPE,
    OCTET,
    Bucket,
    disk_usage,
    offset,
    parse_bootstrap,
    server_env,
    sse_events,
    up_to_date,
    wait_for,
)
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ext_helpers import Backend

MARKER = b"SNAPSHOT-BYTES-MUST-NOT-LEAK"


def _stream_with_snapshot(bucket: Bucket) -> tuple[list[str], str]:
    """A JSON stream of five messages with a snapshot after the third."""
    bucket.create_stream("s", content_type=JSON_TYPE)
    offsets = bucket.append_json("s", *({"n": n} for n in range(5)))
    assert bucket.publish("s", offsets[2], MARKER, OCTET).status_code == 204
    return offsets, offsets[2]


def test_reads_before_the_snapshot_offset_are_410(bucket: Bucket) -> None:
    offsets, snapshot = _stream_with_snapshot(bucket)
    for before in ["-1", offset(0), offsets[0], offsets[1], offset(int(snapshot) - 1)]:
        assert bucket.read("s", before).status_code == 410, before
        assert bucket.read("s", before, live="long-poll").status_code == 410, before
        assert bucket.read("s", before, live="sse").status_code == 410, before
    # The base surface names the same stream and applies the same retention.
    base = bucket.http.get(f"/v1/stream/{bucket.id}/s", params={"offset": "-1"})
    assert base.status_code == 410


def test_reads_from_the_snapshot_offset_on_are_unchanged(bucket: Bucket) -> None:
    offsets, snapshot = _stream_with_snapshot(bucket)
    assert bucket.read_json("s", snapshot) == ([{"n": 3}, {"n": 4}], offsets[-1])
    assert bucket.read_json("s", offsets[3]) == ([{"n": 4}], offsets[-1])
    now = bucket.read("s", "now")
    assert now.status_code == 200
    assert now.headers["Stream-Next-Offset"] == offsets[-1]


def test_ordinary_reads_never_return_snapshot_bytes(bucket: Bucket) -> None:
    offsets, snapshot = _stream_with_snapshot(bucket)
    catch_up = bucket.read("s", snapshot)
    assert MARKER not in catch_up.content
    assert catch_up.json() == [{"n": 3}, {"n": 4}]
    _, events = sse_events(bucket.http, bucket.path("s"), snapshot, until=up_to_date)
    assert all(MARKER.decode() not in event.data for event in events)
    data = [event.data for event in events if event.event == "data"]
    assert data == ['[{"n": 3},{"n": 4}]']
    bucket.append_json("s", {"n": 5})
    long_poll = bucket.read("s", offsets[-1], live="long-poll")
    assert long_poll.json() == [{"n": 5}]
    assert MARKER not in long_poll.content


def test_the_snapshot_offset_is_the_new_earliest_offset(bucket: Bucket) -> None:
    offsets, snapshot = _stream_with_snapshot(bucket)
    # Bootstrap offers a snapshot covering exactly what reads now refuse.
    response = bucket.bootstrap("s")
    assert response.headers["Stream-Snapshot-Offset"] == snapshot
    parts = parse_bootstrap(response)
    assert parts[0].body == MARKER
    assert [part.body for part in parts[1:]] == [b'{"n": 3}', b'{"n": 4}']
    # A later snapshot moves it again.
    assert bucket.publish("s", offsets[3], b"later").status_code == 204
    assert bucket.read("s", snapshot).status_code == 410
    assert bucket.bootstrap("s").headers["Stream-Snapshot-Offset"] == offsets[3]


def test_publishing_never_folds_data_at_or_after_the_offset(bucket: Bucket) -> None:
    bucket.create_stream("b", content_type=OCTET)
    appends = [os.urandom(100 + n) for n in range(10)]
    offsets = [bucket.append("b", data) for data in appends]
    assert bucket.publish("b", offsets[4], b"folded 0..4").status_code == 204
    data, tail = bucket.read_all("b", offsets[4])
    assert data == b"".join(appends[5:])
    assert tail == offsets[-1]
    parts = parse_bootstrap(bucket.bootstrap("b"))
    assert [part.body for part in parts[1:]] == appends[5:]


async def _appends_racing_a_publish(url: str, bucket: Bucket, count: int) -> list[int]:
    async with httpx.AsyncClient(base_url=url, timeout=60.0) as client:
        tail = (await client.head(bucket.path("s"))).headers["Stream-Next-Offset"]

        async def append(n: int) -> int:
            response = await client.post(
                bucket.path("s"), content=b"m%04d" % n, headers={"Content-Type": OCTET}
            )
            return response.status_code

        async def publish() -> int:
            response = await client.put(
                bucket.snapshot_path("s", tail), content=os.urandom(4 * 1024 * 1024)
            )
            return response.status_code

        results = await asyncio.gather(publish(), *(append(n) for n in range(count)))
    return list(results)


def test_appends_concurrent_with_a_publish_all_succeed(server: Backend, bucket: Bucket) -> None:
    bucket.create_stream("s", body=b"before")
    count = 50
    statuses = asyncio.run(_appends_racing_a_publish(server.url, bucket, count))
    assert statuses[0] == 204
    assert statuses[1:] == [204] * count
    data, tail = bucket.read_all("s", offset(6))
    assert int(tail) == 6 + 5 * count
    assert sorted(data[i : i + 5] for i in range(0, len(data), 5)) == [
        b"m%04d" % n for n in range(count)
    ]


async def _append_during_upload(url: str, bucket: Bucket) -> tuple[bool, int]:
    appended = asyncio.Event()

    async def slow_body() -> AsyncIterator[bytes]:
        yield b"first half of the snapshot;"
        # The upload stays open until an append has been acknowledged (or 10 s pass).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(appended.wait(), 10)
        yield b"second half"

    async with httpx.AsyncClient(base_url=url, timeout=60.0) as client:
        publish = asyncio.create_task(
            client.put(bucket.snapshot_path("s", offset(3)), content=slow_body())
        )
        await asyncio.sleep(0.2)
        response = await client.post(
            bucket.path("s"), content=b"during", headers={"Content-Type": OCTET}
        )
        finished_first = response.status_code == 204 and not publish.done()
        appended.set()
        return finished_first, (await publish).status_code


def test_a_publish_in_progress_does_not_block_appends(server: Backend, bucket: Bucket) -> None:
    bucket.create_stream("s", body=b"abc")
    appended_first, publish_status = asyncio.run(_append_during_upload(server.url, bucket))
    assert appended_first
    assert publish_status == 204
    assert bucket.read_all("s", offset(3)) == (b"during", offset(9))


# -- space ------------------------------------------------------------------------


def _settled_usage(root: Path) -> int:
    """Disk usage once it has stopped changing (pending checkpoints and flushes done)."""
    readings = [disk_usage(root)]

    def stable() -> bool:
        readings.append(disk_usage(root))
        return readings[-1] == readings[-2]

    wait_for(stable, timeout=10, interval=0.5)
    return readings[-1]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", DURABLE_BACKENDS)
def test_a_snapshot_frees_the_space_before_it(tmp_path: Path, backend: str) -> None:
    # A server of its own: the data directory then holds only what this test wrote.
    with (
        ServerProcess(env=server_env(backend, tmp_path)) as process,
        httpx.Client(base_url=process.url, timeout=60.0) as http,
    ):
        bucket = Bucket.create(http)
        bucket.create_stream("big")
        bucket.create_stream("neighbour")
        size, count = 40 * 1024, 100
        offsets = [bucket.append("big", os.urandom(size)) for _ in range(count)]
        # Data stored after the stream's: the freed space is not at the end of any file.
        for _ in range(count):
            bucket.append("neighbour", os.urandom(size))
        before = _settled_usage(tmp_path)
        # Keep the last 10 %.
        assert bucket.publish("big", offsets[89], b"folded").status_code == 204
        freed = 90 * size

        def shrunk() -> bool:
            return before - disk_usage(tmp_path) >= freed // 2

        assert wait_for(shrunk, timeout=60, interval=0.5), (
            f"{backend}: data dir {before} -> {disk_usage(tmp_path)} bytes "
            f"after a snapshot freed {freed}"
        )
        assert bucket.read_all("big", offsets[89])[1] == offsets[-1]


# -- persistence -------------------------------------------------------------------


@pytest.mark.parametrize("how", ["stop", "kill"])
@pytest.mark.parametrize("backend", DURABLE_BACKENDS)
def test_buckets_snapshots_and_retention_survive_a_restart(
    tmp_path: Path, backend: str, how: str
) -> None:
    process = ServerProcess(env=server_env(backend, tmp_path))
    process.start()
    try:
        with httpx.Client(base_url=process.url, timeout=30.0) as http:
            bucket = Bucket.create(http)
            Bucket.create(http)  # an empty bucket must survive too
            bucket.create_stream("s", content_type=JSON_TYPE)
            offsets = bucket.append_json("s", {"n": 0}, {"n": 1}, {"n": 2})
            assert bucket.publish("s", offsets[1], b"state", "application/x-s").status_code == 204
            buckets_before = http.get(f"/ds/{bucket.id}").json()
        if how == "kill":
            process.kill()
        else:
            process.stop()
        process.start()
        with httpx.Client(base_url=process.url, timeout=30.0) as http:
            bucket = Bucket(http, bucket.id)
            assert http.get(f"/ds/{bucket.id}").json() == buckets_before
            assert http.put(f"/ds/{bucket.id}").status_code == 409
            head = http.head(bucket.path("s"))
            assert head.headers["Stream-Snapshot-Offset"] == offsets[1]
            snapshot = http.get(bucket.snapshot_path("s", offsets[1]))
            assert (snapshot.status_code, snapshot.content) == (200, b"state")
            assert snapshot.headers["Content-Type"] == "application/x-s"
            assert bucket.read("s", "-1").status_code == 410
            assert bucket.read_json("s", offsets[1]) == ([{"n": 2}], offsets[2])
            parts = parse_bootstrap(bucket.bootstrap("s"))
            assert [part.body for part in parts] == [b"state", b'{"n": 2}']
    finally:
        process.stop()
