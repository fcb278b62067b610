"""What the sqlite backend adds to the store contract: durability, space reclaim, full disks."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest
from ds_server.live import LiveNotifier
from ds_server.protocol.offsets import Sentinel
from ds_server.settings import Settings, StorageSection
from ds_server.stores._log_store import LogStore
from ds_server.stores._sqlite import SqlitePersistence
from ds_server.stores._sqlite.schema import PIECE_BYTES
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    AppendResult,
    CreateRequest,
    Expiry,
    ForkSpec,
    ProducerClaim,
)
from ds_server.stores.errors import (
    BucketNotFound,
    InvalidOffset,
    OffsetGone,
    ProducerFenced,
    SequenceConflict,
    SnapshotNotFound,
    StorageFull,
    StreamClosed,
    StreamGone,
    StreamNotFound,
)
from ds_server.stores.persistence import Chunk
from ds_server.stores.registry import open_store

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

BYTES = "application/octet-stream"
JSON = "application/json"
BIG = 64 * 1024 * 1024


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sqlite" / "streams.db"


async def started(path: Path, *, max_db_bytes: int = 0) -> LogStore:
    live = LiveNotifier()
    live.bind(asyncio.get_running_loop())
    backend = SqlitePersistence(path, max_db_bytes=max_db_bytes)
    store = LogStore(live, backend, max_retained_bytes=BIG)
    await store.start()
    return store


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[LogStore]:
    backend = await started(db_path)
    try:
        yield backend
    finally:
        await backend.stop()


async def append(
    store: LogStore,
    path: str,
    *messages: bytes,
    content_type: str = BYTES,
    close: bool = False,
    seq: str | None = None,
    producer: tuple[str, int, int] | None = None,
) -> AppendResult:
    return await store.append(
        AppendRequest(
            path=path,
            content_type=content_type if messages else None,
            messages=messages,
            close=close,
            stream_seq=seq,
            producer=ProducerClaim(*producer) if producer else None,
        )
    )


async def content(store: LogStore, path: str) -> bytes:
    result = await store.read(path, Sentinel.BEGINNING, BIG)
    assert result.up_to_date
    return b"".join(result.chunks)


async def content_from(store: LogStore, path: str, offset: int) -> bytes:
    result = await store.read(path, offset, BIG)
    assert result.up_to_date
    return b"".join(result.chunks)


def query(path: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    """Look at the database from a connection of our own (WAL lets us, while the store runs)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def file_size(path: Path) -> int:
    return path.stat().st_size


# -- layout ------------------------------------------------------------------


async def test_database_lives_under_the_data_dir_in_wal_mode(tmp_path: Path) -> None:
    settings = Settings(storage=StorageSection(mode="sqlite", data_dir=tmp_path / "data"))
    store = open_store(settings, LiveNotifier())
    await store.start()
    await store.stop()
    path = tmp_path / "data" / "sqlite" / "streams.db"
    assert query(path, "PRAGMA journal_mode") == [("wal",)]
    assert query(path, "PRAGMA auto_vacuum") == [(2,)]  # incremental


# -- restart -----------------------------------------------------------------


