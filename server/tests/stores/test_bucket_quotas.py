"""Per-bucket storage quotas, on every backend: the totals, the refusals, and what frees room."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import pytest
from ds_server.protocol.offsets import Sentinel
from ds_server.settings import BucketQuota, LimitsSection, QuotasSection
from ds_server.stores._quotas import bucket_of, stored_bytes
from ds_server.stores.base import AppendRequest, CreateRequest, Expiry, ForkSpec
from ds_server.stores.errors import PayloadTooLarge, QuotaExceeded, StreamNotFound
from support.backends import (
    BACKENDS,
    DURABLE_BACKENDS,
    backend_settings,
    backend_storage,
    started_store,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from ds_server.settings import Settings
    from ds_server.stores._log_store import LogStore
    from ds_server.stores.base import Store

BYTES = "application/octet-stream"
QUOTA_BYTES = 1000
QUOTA_STREAMS = 5
# A bucket with a quota of its own, and one with none at all.
ROOMY, UNBOUNDED = "roomy", "open"


def quota_settings(mode: str, data_dir: Path, postgres_url: str | None) -> Settings:
    quotas = QuotasSection(
        max_bytes=QUOTA_BYTES,
        max_streams=QUOTA_STREAMS,
        buckets={
            ROOMY: BucketQuota(max_bytes=2 * QUOTA_BYTES),
            UNBOUNDED: BucketQuota(max_bytes=0, max_streams=0),
        },
    )
    limits = LimitsSection(max_retained_bytes=4096, max_snapshot_bytes=4096)
    return backend_settings(
        backend_storage(mode, data_dir, postgres_url), limits=limits, quotas=quotas
    )


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., object]:
    """Opens the same store (same directory or schema) each call, quotas set."""
    url = request.getfixturevalue("postgres").url() if request.param == "postgres" else None
    settings = quota_settings(request.param, tmp_path / "data", url)
    return lambda: started_store(settings)


@pytest.fixture
async def store(
    open_store: Callable[[], AbstractAsyncContextManager[Store]],
) -> AsyncIterator[Store]:
    async with open_store() as opened:
        yield opened


async def create(store: Store, path: str, data: bytes = b"", fork: ForkSpec | None = None) -> None:
    messages = (data,) if data else ()
    await store.create(
        CreateRequest(
            path=path, content_type=BYTES if fork is None else None, messages=messages, fork=fork
        )
    )


async def append(store: Store, path: str, data: bytes) -> int:
    result = await store.append(AppendRequest(path=path, content_type=BYTES, messages=(data,)))
    return result.tail


async def used(store: Store, bucket: str) -> tuple[int, int]:
    """The bucket's totals as its metadata shows them (it exists: made on /ds)."""
    with contextlib.suppress(Exception):
        await store.create_bucket(bucket)
    info = await store.get_bucket(bucket)
    return info.used_bytes, info.used_streams


async def assert_totals_are_the_sums(store: Store) -> None:
    """Every bucket's totals are what its stored streams add up to."""
    engine: LogStore = store  # type: ignore[assignment]
    sums: dict[str, tuple[int, int]] = {}
    for entry in list(engine.entries()):
        bucket = bucket_of(entry.state.path)
        if bucket is not None:
            size, streams = sums.get(bucket, (0, 0))
            sums[bucket] = (size + stored_bytes(entry.state), streams + 1)
    for bucket, expected in sums.items():
        assert await used(store, bucket) == expected, bucket


# -- bytes ------------------------------------------------------------------------


