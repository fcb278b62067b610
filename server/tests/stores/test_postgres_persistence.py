"""What the postgres backend adds to the store contract: exact restore, fencing, the change feed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_server.postgres_database import PostgresDatabase
from ds_server.protocol.offsets import Sentinel
from ds_server.stores._commit import AppendCommit
from ds_server.stores._postgres import PostgresPersistence
from ds_server.stores._postgres.schema import PIECE_BYTES
from ds_server.stores.base import (
    AppendRequest,
    CreateRequest,
    Expiry,
    ForkSpec,
    ProducerClaim,
    SnapshotInfo,
)
from ds_server.stores.errors import StaleStream
from support.postgres_stores import new_state, started_postgres

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.stores._log_store import LogStore
    from ds_server.stores.persistence import StreamChange
    from ds_stack.postgres import EmbeddedPostgres

BYTES = "application/octet-stream"
JSON = "application/json"
BIG = 64 * 1024 * 1024


@pytest.fixture
def url(postgres: EmbeddedPostgres) -> str:
    return postgres.url()


@pytest.fixture
def schema() -> str:
    """A schema of the test's own, in the session's database."""
    return f"t_{uuid.uuid4().hex}"


async def started(url: str, schema: str) -> LogStore:
    return await started_postgres(url, schema, max_retained_bytes=BIG)


@pytest.fixture
async def pair(url: str, schema: str) -> AsyncIterator[tuple[PostgresPersistence, ...]]:
    """Two processes' persistences on one schema."""
    a = PostgresPersistence(PostgresDatabase(url, schema=schema))
    b = PostgresPersistence(PostgresDatabase(url, schema=schema))
    await a.open()
    await b.open()
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


def commit(stream_id: str, start: int, data: bytes, version: int) -> AppendCommit:
    return AppendCommit(stream_id, start, (data,), len(data), None, "", None, False, 2.0, version)


@contextlib.asynccontextmanager
async def one_batch(persistence: PostgresPersistence) -> AsyncIterator[None]:
    """What is queued in the block is committed in one transaction: the writer is held meanwhile."""
    started, release = threading.Event(), threading.Event()

    def hold(_: object) -> None:
        started.set()
        release.wait(10)

    held = persistence._writer.submit(hold)
    await asyncio.to_thread(started.wait, 10)
    try:
        yield
    finally:
        release.set()
        await held


async def content(store: LogStore, path: str) -> bytes:
    result = await store.read(path, Sentinel.BEGINNING, BIG)
    assert result.up_to_date
    return b"".join(result.chunks)


async def append(store: LogStore, path: str, *messages: bytes, **kwargs: object) -> None:
    await store.append(
        AppendRequest(
            path=path,
            content_type=kwargs.pop("content_type", BYTES) if messages else None,  # type: ignore[arg-type]
            messages=messages,
            **kwargs,  # type: ignore[arg-type]
        )
    )


# -- restart -----------------------------------------------------------------


async def test_restart_restores_every_state_exactly(url: str, schema: str) -> None:
    store = await started(url, schema)
    await store.create_bucket("bkt1")
    await store.create(CreateRequest(path="src", content_type=BYTES, messages=(b"ab",)))
    await append(store, "src", b"cd", producer=ProducerClaim("p", 1, 0), stream_seq="0001")
    await store.create(
        CreateRequest(path="json", content_type=JSON, expiry=Expiry(ttl_seconds=3600))
    )
    await append(store, "json", b"1", b'{"a":2}', content_type=JSON)
    await append(store, "json", close=True, producer=ProducerClaim("q", 0, 0))
    await store.create(
        CreateRequest(path="fork", content_type=None, fork=ForkSpec("src", offset=0, sub_offset=2))
    )
    await store.create(
        CreateRequest(path="snap", content_type=BYTES, expiry=Expiry(expires_at=4e9))
    )
    await append(store, "snap", b"abc")
    await append(store, "snap", b"def")
    await store.publish_snapshot("snap", 3, JSON, b'{"upto":3}')
    await store.delete("src")  # the fork holds it: a soft delete
    before = {path: replace(entry.state) for path, entry in store._entries.items()}
    assert before["src"].soft_deleted
    assert before["json"].closed_by == ProducerClaim("q", 0, 0)
    assert before["snap"].snapshot is not None
    assert before["snap"].version == 2
    await store.stop()

    store = await started(url, schema)
    try:
        after = {path: entry.state for path, entry in store._entries.items()}
        for path, state in after.items():
            # Reads touch last_access; only a sliding TTL needs it stored (as sqlite does).
            if state.expiry.ttl_seconds is None:
                state.last_access = before[path].last_access
        assert after == before
        assert (await store.get_bucket("bkt1")).bucket_id == "bkt1"
        assert await content(store, "fork") == b"ab"
        assert await store.read_snapshot("snap", 3) == (before["snap"].snapshot, b'{"upto":3}')
    finally:
        await store.stop()


