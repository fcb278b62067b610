"""Two stores on one Postgres schema behave as one: what each replica of a cluster relies on.

Each test starts two postgres-backed stores (two replicas, minus the
HTTP) on the same schema and checks that a change through one is what the
other serves next: reads, producer state, closure, deletes, listings, and
the wake-up of a reader waiting on the other.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from ds_server.protocol.offsets import Sentinel
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    CreateRequest,
    ForkSpec,
    ProducerClaim,
)
from ds_server.stores.errors import SequenceGap, StreamClosed, StreamGone, StreamNotFound
from support.postgres_stores import replica_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.stores._log_store import LogStore
    from ds_stack.postgres import EmbeddedPostgres

TEXT = "text/plain"


@pytest.fixture
async def pair(postgres: EmbeddedPostgres) -> AsyncIterator[tuple[LogStore, LogStore]]:
    async with replica_pair(postgres.url(), f"t_{uuid.uuid4().hex}") as stores:
        yield stores


def append(path: str, data: bytes, **kw: object) -> AppendRequest:
    return AppendRequest(path=path, content_type=TEXT, messages=(data,), **kw)  # type: ignore[arg-type]


async def read_text(store: LogStore, path: str) -> bytes:
    result = await store.read(path, Sentinel.BEGINNING, 1 << 20)
    return b"".join(result.chunks)


async def test_an_append_through_one_is_read_through_the_other(
    pair: tuple[LogStore, LogStore],
) -> None:
    a, b = pair
    await a.create(CreateRequest(path="s", content_type=TEXT))
    assert await read_text(b, "s") == b""
    for i in range(5):
        writer, reader = (a, b) if i % 2 == 0 else (b, a)
        result = await writer.append(append("s", f"{i};".encode()))
        assert result.outcome is AppendOutcome.APPENDED
        # Read-your-writes on the other replica, with no wait.
        assert (await reader.head("s")).tail == result.tail
    assert await read_text(a, "s") == await read_text(b, "s") == b"0;1;2;3;4;"


async def test_producers_stay_exactly_once_across_replicas(
    pair: tuple[LogStore, LogStore],
) -> None:
    a, b = pair
    await a.create(CreateRequest(path="p", content_type=TEXT))
    for seq in range(3):
        store = a if seq % 2 == 0 else b
        claim = ProducerClaim(producer_id="w", epoch=0, seq=seq)
        assert (await store.append(append("p", b"x", producer=claim))).outcome is (
            AppendOutcome.APPENDED
        )
    # The retry of seq 1 lands on the replica that did not take it, whose
    # cache last saw seq 1: a duplicate, echoing the newest accepted seq (2).
    retry = await b.append(append("p", b"x", producer=ProducerClaim("w", 0, 1)))
    assert retry.outcome is AppendOutcome.DUPLICATE
    assert retry.producer_seq == 2
    # A gap is judged on the stored state too: seq 3 is next, wherever it lands.
    assert (await b.append(append("p", b"x", producer=ProducerClaim("w", 0, 3)))).outcome is (
        AppendOutcome.APPENDED
    )
    with pytest.raises(SequenceGap):
        await a.append(append("p", b"x", producer=ProducerClaim("w", 0, 5)))
    assert await read_text(a, "p") == b"xxxx"


async def test_close_and_delete_reach_the_other(
    pair: tuple[LogStore, LogStore],
) -> None:
    a, b = pair
    await a.create(CreateRequest(path="c", content_type=TEXT))
    await b.head("c")  # cached on b
    await a.append(AppendRequest(path="c", content_type=None, messages=(), close=True))
    with pytest.raises(StreamClosed):
        await b.append(append("c", b"late"))
    await b.delete("c")
    with pytest.raises(StreamNotFound):
        await a.head("c")


async def test_deleting_a_fork_elsewhere_finishes_its_soft_deleted_source(
    pair: tuple[LogStore, LogStore],
) -> None:
    a, b = pair
    await a.create(CreateRequest(path="src", content_type=TEXT, messages=(b"data",)))
    await b.create(
        CreateRequest(path="fork", content_type=None, fork=ForkSpec(source="src", offset=None))
    )
    await a.delete("src")  # the fork (made on b) still reads it: soft-deleted
    with pytest.raises(StreamGone):
        await b.head("src")
    await b.delete("fork")
    with pytest.raises(StreamNotFound):
        await a.head("src")


async def test_a_waiting_reader_wakes_for_an_append_through_the_other(
    pair: tuple[LogStore, LogStore],
) -> None:
    a, b = pair
    await a.create(CreateRequest(path="live", content_type=TEXT))
    change = b.live.next_change("live")
    await a.append(append("live", b"hello"))
    assert await b.live.wait(change, 10.0), "b's reader was never woken"
    assert await read_text(b, "live") == b"hello"


async def test_listings_and_buckets_see_the_others_changes(
    pair: tuple[LogStore, LogStore],
) -> None:
    a, b = pair
    await a.create_bucket("room")
    assert (await b.get_bucket("room")).stream_count == 0
    await b.create(CreateRequest(path="room/one", content_type=TEXT))
    await b.create(CreateRequest(path="room/two", content_type=TEXT))
    listing = await a.list_bucket_streams("room", prefix="", after=None, limit=10)
    assert [s.stream_id for s in listing.streams] == ["one", "two"]