async def test_restart_recovers_every_stream_and_its_state(db_path: Path) -> None:
    store = await started(db_path)
    await store.create(CreateRequest(path="bytes", content_type=BYTES, messages=(b"ab",)))
    await append(store, "bytes", b"cd", producer=("p", 1, 0), seq="0001")
    await append(store, "bytes", b"ef", producer=("p", 1, 1), seq="0002")
    await store.create(
        CreateRequest(path="json", content_type=JSON, expiry=Expiry(ttl_seconds=3600))
    )
    await append(store, "json", b"1", b'{"a":2}', content_type=JSON)
    await append(store, "json", close=True, producer=("q", 0, 0))
    await store.create(
        CreateRequest(path="fixed", content_type=BYTES, expiry=Expiry(expires_at=4e9))
    )
    await store.create(
        CreateRequest(path="fork", content_type=None, fork=ForkSpec("bytes", offset=4))
    )
    await append(store, "fork", b"XY")
    await store.delete("bytes")  # the fork holds it: a soft delete
    before = {path: await store.head(path) for path in ("json", "fixed", "fork")}
    assert before["fork"].last_write_at > before["fork"].created_at
    await store.stop()

    store = await started(db_path)
    try:
        for path, info in before.items():
            assert await store.head(path) == info
        with pytest.raises(StreamGone):
            await store.head("bytes")
        assert await content(store, "fork") == b"abcdXY"
        assert (await store.read("json", Sentinel.BEGINNING, BIG)).chunks == [b"1", b'{"a":2}']
        # Closure, with the producer that closed it.
        with pytest.raises(StreamClosed):
            await append(store, "json", b"3", content_type=JSON)
        closing_retry = await append(store, "json", close=True, producer=("q", 0, 0))
        assert closing_retry.outcome is AppendOutcome.DUPLICATE
        state = store._entries["bytes"].state
        assert state.producers["p"].epoch == 1
        assert state.producers["p"].last_seq == 1
        assert state.writer_seqs == {"": "0002"}
    finally:
        await store.stop()


async def test_producer_and_stream_seq_state_survive_a_restart(db_path: Path) -> None:
    store = await started(db_path)
    await store.create(CreateRequest(path="s", content_type=BYTES))
    await append(store, "s", b"a", producer=("p", 2, 0), seq="b")
    await store.stop()

    store = await started(db_path)
    try:
        duplicate = await append(store, "s", b"a", producer=("p", 2, 0))
        assert duplicate.outcome is AppendOutcome.DUPLICATE
        with pytest.raises(ProducerFenced):
            await append(store, "s", b"z", producer=("p", 1, 0))
        with pytest.raises(SequenceConflict):
            await append(store, "s", b"z", seq="a")
        accepted = await append(store, "s", b"b", producer=("p", 2, 1))
        assert accepted.outcome is AppendOutcome.APPENDED
        assert await content(store, "s") == b"ab"
    finally:
        await store.stop()


async def test_start_finishes_a_purge_a_crash_interrupted(db_path: Path) -> None:
    store = await started(db_path)
    await store.create(CreateRequest(path="src", content_type=BYTES, messages=(b"data",)))
    await store.create(CreateRequest(path="fork", content_type=None, fork=ForkSpec("src", None)))
    await store.delete("src")
    # As if the process died after purging the fork but before purging its source.
    await store.persistence.purge(store._entries["fork"].state)
    await store.stop()

    store = await started(db_path)
    try:
        with pytest.raises(StreamNotFound):
            await store.head("src")
        assert query(db_path, "SELECT count(*) FROM streams") == [(0,)]
        assert query(db_path, "SELECT count(*) FROM chunks") == [(0,)]
    finally:
        await store.stop()


async def test_restart_restores_buckets_snapshots_and_retention(db_path: Path) -> None:
    store = await started(db_path)
    await store.create_bucket("b")
    await store.create_bucket("gone")
    await store.delete_bucket("gone")
    await store.create(CreateRequest(path="b/s", content_type=BYTES, messages=(b"abc",)))
    await append(store, "b/s", b"def")
    snapshot = await store.publish_snapshot("b/s", 6, JSON, b'{"upto":6}')
    await append(store, "b/s", b"ghi")
    await store.create(CreateRequest(path="b/f", content_type=None, fork=ForkSpec("b/s", None)))
    before = {path: await store.head(path) for path in ("b/s", "b/f")}
    bucket = await store.get_bucket("b")
    await store.stop()

    store = await started(db_path)
    try:
        assert await store.get_bucket("b") == bucket
        with pytest.raises(BucketNotFound):
            await store.get_bucket("gone")
        for path, info in before.items():
            assert await store.head(path) == info
        head = before["b/s"]
        assert (head.snapshot, head.earliest_offset) == (snapshot, 6)
        assert head.last_write_at > head.created_at
        assert before["b/f"].earliest_offset == 6
        assert await store.read_snapshot("b/s", 6) == (snapshot, b'{"upto":6}')
        for path in ("b/s", "b/f"):
            with pytest.raises(OffsetGone):
                await store.read(path, 3, BIG)
            assert b"".join((await store.read(path, 6, BIG)).chunks) == b"ghi"
    finally:
        await store.stop()


