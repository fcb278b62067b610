"""Bucket quotas across replicas: two stores on one Postgres schema share one set of totals.

Each store's totals are a cache; the stored ones decide, in the write's own
transaction. A replica that counted on stale totals is refused by the stored
ones and decides again, so the bucket is never over its quota, whichever
replicas its writers reach.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_server.stores._log_store import LogStore
from ds_server.stores._quotas import Quota, QuotaPolicy
from ds_server.stores.base import AppendRequest, CreateRequest, ForkSpec
from ds_server.stores.errors import QuotaExceeded
from support.postgres_stores import replica_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_stack.postgres import EmbeddedPostgres

BYTES = "application/octet-stream"
QUOTA = Quota(max_bytes=1000, max_streams=8)
Pair = tuple[LogStore, LogStore]

# What every bucket's stored totals must equal: the sums over the stored rows.
_SUMS = """
    SELECT split_part(s.path, '/', 1), sum(s.tail - s.earliest_offset + coalesce(n.size, 0)),
        count(*)
    FROM streams s LEFT JOIN snapshots n ON n.stream_id = s.stream_id
    WHERE left(s.path, 2) <> '__' GROUP BY 1
"""


@pytest.fixture
def schema() -> str:
    return f"t_{uuid.uuid4().hex}"


@pytest.fixture
async def pair(postgres: EmbeddedPostgres, schema: str) -> AsyncIterator[Pair]:
    async with replica_pair(postgres.url(), schema, quotas=QuotaPolicy(QUOTA)) as stores:
        yield stores


async def stored_totals(url: str, schema: str) -> tuple[dict[str, tuple[int, int]], ...]:
    """The stored totals, and the sums over the stored rows they must equal."""
    async with await psycopg.AsyncConnection.connect(
        url, options=f"-c search_path={schema}"
    ) as conn:
        totals = await (
            await conn.execute("SELECT bucket, bytes, streams FROM bucket_usage")
        ).fetchall()
        sums = await (await conn.execute(_SUMS)).fetchall()
    # Rows stay once made: a bucket whose streams are all gone is at zero.
    kept = {bucket: (int(size), int(n)) for bucket, size, n in totals if size or n}
    return kept, {bucket: (int(size), int(n)) for bucket, size, n in sums}


async def create(store: LogStore, path: str, data: bytes = b"") -> None:
    await store.create(
        CreateRequest(path=path, content_type=BYTES, messages=(data,) if data else ())
    )


async def append(store: LogStore, path: str, data: bytes) -> int:
    request = AppendRequest(path=path, content_type=BYTES, messages=(data,))
    return (await store.append(request)).tail


async def test_a_replica_counting_on_stale_totals_is_refused_by_the_stored_ones(
    pair: Pair,
) -> None:
    a, b = pair
    await create(a, "chat/a")
    await create(b, "chat/b")
    await a.head("chat/b")
    await b.head("chat/a")
    await append(a, "chat/a", b"x" * 900)
    # b's totals still say 0 bytes: the stored ones refuse, b reloads, and answers.
    with pytest.raises(QuotaExceeded, match="900 of 1000 bytes used, this write needs 200"):
        await append(b, "chat/b", b"y" * 200)
    assert b.persistence.stats.over_quota == 1, "the stored totals never refused"
    assert (await b.head("chat/b")).tail == 0
    assert await append(b, "chat/b", b"y" * 100) == 100
    with pytest.raises(QuotaExceeded):
        await append(a, "chat/a", b"!")


async def test_a_delete_through_one_frees_room_for_the_other(pair: Pair) -> None:
    a, b = pair
    await create(a, "chat/a", b"x" * 1000)
    await create(b, "chat/b")
    with pytest.raises(QuotaExceeded):
        await append(b, "chat/b", b"y")
    await a.delete("chat/a")
    # b's own totals still say full: it checks the stored ones before refusing.
    assert await append(b, "chat/b", b"y" * 1000) == 1000
    await a.create_bucket("chat")
    info = await a.get_bucket("chat")  # the stored totals, not a's cache of them
    assert (info.used_bytes, info.used_streams) == (1000, 1)


async def test_the_stream_quota_holds_across_replicas(pair: Pair) -> None:
    a, b = pair
    for i in range(QUOTA.max_streams or 0):
        await create(a if i % 2 else b, f"chat/s{i}")
    for store in pair:
        with pytest.raises(QuotaExceeded, match="stream quota of 8"):
            await create(store, "chat/more")


async def test_replicas_racing_for_the_last_room_never_pass_the_quota(
    pair: Pair, postgres: EmbeddedPostgres, schema: str
) -> None:
    streams = [f"chat/s{i}" for i in range(6)]
    for i, path in enumerate(streams):
        await create(pair[i % 2], path)

    async def attempt(i: int) -> bool:
        # Writers reach either replica, on any stream: the stored totals are the judge.
        store = pair[i % 2]
        try:
            await append(store, streams[(i // 2) % len(streams)], bytes([i]) * 70)
        except QuotaExceeded:
            return False
        return True

    accepted = sum(await asyncio.gather(*(attempt(i) for i in range(80))))
    # Each replica's own totals let it take all 14: the stored ones refused the excess.
    assert pair[0].persistence.stats.over_quota + pair[1].persistence.stats.over_quota > 0
    tails = [(await pair[0].head(path)).tail for path in streams]
    assert sum(tails) == accepted * 70 <= 1000
    # The last room is taken: no refusal came while 70 more bytes still fitted.
    assert accepted == 14
    totals, sums = await stored_totals(postgres.url(), schema)
    assert totals == sums == {"chat": (980, 6)}


async def test_stored_totals_equal_the_stored_sums_after_every_kind_of_write(
    pair: Pair, postgres: EmbeddedPostgres, schema: str
) -> None:
    a, b = pair
    await create(a, "chat/a", b"a" * 300)
    await create(b, "team/b", b"b" * 50)
    await b.create(
        CreateRequest(path="chat/fork", content_type=None, fork=ForkSpec("chat/a", None))
    )
    await append(b, "chat/a", b"x" * 100)
    await a.publish_snapshot("chat/a", 400, BYTES, b"s" * 7)
    await create(a, "__ds/internal", b"i" * 5000)
    await b.delete("chat/a")  # soft: the fork still reads it
    await append(a, "chat/fork", b"f" * 10)
    await create(b, "solo", b"z" * 20)
    totals, sums = await stored_totals(postgres.url(), schema)
    assert totals == sums
    assert totals == {"chat": (7 + 300 + 10, 2), "team": (50, 1), "solo": (20, 1)}
    await a.delete("chat/fork")
    totals, sums = await stored_totals(postgres.url(), schema)
    assert totals == sums == {"team": (50, 1), "solo": (20, 1)}