async def test_large_appends_read_back_in_any_window(url: str, schema: str) -> None:
    store = await started(url, schema)
    try:
        data = os.urandom(3 * PIECE_BYTES + 7)
        await store.create(CreateRequest(path="s", content_type=BYTES, messages=(data[:10],)))
        await append(store, "s", data[10:])
        assert await content(store, "s") == data
        for start, size in ((0, 1), (5, PIECE_BYTES), (PIECE_BYTES - 1, 2), (100_000, 70_000)):
            result = await store.read("s", start, size)
            assert b"".join(result.chunks) == data[start : start + size]
        # A whole read keeps the multi-piece append whole, however small the page.
        assert (await store.read_messages("s", 10, 1)).chunks == [data[10:]]
    finally:
        await store.stop()


async def test_concurrent_appends_share_transactions(url: str, schema: str) -> None:
    store = await started(url, schema)
    try:
        paths = [f"s{i}" for i in range(8)]
        for path in paths:
            await store.create(CreateRequest(path=path, content_type=BYTES))
        stats = store.persistence.stats
        transactions = stats.transactions
        count = 400
        await asyncio.gather(
            *(
                append(store, paths[i % 8], b"%05d" % i, producer=ProducerClaim("p", 0, i // 8))
                for i in range(count)
            )
        )
        assert stats.transactions - transactions < count // 2
        for index, path in enumerate(paths):
            expected = b"".join(b"%05d" % i for i in range(index, count, 8))
            assert await content(store, path) == expected
    finally:
        await store.stop()


# -- fencing -----------------------------------------------------------------


async def test_a_write_decided_on_a_stale_version_fails_and_others_commit(
    pair: tuple[PostgresPersistence, PostgresPersistence],
) -> None:
    a, b = pair
    await a.create(new_state("x1", "x"), [])
    await a.create(new_state("y1", "y"), [])
    await (await a.append(commit("x1", 0, b"aa", 1)))
    # b still believes x is at version 0: its write to x and the one decided on
    # top of it fail, its write to y, in the same transaction, commits.
    transactions = b.stats.transactions
    async with one_batch(b):
        stale = await b.append(commit("x1", 0, b"bb", 1))
        fine = await b.append(commit("y1", 0, b"cc", 1))
        chained = await b.append(commit("x1", 2, b"dd", 2))
    results = await asyncio.gather(stale, fine, chained, return_exceptions=True)
    assert isinstance(results[0], StaleStream)
    assert results[1] is None
    assert isinstance(results[2], StaleStream)
    assert b.stats.transactions == transactions + 2  # the one that held the writer, and theirs
    # A write decided later on top of the failed ones fails too...
    with pytest.raises(StaleStream):
        await (await b.append(commit("x1", 4, b"ee", 3)))
    # ...until b decides again on the stored state.
    state = await b.load_stream("x")
    assert state is not None
    assert (state.version, state.tail) == (1, 2)
    await (await b.append(commit("x1", 2, b"ff", 2)))
    assert [c.data for c in await a.read("x1", 0, 100, 100, whole=True)] == [b"aa", b"ff"]
    assert [c.data for c in await a.read("y1", 0, 100, 100, whole=True)] == [b"cc"]
    assert await a.stream_version("x1") == 2


async def test_soft_delete_is_fenced_on_the_version(
    pair: tuple[PostgresPersistence, PostgresPersistence],
) -> None:
    a, b = pair
    state = new_state("x1", "x")
    await a.create(state, [])
    await (await a.append(commit("x1", 0, b"aa", 1)))
    stale = replace(state, soft_deleted=True, version=1)
    with pytest.raises(StaleStream):
        await b.save_state(stale)
    await b.save_state(replace(state, soft_deleted=True, version=2))
    loaded = await a.load_stream("x")
    assert loaded is not None
    assert (loaded.soft_deleted, loaded.version) == (True, 2)


async def test_one_path_never_gets_two_streams(
    pair: tuple[PostgresPersistence, PostgresPersistence],
) -> None:
    a, b = pair
    await a.create(new_state("first", "p"), [b"a"])
    await b.create(new_state("other", "o"), [])
    # The refused create shares its transaction with an append that goes through.
    async with one_batch(b):
        create = asyncio.ensure_future(b.create(new_state("second", "p"), [b"b"]))
        await asyncio.sleep(0)
        append = await b.append(commit("other", 0, b"x", 1))
    with pytest.raises(StaleStream):
        await create
    await append
    assert [c.data for c in await a.read("other", 0, 10, 10, whole=True)] == [b"x"]
    loaded = await b.load_stream("p")
    assert loaded is not None
    assert loaded.stream_id == "first"
    assert await b.stream_version("second") is None


# -- change feed ---------------------------------------------------------------


class Changes:
    """What a listener was told, in order."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[StreamChange | None] = asyncio.Queue()

    def __call__(self, change: StreamChange | None) -> None:
        self.queue.put_nowait(change)

    async def next(self) -> StreamChange | None:
        return await asyncio.wait_for(self.queue.get(), timeout=10)


async def test_every_committed_change_is_announced_in_commit_order(
    pair: tuple[PostgresPersistence, PostgresPersistence],
) -> None:
    a, b = pair
    changes = Changes()
    await b.listen(changes)
    state = replace(new_state("x1", "x"), tail=2)
    await a.create(state, [b"ab"])
    async with one_batch(a):  # one transaction: one announcement, with its last version
        first = await a.append(commit("x1", 2, b"c", 1))
        second = await a.append(commit("x1", 3, b"d", 2))
    await asyncio.gather(first, second)
    await (await b.append(commit("x1", 4, b"e", 3)))
    snapshot = SnapshotInfo(offset=2, content_type=JSON, size=2, created_at=3.0)
    await a.save_snapshot(replace(state, snapshot=snapshot, earliest_offset=2), b"{}")
    await a.save_bucket("bkt1", 4.0)
    await a.save_state(replace(state, soft_deleted=True, version=4))
    await a.drop_bucket("bkt1")
    await a.purge(replace(state, version=4))
    seen = [await changes.next() for _ in range(8)]
    assert [(c.kind, c.version, c.tail, c.origin == a.origin) if c else None for c in seen] == [
        ("create", 0, 2, True),
        ("append", 2, 4, True),
        ("append", 3, 5, False),
        ("snapshot", 3, 5, True),
        ("bucket", 0, 0, True),
        ("state", 4, 2, True),
        ("bucket", 0, 0, True),
        ("purge", 4, 2, True),
    ]
    assert all(c is not None and c.stream_id in ("x1", "bkt1") for c in seen)
    assert [c.closed for c in seen if c and c.kind == "bucket"] == [False, True]


async def test_the_listener_reconnects_and_says_it_may_have_missed_changes(
    pair: tuple[PostgresPersistence, PostgresPersistence], url: str, schema: str
) -> None:
    a, b = pair
    changes = Changes()
    await b.listen(changes)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
        cursor = await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE query = %s AND pid <> pg_backend_pid()",
            (f'LISTEN "{schema}_changes"',),
        )
        assert await cursor.fetchall() == [(True,)]
    assert await changes.next() is None
    await a.create(new_state("x1", "x"), [])
    change = await changes.next()
    assert change is not None
    assert (change.kind, change.stream_id, change.path) == ("create", "x1", "x")


# -- lost connections ------------------------------------------------------------


async def test_writes_and_reads_go_on_after_the_connections_are_lost(postgres_db: str) -> None:
    # A database of its own: only this test's connections are cut, never another's.
    a = PostgresPersistence(PostgresDatabase(postgres_db, schema="lost"))
    b = PostgresPersistence(PostgresDatabase(postgres_db, schema="lost"))
    await a.open()
    await b.open()
    try:
        await a.create(replace(new_state("x1", "x"), tail=2), [b"ab"])
        async with await psycopg.AsyncConnection.connect(postgres_db, autocommit=True) as admin:
            cursor = await admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name LIKE 'ds-server:%' AND pid <> pg_backend_pid()"
                " AND datname = current_database()"
            )
            # Each persistence's writer and pooled read connection.
            assert await cursor.fetchone() == (4,)
        # Neither write nor read ran when the connections went: both are run again.
        await (await a.append(commit("x1", 2, b"cd", 1)))
        assert [c.data for c in await a.read("x1", 0, 100, 100, whole=True)] == [b"ab", b"cd"]
    finally:
        await a.close()
        await b.close()