async def test_a_failed_snapshot_leaves_the_old_one_and_its_earliest_offset(
    db_path: Path,
) -> None:
    store = await started(db_path, max_db_bytes=1024 * 1024)
    try:
        await store.create(CreateRequest(path="s", content_type=BYTES, messages=(b"abc",)))
        await append(store, "s", b"def")
        old = await store.publish_snapshot("s", 3, BYTES, b"old")
        # The new earliest offset is written first; the blob then does not fit.
        with pytest.raises(StorageFull):
            await store.publish_snapshot("s", 6, BYTES, os.urandom(2 * 1024 * 1024))
        head = await store.head("s")
        assert (head.snapshot, head.earliest_offset) == (old, 3)
        assert await content_from(store, "s", 3) == b"def"
    finally:
        await store.stop()
    assert query(db_path, "SELECT earliest_offset FROM streams") == [(3,)]
    assert query(db_path, "SELECT stream_offset, data FROM snapshots") == [(3, b"old")]
    store = await started(db_path)
    try:
        head = await store.head("s")
        assert (head.snapshot, head.earliest_offset) == (old, 3)
        assert await store.read_snapshot("s", 3) == (old, b"old")
    finally:
        await store.stop()


async def test_purge_removes_the_snapshot(store: LogStore, db_path: Path) -> None:
    await store.create(CreateRequest(path="s", content_type=BYTES, messages=(b"abc",)))
    await store.publish_snapshot("s", 3, BYTES, b"snap")
    assert query(db_path, "SELECT count(*) FROM snapshots") == [(1,)]
    await store.delete("s")
    assert query(db_path, "SELECT count(*) FROM snapshots") == [(0,)]


async def test_a_replaced_snapshot_cannot_be_loaded(store: LogStore) -> None:
    await store.create(CreateRequest(path="s", content_type=BYTES, messages=(b"abc",)))
    await append(store, "s", b"def")
    await store.publish_snapshot("s", 3, BYTES, b"first")
    await store.publish_snapshot("s", 6, BYTES, b"second")
    stream_id = store._entries["s"].state.stream_id
    assert await store.persistence.load_snapshot(stream_id, 6) == b"second"
    with pytest.raises(SnapshotNotFound):
        await store.persistence.load_snapshot(stream_id, 3)


# -- large appends -----------------------------------------------------------