async def test_appends_fill_the_bucket_to_its_quota_and_no_further(store: Store) -> None:
    await create(store, "chat/a", b"x" * 300)
    await create(store, "chat/b")
    assert await append(store, "chat/b", b"y" * 600) == 600
    with pytest.raises(QuotaExceeded, match="bucket 'chat' is at its storage quota: 900 of 1000"):
        await append(store, "chat/a", b"z" * 101)
    # Nothing of the refused write was stored; what fits still goes in.
    assert (await store.head("chat/a")).tail == 300
    assert await append(store, "chat/a", b"z" * 100) == 400
    with pytest.raises(QuotaExceeded):
        await append(store, "chat/b", b"!")
    assert await used(store, "chat") == (1000, 2)
    # Other buckets have quotas of their own.
    await create(store, "other/a", b"o" * 1000)
    await create(store, f"{ROOMY}/a", b"r" * 2000)
    await create(store, f"{UNBOUNDED}/a", b"u" * 4000)
    assert await used(store, ROOMY) == (2000, 1)
    await assert_totals_are_the_sums(store)


async def test_a_write_larger_than_the_whole_quota_is_413(store: Store) -> None:
    await create(store, "chat/a")
    with pytest.raises(PayloadTooLarge, match="whole storage quota of 1000 bytes"):
        await append(store, "chat/a", b"x" * (QUOTA_BYTES + 1))
    with pytest.raises(PayloadTooLarge):
        await create(store, "chat/b", b"x" * (QUOTA_BYTES + 1))
    assert await used(store, "chat") == (0, 1)


async def test_every_surface_and_no_bucket_creation_count_server_streams_none(store: Store) -> None:
    # /v1/stream/chat/... and a stream named just "chat2" count in their first segment.
    await create(store, "chat/x/deep", b"a" * 700)
    with pytest.raises(QuotaExceeded):
        await create(store, "chat/other", b"b" * 301)
    await create(store, "solo", b"s" * 1000)
    with pytest.raises(QuotaExceeded):
        await append(store, "solo", b"!")
    # Server streams count against no bucket.
    await create(store, "__ds/wakes/w", b"w" * 3000)
    await append(store, "__ds/wakes/w", b"w" * 1000)
    assert await used(store, "chat") == (700, 1)


async def test_the_stream_quota_counts_streams(store: Store) -> None:
    for i in range(QUOTA_STREAMS):
        await create(store, f"chat/s{i}")
    with pytest.raises(QuotaExceeded, match="stream quota of 5 streams"):
        await create(store, "chat/one-more")
    with pytest.raises(StreamNotFound):
        await store.head("chat/one-more")
    # An idempotent re-create is no new stream; a delete makes room.
    await create(store, "chat/s0")
    await store.delete("chat/s0")
    await create(store, "chat/one-more")
    assert await used(store, "chat") == (0, QUOTA_STREAMS)
    for i in range(QUOTA_STREAMS + 3):
        await create(store, f"{UNBOUNDED}/s{i}")


# -- what frees room ---------------------------------------------------------------


async def test_a_snapshot_frees_what_it_drops_and_counts_its_blob(store: Store) -> None:
    await create(store, "chat/a", b"x" * 900)
    with pytest.raises(QuotaExceeded):
        await append(store, "chat/a", b"y" * 200)
    await store.publish_snapshot("chat/a", 900, "application/json", b"{}" * 25)
    assert await used(store, "chat") == (50, 1)
    assert await append(store, "chat/a", b"y" * 950) == 1850
    # A snapshot that would store more than it drops needs room for the difference.
    with pytest.raises(QuotaExceeded):
        await store.publish_snapshot("chat/a", 1850, "application/json", b"s" * 1001)
    assert (await store.head("chat/a")).earliest_offset == 900
    await store.publish_snapshot("chat/a", 1850, "application/json", b"s" * 990)
    assert await used(store, "chat") == (990, 1)
    await assert_totals_are_the_sums(store)