async def test_large_byte_appends_read_back_in_any_window(store: LogStore) -> None:
    data = bytes(range(256)) * (3 * PIECE_BYTES // 256 + 7)
    await store.create(CreateRequest(path="s", content_type=BYTES, messages=(data[:10],)))
    await append(store, "s", data[10:])
    assert await content(store, "s") == data
    for start, size in ((0, 1), (5, PIECE_BYTES), (PIECE_BYTES - 1, 2), (100_000, 70_000)):
        result = await store.read("s", start, size)
        assert b"".join(result.chunks) == data[start : start + size]
        # One append is one chunk, however it is stored.
        assert len(result.chunks) <= 2


async def test_fork_sub_offset_reaches_across_stored_pieces(store: LogStore) -> None:
    data = b"x" * (2 * PIECE_BYTES + 100)
    await store.create(CreateRequest(path="s", content_type=BYTES, messages=(data,)))
    fork = ForkSpec("s", offset=10, sub_offset=PIECE_BYTES + 50)
    created = await store.create(CreateRequest(path="f", content_type=None, fork=fork))
    assert created.info.fork_offset == 10 + PIECE_BYTES + 50


async def test_large_json_message_is_one_message(store: LogStore) -> None:
    message = b'"' + b"j" * (PIECE_BYTES * 2) + b'"'
    await store.create(CreateRequest(path="j", content_type=JSON, messages=(b"1", message, b"2")))
    result = await store.read("j", Sentinel.BEGINNING, 10)
    assert result.chunks == [b"1", message]
    with pytest.raises(InvalidOffset):
        await store.read("j", 1 + PIECE_BYTES, BIG)  # a piece boundary, not a message's


async def test_whole_reads_keep_large_appends_whole_and_cut_at_the_limit(
    store: LogStore,
) -> None:
    first = os.urandom(2 * PIECE_BYTES + PIECE_BYTES // 2)
    second = os.urandom(PIECE_BYTES + 7)
    await store.create(CreateRequest(path="s", content_type=BYTES, messages=(first,)))
    await append(store, "s", second)
    # max_bytes never cuts a message: a page holds at least one, whole.
    assert (await store.read_messages("s", 0, 10)).chunks == [first]
    assert (await store.read_messages("s", 0, len(first) + 1)).chunks == [first, second]
    assert (await store.read_messages("s", len(first), 1)).chunks == [second]
    # A fork inherits up to its fork offset, which may lie inside a stored piece.
    inside = PIECE_BYTES + 5
    fork = ForkSpec("s", offset=0, sub_offset=inside)
    await store.create(CreateRequest(path="f", content_type=None, fork=fork))
    assert (await store.read_messages("f", 0, 10)).chunks == [first[:inside]]
    # Persistence-level reads are cut at ``start`` and ``limit`` too.
    stream_id = store._entries["s"].state.stream_id
    chunks = await store.persistence.read(stream_id, 10, 2 * PIECE_BYTES + 3, 1, whole=True)
    assert chunks == [Chunk(10, first[10 : 2 * PIECE_BYTES + 3])]


# -- group commit ------------------------------------------------------------


async def test_concurrent_appends_share_transactions(store: LogStore) -> None:
    paths = [f"s{i}" for i in range(8)]
    for path in paths:
        await store.create(CreateRequest(path=path, content_type=BYTES))
    stats = store.persistence.stats
    transactions, mutations = stats.transactions, stats.mutations
    count = 400
    await asyncio.gather(
        *(append(store, paths[i % 8], b"%05d" % i, producer=("p", 0, i // 8)) for i in range(count))
    )
    assert stats.mutations - mutations == count
    assert stats.transactions - transactions < count // 2
    for index, path in enumerate(paths):
        expected = b"".join(b"%05d" % i for i in range(index, count, 8))
        assert await content(store, path) == expected


# -- deletion and space ------------------------------------------------------


async def test_purge_removes_rows_and_gives_space_back(store: LogStore, db_path: Path) -> None:
    await store.create(CreateRequest(path="keep", content_type=BYTES, messages=(b"k",)))
    await store.create(CreateRequest(path="big", content_type=BYTES))
    for _ in range(16):
        await append(store, "big", os.urandom(256 * 1024), producer=None)
    await store.persistence.reclaim()
    full_size = file_size(db_path)
    assert full_size > 4 * 1024 * 1024

    await store.delete("big")
    await store.persistence.reclaim()
    assert query(db_path, "SELECT count(*) FROM streams") == [(1,)]
    assert query(db_path, "SELECT count(DISTINCT sid) FROM chunks") == [(1,)]
    assert query(db_path, "PRAGMA freelist_count") == [(0,)]
    assert file_size(db_path) < full_size // 8
    assert await content(store, "keep") == b"k"


async def test_deleted_data_is_not_written_again(store: LogStore, db_path: Path) -> None:
    await store.create(CreateRequest(path="big", content_type=BYTES))
    for _ in range(16):
        await append(store, "big", os.urandom(256 * 1024))
    await store.persistence.reclaim()  # the WAL is empty now
    await store.delete("big")
    for _ in range(200):
        if query(db_path, "PRAGMA freelist_count") == [(0,)]:
            break
        await asyncio.sleep(0.025)
    # Freed pages are not zeroed through the WAL (some builds default to that).
    assert file_size(db_path.with_name(db_path.name + "-wal")) < 1024 * 1024


async def test_freed_pages_are_reclaimed_without_being_asked(
    store: LogStore, db_path: Path
) -> None:
    await store.create(CreateRequest(path="big", content_type=BYTES))
    for _ in range(8):
        await append(store, "big", os.urandom(256 * 1024))
    await store.delete("big")
    for _ in range(200):
        if query(db_path, "PRAGMA freelist_count") == [(0,)]:
            break
        await asyncio.sleep(0.025)
    assert query(db_path, "PRAGMA freelist_count") == [(0,)]
    assert store.persistence.stats.reclaimed_pages > 0


async def test_expired_stream_data_leaves_the_database(store: LogStore, db_path: Path) -> None:
    moment = [1_900_000_000.0]
    store.clock = lambda: moment[0]
    await store.create(
        CreateRequest(path="t", content_type=BYTES, expiry=Expiry(ttl_seconds=5), messages=(b"x",))
    )
    moment[0] += 6
    await store.sweep()
    assert query(db_path, "SELECT count(*) FROM streams") == [(0,)]
    assert query(db_path, "SELECT count(*) FROM chunks") == [(0,)]


async def test_a_snapshot_frees_the_data_before_it(store: LogStore, db_path: Path) -> None:
    await store.create(CreateRequest(path="s", content_type=BYTES))
    appends = [os.urandom(256 * 1024) for _ in range(16)]
    for data in appends:
        await append(store, "s", data)
    await store.persistence.reclaim()
    full_size = file_size(db_path)
    earliest = 15 * 256 * 1024
    # Its predecessor's blob is freed as well.
    await store.publish_snapshot("s", 256 * 1024, BYTES, os.urandom(1024 * 1024))
    await store.publish_snapshot("s", earliest, BYTES, b"small")
    await store.persistence.reclaim()
    assert query(db_path, "PRAGMA freelist_count") == [(0,)]
    assert file_size(db_path) < full_size // 4
    assert query(db_path, "SELECT min(start) FROM chunks") == [(earliest,)]
    assert query(db_path, "SELECT length(data) FROM snapshots") == [(5,)]
    assert await content_from(store, "s", earliest) == appends[-1]
    with pytest.raises(OffsetGone):
        await store.read("s", earliest - 1, BIG)


async def test_the_file_shrinks_after_a_snapshot_without_being_asked(
    store: LogStore, db_path: Path
) -> None:
    await store.create(CreateRequest(path="s", content_type=BYTES))
    for _ in range(16):
        await append(store, "s", os.urandom(256 * 1024))
    await store.persistence.reclaim()  # everything in the database file, the WAL empty
    full_size = file_size(db_path)
    await store.publish_snapshot("s", 15 * 256 * 1024, BYTES, b"snap")
    for _ in range(200):
        if file_size(db_path) < full_size // 4:
            break
        await asyncio.sleep(0.025)
    assert file_size(db_path) < full_size // 4


async def test_reclaim_never_removes_data_at_or_after_its_offset(
    store: LogStore, db_path: Path
) -> None:
    data = os.urandom(3 * PIECE_BYTES + 100)
    await store.create(CreateRequest(path="s", content_type=BYTES, messages=(b"head",)))
    await append(store, "s", data)
    await append(store, "s", b"tail")
    stream = b"head" + data + b"tail"
    stream_id = store._entries["s"].state.stream_id
    persistence = store.persistence

    def stored_starts() -> list[object]:
        return [start for (start,) in query(db_path, "SELECT start FROM chunks ORDER BY start")]

    starts = [0, 4, 4 + PIECE_BYTES, 4 + 2 * PIECE_BYTES, 4 + 3 * PIECE_BYTES, len(stream) - 4]
    assert stored_starts() == starts
    ends = dict(zip(starts, [*starts[1:], len(stream)], strict=True))
    for before in (0, 3, 4, PIECE_BYTES, PIECE_BYTES + 4, 2 * PIECE_BYTES + 10, len(stream) - 4):
        await persistence.reclaim_before(stream_id, before)
        # Exactly the pieces that end at or before ``before`` are gone...
        assert stored_starts() == [start for start in starts if ends[start] > before]
        # ... and everything from ``before`` on reads back, cut or whole.
        for whole in (False, True):
            chunks = await persistence.read(stream_id, before, len(stream), BIG, whole=whole)
            assert chunks[0].start == before
            assert b"".join(chunk.data for chunk in chunks) == stream[before:]


# -- full storage ------------------------------------------------------------


async def test_full_storage_fails_cleanly_and_reads_go_on(db_path: Path) -> None:
    store = await started(db_path, max_db_bytes=1024 * 1024)
    try:
        await store.create(CreateRequest(path="victim", content_type=BYTES))
        await append(store, "victim", b"v" * (128 * 1024))
        await store.create(CreateRequest(path="s", content_type=BYTES))
        seq = 0
        while True:
            try:
                await append(store, "s", b"%08d" % seq * 1024, producer=("p", 0, seq))
            except StorageFull:
                break
            seq += 1
        assert seq > 50
        tail = seq * 8 * 1024
        assert (await store.head("s")).tail == tail
        assert await content(store, "s") == b"".join(b"%08d" % i * 1024 for i in range(seq))
        assert query(db_path, "SELECT tail FROM streams WHERE path = 's'") == [(tail,)]
        big = b"n" * (256 * 1024)
        with pytest.raises(StorageFull):
            await store.create(CreateRequest(path="new", content_type=BYTES, messages=(big,)))
        with pytest.raises(StreamNotFound):
            await store.head("new")
        # Make room; the refused seq was never recorded, so it is new, not a duplicate.
        await store.delete("victim")
        retried = await append(store, "s", b"retried", producer=("p", 0, seq))
        assert retried.outcome is AppendOutcome.APPENDED
        assert retried.tail == tail + 7
    finally:
        await store.stop()
    store = await started(db_path)
    try:
        expected = b"".join(b"%08d" % i * 1024 for i in range(seq)) + b"retried"
        assert await content(store, "s") == expected
        assert store._entries["s"].state.producers["p"].last_seq == seq
    finally:
        await store.stop()


async def test_writes_queued_behind_a_failed_one_fail_with_it(db_path: Path) -> None:
    store = await started(db_path, max_db_bytes=1024 * 1024)
    try:
        await store.create(CreateRequest(path="s", content_type=BYTES, messages=(b"start",)))
        outcomes = await asyncio.gather(
            append(store, "s", b"fits", producer=("p", 0, 0)),
            append(store, "s", b"x" * (2 * 1024 * 1024), producer=("p", 0, 1)),
            append(store, "s", b"after", producer=("p", 0, 2)),
            return_exceptions=True,
        )
        assert isinstance(outcomes[0], AppendResult)
        assert isinstance(outcomes[1], StorageFull)
        assert isinstance(outcomes[2], StorageFull)
        # The state was rewound to what is stored: seq 1 is expected next, at offset 9.
        info = await store.head("s")
        assert info.tail == 9
        assert await content(store, "s") == b"startfits"
        again = await append(store, "s", b"again", producer=("p", 0, 1))
        assert again.outcome is AppendOutcome.APPENDED
        assert again.tail == 14
    finally:
        await store.stop()
    store = await started(db_path)
    try:
        assert await content(store, "s") == b"startfitsagain"
    finally:
        await store.stop()


# -- kill -9 -----------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from ds_server.live import LiveNotifier
    from ds_server.stores.base import AppendRequest, CreateRequest, ProducerClaim
    from ds_server.stores._log_store import LogStore
    from ds_server.stores._sqlite import SqlitePersistence

    async def writer(store, path, producer):
        seq = 0
        while True:
            data = b"<%s:%d>" % (producer.encode(), seq)
            result = await store.append(AppendRequest(
                path=path, content_type="application/octet-stream", messages=(data,),
                producer=ProducerClaim(producer, 0, seq)))
            print(path, producer, seq, result.tail, flush=True)
            seq += 1

    async def main():
        live = LiveNotifier()
        live.bind(asyncio.get_running_loop())
        backend = SqlitePersistence(Path(sys.argv[1]))
        store = LogStore(live, backend, max_retained_bytes=1 << 30)
        await store.start()
        for path in ("shared", "solo0", "solo1", "solo2"):
            await store.create(CreateRequest(path=path, content_type="application/octet-stream"))
        print("ready", flush=True)
        tasks = [writer(store, "shared", f"w{i}") for i in range(8)]
        tasks += [writer(store, f"solo{i}", "only") for i in range(3)]
        await asyncio.gather(*tasks)

    asyncio.run(main())
    """
)


def _parse(data: bytes) -> list[tuple[str, int]]:
    messages = []
    for part in data.split(b"<")[1:]:
        producer, seq = part.rstrip(b">").split(b":")
        messages.append((producer.decode(), int(seq)))
    return messages


async def test_every_acknowledged_append_survives_kill_9(db_path: Path) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CHILD, str(db_path), stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    acked: list[list[str]] = []
    try:
        assert (await child.stdout.readline()).strip() == b"ready"
        while len(acked) < 600:
            line = await child.stdout.readline()
            assert line, "the writer process died"
            acked.append(line.decode().split())
    finally:
        child.send_signal(signal.SIGKILL)
        await child.wait()

    store = await started(db_path)
    try:
        for path in ("solo0", "solo1", "solo2"):
            data = await content(store, path)
            # A single writer's acknowledged tail is exactly where its append ended.
            for _, producer, seq, tail in (a for a in acked if a[0] == path):
                message = b"<%s:%s>" % (producer.encode(), seq.encode())
                assert data[int(tail) - len(message) : int(tail)] == message
            assert _parse(data) == [("only", i) for i in range(len(_parse(data)))]
        shared = _parse(await content(store, "shared"))
        assert len(shared) == len(set(shared)), "an append was stored twice"
        for _, producer, seq, _ in (a for a in acked if a[0] == "shared"):
            assert (producer, int(seq)) in shared
        producers = store._entries["shared"].state.producers
        for producer in {p for p, _ in shared}:
            seqs = sorted(s for p, s in shared if p == producer)
            assert seqs == list(range(len(seqs)))
            assert producers[producer].last_seq == seqs[-1]
    finally:
        await store.stop()


_SNAPSHOTTING_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from ds_server.live import LiveNotifier
    from ds_server.stores.base import AppendRequest, CreateRequest
    from ds_server.stores._log_store import LogStore
    from ds_server.stores._sqlite import SqlitePersistence

    BYTES = "application/octet-stream"

    async def appender(store):
        while True:
            await store.append(AppendRequest(path="s", content_type=BYTES, messages=(b"m" * 1000,)))

    async def snapshotter(store):
        while True:
            offset = (await store.head("s")).tail
            blob = b"%012d" % offset * 20_000
            await store.publish_snapshot("s", offset, BYTES, blob)
            print(offset, flush=True)

    async def main():
        live = LiveNotifier()
        live.bind(asyncio.get_running_loop())
        backend = SqlitePersistence(Path(sys.argv[1]))
        store = LogStore(live, backend, max_retained_bytes=1 << 30)
        await store.start()
        await store.create(CreateRequest(path="s", content_type=BYTES))
        print("ready", flush=True)
        await asyncio.gather(appender(store), snapshotter(store))

    asyncio.run(main())
    """
)


async def test_a_snapshot_and_its_earliest_offset_survive_kill_9_together(db_path: Path) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _SNAPSHOTTING_CHILD, str(db_path), stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    acked: list[int] = []
    try:
        assert (await child.stdout.readline()).strip() == b"ready"
        while len(acked) < 40:
            line = await child.stdout.readline()
            assert line, "the snapshotting process died"
            acked.append(int(line))
    finally:
        child.send_signal(signal.SIGKILL)
        await child.wait()

    # Whatever the kill interrupted, the stored snapshot and earliest offset agree.
    assert query(db_path, "SELECT earliest_offset FROM streams") == query(
        db_path, "SELECT stream_offset FROM snapshots"
    )
    store = await started(db_path)
    try:
        head = await store.head("s")
        assert head.snapshot is not None
        offset = head.snapshot.offset
        assert head.earliest_offset == offset >= acked[-1]
        _, blob = await store.read_snapshot("s", offset)
        assert blob == b"%012d" % offset * 20_000
        assert head.snapshot.size == len(blob)
        assert await content_from(store, "s", offset) == b"m" * (head.tail - offset)
    finally:
        await store.stop()