async def test_a_delete_frees_room_and_a_fork_counts_what_it_reads(store: Store) -> None:
    await create(store, "chat/src", b"x" * 400)
    # A fork reads its source's 400 bytes: it counts them, as the per-stream limit does.
    await create(store, "chat/fork", fork=ForkSpec("chat/src", None))
    assert await used(store, "chat") == (800, 2)
    with pytest.raises(QuotaExceeded):
        await create(store, "chat/fork2", fork=ForkSpec("chat/src", None))
    # The source is deleted, but its fork still reads it: its bytes stay stored and counted.
    await store.delete("chat/src")
    assert await used(store, "chat") == (800, 2)
    await store.delete("chat/fork")  # the last fork: both go
    assert await used(store, "chat") == (0, 0)
    await create(store, "chat/big", b"b" * 1000)
    await assert_totals_are_the_sums(store)


async def test_expiry_frees_room(store: Store) -> None:
    await store.create(
        CreateRequest(
            path="chat/t", content_type=BYTES, messages=(b"x" * 1000,), expiry=Expiry(ttl_seconds=1)
        )
    )
    store.clock = lambda: 4_000_000_000.0
    await store.sweep()  # type: ignore[attr-defined]
    await create(store, "chat/u", b"y" * 1000)
    assert await used(store, "chat") == (1000, 1)


# -- racing writers and restarts ----------------------------------------------------


async def test_writers_racing_for_the_last_room_never_pass_the_quota(store: Store) -> None:
    streams = [f"chat/s{i}" for i in range(QUOTA_STREAMS)]
    for path in streams:
        await create(store, path)

    async def attempt(i: int) -> bool:
        try:
            await append(store, streams[i % len(streams)], bytes([i]) * 70)
        except QuotaExceeded:
            return False
        return True

    accepted = sum(await asyncio.gather(*(attempt(i) for i in range(60))))
    tails = [(await store.head(path)).tail for path in streams]
    # 14 appends of 70 bytes fit in 1000, and every one that fits is taken.
    assert accepted == 14
    assert sum(tails) == 14 * 70
    assert await used(store, "chat") == (980, QUOTA_STREAMS)
    await assert_totals_are_the_sums(store)


@pytest.fixture(params=DURABLE_BACKENDS)
def open_durable(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., object]:
    url = request.getfixturevalue("postgres").url() if request.param == "postgres" else None
    settings = quota_settings(request.param, tmp_path / "data", url)
    return lambda: started_store(settings)


async def test_totals_survive_a_restart(
    open_durable: Callable[[], AbstractAsyncContextManager[Store]],
) -> None:
    async with open_durable() as store:
        await create(store, "chat/a", b"x" * 300)
        await create(store, "chat/b", b"y" * 100)
        await create(store, "chat/f", fork=ForkSpec("chat/a", None))
        await store.publish_snapshot("chat/a", 300, BYTES, b"s" * 10)
        await store.delete("chat/b")
        before = await used(store, "chat")
    assert before == (10 + 300, 2)
    async with open_durable() as store:
        assert await used(store, "chat") == before
        with pytest.raises(QuotaExceeded):
            await append(store, "chat/f", b"z" * 691)
        await append(store, "chat/f", b"z" * 690)
        await assert_totals_are_the_sums(store)


async def test_data_stored_without_quotas_is_counted_when_they_are_set(tmp_path: Path) -> None:
    """The durable backends keep no totals of their own: they are counted when a store opens."""
    for mode in ("sqlite", "file-durable"):
        storage = backend_storage(mode, tmp_path / mode, None)
        async with started_store(backend_settings(storage)) as store:
            await create(store, "chat/a", b"x" * 1500)
            await create(store, "chat/b", b"y" * 10)
        async with started_store(quota_settings(mode, tmp_path / mode, None)) as store:
            # Over the quota now: appends wait for room, reads go on.
            assert await used(store, "chat") == (1510, 2)
            with pytest.raises(QuotaExceeded):
                await append(store, "chat/b", b"!")
            result = await store.read("chat/a", Sentinel.BEGINNING, 1 << 20)
            assert b"".join(result.chunks) == b"x" * 1500
            await store.delete("chat/a")
            await append(store, "chat/b", b"!")
