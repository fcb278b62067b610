"""The file backends beyond the shared contract: recovery, torn tails, space, group commit, fds."""

from __future__ import annotations

import asyncio
import errno
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_server.live import LiveNotifier
from ds_server.protocol.offsets import Sentinel
from ds_server.stores._file import persistence as persistence_module
from ds_server.stores._file import records, recovery, retention
from ds_server.stores._file.catalog import Catalog
from ds_server.stores._file.persistence import FilePersistence
from ds_server.stores._log_store import LogStore
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    CreateRequest,
    Expiry,
    ForkSpec,
    ProducerClaim,
)
from ds_server.stores.dir_lock import DirectoryInUse
from ds_server.stores.errors import (
    BucketNotFound,
    OffsetGone,
    SequenceConflict,
    StorageFull,
    StreamClosed,
    StreamExists,
    StreamGone,
    StreamNotFound,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from pathlib import Path

    OpenStore = Callable[..., Awaitable[LogStore]]

BYTES = "application/octet-stream"
JSON = "application/json"
LIMIT = 1 << 20


@pytest.fixture
async def open_store(tmp_path: Path) -> AsyncIterator[OpenStore]:
    """Start file stores on ``tmp_path/data`` (or another dir); stops whatever is still running."""
    running: list[LogStore] = []

    async def factory(
        data_dir: Path | None = None,
        *,
        durable: bool = True,
        max_open_files: int = 64,
        clock: Callable[[], float] | None = None,
    ) -> LogStore:
        live = LiveNotifier()
        live.bind(asyncio.get_running_loop())
        files = (data_dir or tmp_path / "data") / "files"
        backend = FilePersistence(files, durable=durable, max_open_files=max_open_files)
        store = LogStore(live, backend, max_retained_bytes=LIMIT)
        if clock is not None:
            store.clock = clock
        await store.start()
        running.append(store)
        return store

    yield factory
    for store in running:
        if store._sweeper is not None:
            await store.stop()


async def stop(store: LogStore) -> None:
    await store.stop()
    store._sweeper = None


def persistence(store: LogStore) -> FilePersistence:
    backend = store.persistence
    assert isinstance(backend, FilePersistence)
    return backend


async def create(store: LogStore, path: str, *messages: bytes, **kw: object) -> None:
    content_type = kw.pop("content_type", BYTES)
    await store.create(
        CreateRequest(path=path, content_type=content_type, messages=messages, **kw)  # type: ignore[arg-type]
    )


async def append(
    store: LogStore,
    path: str,
    *messages: bytes,
    content_type: str = BYTES,
    close: bool = False,
    seq: str | None = None,
    producer: tuple[str, int, int] | None = None,
) -> AppendOutcome:
    result = await store.append(
        AppendRequest(
            path=path,
            content_type=content_type if messages else None,
            messages=messages,
            close=close,
            stream_seq=seq,
            producer=ProducerClaim(*producer) if producer else None,
        )
    )
    return result.outcome


async def content(store: LogStore, path: str, max_bytes: int = LIMIT) -> list[bytes]:
    chunks: list[bytes] = []
    offset: int | Sentinel = Sentinel.BEGINNING
    while True:
        result = await store.read(path, offset, max_bytes)
        chunks.extend(result.chunks)
        if result.up_to_date:
            return chunks
        offset = result.next_offset


def log_file(store: LogStore, path: str) -> Path:
    stream_id = store._entries[path].state.stream_id
    return persistence(store).log_path(stream_id)


def crash_copy(data_dir: Path, target: Path) -> Path:
    """The files a kill -9 would leave right now: page-cache contents, no shutdown work."""
    shutil.copytree(data_dir, target)
    return target


# -- restart ------------------------------------------------------------------


@pytest.mark.parametrize("durable", [True, False])
async def test_restart_recovers_every_kind_of_state(
    open_store: OpenStore, tmp_path: Path, durable: bool
) -> None:
    store = await open_store(durable=durable)
    await create(store, "bytes", b"hello ")
    await append(store, "bytes", b"world", seq="a")
    await append(store, "bytes", b"!", producer=("p", 0, 0))
    await append(store, "bytes", b"?", producer=("p", 0, 1))
    await create(store, "json", b'{"a":1}', b'{"b":2}', content_type=JSON)
    await append(store, "json", b"[3]", b"[4]", content_type=JSON, close=True)
    await create(store, "ttl", b"x", expiry=Expiry(ttl_seconds=3600))
    await create(store, "src", b"0123456789")
    await create(store, "fork", fork=ForkSpec(source="src", offset=4))
    await append(store, "fork", b"abc")
    await store.delete("src")  # soft: the fork still reads from it
    await stop(store)

    again = await open_store(durable=durable)
    assert b"".join(await content(again, "bytes")) == b"hello world!?"
    assert await content(again, "json") == [b'{"a":1}', b'{"b":2}', b"[3]", b"[4]"]
    assert (await again.head("json")).closed
    with pytest.raises(StreamClosed):
        await append(again, "json", b"[5]", content_type=JSON)
    # Producer and Stream-Seq state came back: a retry is a duplicate, an old seq a conflict.
    assert await append(again, "bytes", b"?", producer=("p", 0, 1)) is AppendOutcome.DUPLICATE
    with pytest.raises(SequenceConflict):
        await append(again, "bytes", b"late", seq="a")
    assert (await again.head("ttl")).expiry == Expiry(ttl_seconds=3600)
    assert b"".join(await content(again, "fork")) == b"0123abc"
    fork = await again.head("fork")
    assert (fork.forked_from, fork.fork_offset) == ("src", 4)
    with pytest.raises(StreamGone):
        await again.head("src")
    with pytest.raises(StreamExists):
        await create(again, "src")
    # Deleting the last fork purges the soft-deleted source, files and all.
    source_log = persistence(again).log_path(again._entries["src"].state.stream_id)
    await again.delete("fork")
    assert not source_log.exists()
    await create(again, "src", b"new")
    assert b"".join(await content(again, "src")) == b"new"


async def test_crash_keeps_everything_acknowledged(open_store: OpenStore, tmp_path: Path) -> None:
    store = await open_store()
    await create(store, "s")
    await persistence(store).checkpoint()
    # Written after the last checkpoint: must come back from the log itself.
    for seq in range(20):
        await append(store, "s", b"%02d" % seq, producer=("p", 1, seq))
    await append(store, "s", close=True)
    copy = crash_copy(tmp_path / "data", tmp_path / "crashed")

    again = await open_store(copy)
    assert b"".join(await content(again, "s")) == b"".join(b"%02d" % i for i in range(20))
    assert (await again.head("s")).closed
    state = again._entries["s"].state
    assert state.producers["p"].epoch == 1
    assert state.producers["p"].last_seq == 19


async def test_without_a_catalog_the_logs_rebuild_it(open_store: OpenStore, tmp_path: Path) -> None:
    store = await open_store()
    await create(store, "s", b"a", expiry=Expiry(expires_at=4_000_000_000.0))
    await append(store, "s", b"b", seq="1")
    await stop(store)
    (tmp_path / "data" / "files" / "catalog.log").unlink()

    again = await open_store()
    assert b"".join(await content(again, "s")) == b"ab"
    assert (await again.head("s")).expiry == Expiry(expires_at=4_000_000_000.0)
    assert again._entries["s"].state.writer_seqs == {"": "1"}


@pytest.mark.parametrize(("durable", "stop_cleanly"), [(True, True), (False, True), (True, False)])
async def test_start_trusts_checkpoints_without_reading_the_logs(
    open_store: OpenStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    durable: bool,
    stop_cleanly: bool,
) -> None:
    """After a clean stop, or from checkpoints taken after an fsync, no log is opened."""
    store = await open_store(durable=durable)
    for i in range(20):
        await create(store, f"s{i}", b"x")
        await append(store, f"s{i}", b"y", producer=("p", 0, 0))
    data_dir = tmp_path / "data"
    if stop_cleanly:
        await stop(store)
    else:
        await persistence(store).checkpoint()  # the fsync callbacks marked them again
        await persistence(store).checkpoint()
        data_dir = crash_copy(data_dir, tmp_path / "crashed")

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("a log was replayed")

    monkeypatch.setattr(persistence_module, "recover", no_reading)
    again = await open_store(data_dir, durable=durable)
    assert len(again._entries) == 20
    assert b"".join(await content(again, "s7")) == b"xy"
    assert await append(again, "s7", b"y", producer=("p", 0, 0)) is AppendOutcome.DUPLICATE


async def test_unsynced_checkpoints_are_checked_after_a_crash(
    open_store: OpenStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store(durable=False)
    await create(store, "s", b"x")
    await persistence(store).checkpoint()
    copy = crash_copy(tmp_path / "data", tmp_path / "crashed")
    replayed: list[str] = []
    real = recovery.recover

    def spy(path: str, stream_id: str, *args: object, **kwargs: bool) -> object:
        replayed.append(stream_id)
        return real(path, stream_id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(persistence_module, "recover", spy)
    again = await open_store(copy, durable=False)
    assert replayed == [again._entries["s"].state.stream_id]


async def test_checkpoint_is_ignored_when_the_log_disagrees(
    open_store: OpenStore, tmp_path: Path
) -> None:
    store = await open_store()
    await create(store, "s", b"abc")
    await append(store, "s", b"def")
    log = log_file(store, "s")
    await stop(store)
    # The log lost its last record (as a power cut could do to file-fast), the
    # catalog still claims it: the log wins.
    size = log.stat().st_size
    with log.open("r+b") as f:
        f.truncate(size - 5)

    again = await open_store()
    assert b"".join(await content(again, "s")) == b"abc"
    await append(again, "s", b"xyz")
    assert b"".join(await content(again, "s")) == b"abcxyz"


# -- torn tails ----------------------------------------------------------------


def _torn_tails() -> dict[str, Callable[[bytes], bytes]]:
    record, _ = records.encode(
        records.Kind.APPEND, records.Flag.NONE, 6, b"\x94\xc0\xa0\xc0\x00", [b"zz"]
    )
    corrupt = bytearray(record)
    corrupt[-20] ^= 0xFF  # a data byte: the CRC no longer matches

    return {
        "garbage": lambda _: b"\x00garbage\xff" * 7,
        "half a record": lambda _: record[: len(record) // 2],
        "head only": lambda _: record[: records.HEAD.size],
        "bad checksum": lambda _: bytes(corrupt),
    }


@pytest.mark.parametrize("tail", list(_torn_tails()))
@pytest.mark.parametrize("with_catalog", [True, False])
async def test_torn_tail_is_cut_and_earlier_data_kept(
    open_store: OpenStore, tmp_path: Path, tail: str, with_catalog: bool
) -> None:
    store = await open_store()
    await create(store, "s", b"abc")
    await append(store, "s", b"def", producer=("p", 0, 0))
    log = log_file(store, "s")
    await stop(store)
    good_size = log.stat().st_size
    with log.open("ab") as f:
        f.write(_torn_tails()[tail](b""))
    if not with_catalog:
        (tmp_path / "data" / "files" / "catalog.log").unlink()

    again = await open_store()
    assert log.stat().st_size == good_size
    assert b"".join(await content(again, "s")) == b"abcdef"
    assert await append(again, "s", b"def", producer=("p", 0, 0)) is AppendOutcome.DUPLICATE
    await append(again, "s", b"ghi")
    await stop(again)
    third = await open_store()
    assert b"".join(await content(third, "s")) == b"abcdefghi"


async def test_half_created_stream_is_removed(open_store: OpenStore, tmp_path: Path) -> None:
    store = await open_store()
    await create(store, "keep", b"k")
    await stop(store)
    streams = tmp_path / "data" / "files" / "streams"
    record, _ = records.encode(records.Kind.CREATE, records.Flag.NONE, 0, b"\x93", [b"x" * 100])
    (streams / "00000000000000aa.log").write_bytes(record[:50])
    (streams / "00000000000000bb.idx").write_bytes(b"stale")
    (streams / "00000000000000cc.idx.tmp").write_bytes(b"stale")

    again = await open_store()
    assert sorted(p.name for p in streams.iterdir()) == [log_file(again, "keep").name]
    assert b"".join(await content(again, "keep")) == b"k"


# -- extensions: buckets, snapshots, retention --------------------------------------


async def test_restart_keeps_buckets_snapshots_and_last_writes(
    open_store: OpenStore, tmp_path: Path
) -> None:
    clock = [1_900_000_000.0]

    def now() -> float:
        return clock[0]

    store = await open_store(clock=now)
    await store.create_bucket("b")
    await store.create_bucket("gone")
    await store.delete_bucket("gone")
    await create(store, "b/s", b"aaa")
    clock[0] += 5
    await append(store, "b/s", b"bbb")
    await append(store, "b/s", b"ccc")
    snapshot = await store.publish_snapshot("b/s", 6, JSON, b'{"n":6}')
    await create(store, "b/f", fork=ForkSpec(source="b/s", offset=None))
    before = await store.head("b/s")
    await stop(store)

    for data_dir in (tmp_path / "data", None):
        if data_dir is None:  # and once more without the catalog's cache
            (tmp_path / "data" / "files" / "catalog.log").unlink()
        again = await open_store(clock=now)
        assert (await again.get_bucket("b")).stream_count == 2
        with pytest.raises(BucketNotFound):
            await again.get_bucket("gone")
        head = await again.head("b/s")
        assert head == before
        assert (head.snapshot, head.earliest_offset) == (snapshot, 6)
        assert head.last_write_at == 1_900_000_005.0
        assert await again.read_snapshot("b/s", 6) == (snapshot, b'{"n":6}')
        with pytest.raises(OffsetGone):
            await again.read("b/s", 0, LIMIT)
        assert (await again.head("b/f")).earliest_offset == 6
        await stop(again)


@pytest.fixture
def reclaim_always(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retention, "MIN_RECLAIM_BYTES", 0)


@pytest.mark.usefixtures("reclaim_always")
@pytest.mark.parametrize("durable", [True, False])
async def test_a_snapshot_frees_the_retired_log_prefix(
    open_store: OpenStore, tmp_path: Path, durable: bool
) -> None:
    store = await open_store(durable=durable)
    await create(store, "s", content_type=JSON)
    messages = [b'{"n":%d}' % i for i in range(200)]
    for i in range(0, 200, 2):
        await append(store, "s", *messages[i : i + 2], content_type=JSON, producer=("p", 0, i // 2))
    await content(store, "s", max_bytes=100)  # an index to carry over
    old_log = log_file(store, "s")
    old_size = old_log.stat().st_size
    offset = sum(len(m) for m in messages[:150])
    await store.publish_snapshot("s", offset, JSON, b"[]")

    new_log = log_file(store, "s")
    assert new_log != old_log
    assert not old_log.exists()
    assert new_log.stat().st_size < old_size / 3
    with pytest.raises(OffsetGone):
        await content(store, "s")
    assert (await store.read("s", offset, LIMIT)).chunks == messages[150:]
    await append(store, "s", b'{"n":"new"}', content_type=JSON, producer=("p", 0, 100))
    expected = [*messages[150:], b'{"n":"new"}']
    assert (await store.read("s", offset, 50)).chunks == expected[:6]
    copy = crash_copy(tmp_path / "data", tmp_path / "crashed")
    await stop(store)

    for data_dir in (tmp_path / "data", copy):
        again = await open_store(data_dir, durable=durable)
        assert (await again.read("s", offset, LIMIT)).chunks == expected
        with pytest.raises(OffsetGone):
            await again.read("s", 0, LIMIT)
        retry = await append(again, "s", b"{}", content_type=JSON, producer=("p", 0, 100))
        assert retry is AppendOutcome.DUPLICATE
        await stop(again)


@pytest.mark.usefixtures("reclaim_always")
async def test_retention_spares_what_forks_read_and_races_with_appends(
    open_store: OpenStore,
) -> None:
    store = await open_store()
    await create(store, "src", b"a" * 100)
    for _ in range(20):
        await append(store, "src", b"b" * 100)
    await create(store, "f", fork=ForkSpec(source="src", offset=1000))
    await asyncio.gather(
        store.publish_snapshot("src", 2000, BYTES, b"snap"),
        *(append(store, "src", b"c" * 10) for _ in range(20)),
    )
    assert b"".join(await content(store, "f")) == b"a" * 100 + b"b" * 900
    tail = b"".join((await store.read("src", 2000, LIMIT)).chunks)
    assert tail == b"b" * 100 + b"c" * 200
    await store.delete("f")
    await store.publish_snapshot("src", 2100, BYTES, b"snap2")
    assert b"".join((await store.read("src", 2100, LIMIT)).chunks) == b"c" * 200


async def test_leftovers_of_an_interrupted_rewrite_are_removed(
    open_store: OpenStore, tmp_path: Path
) -> None:
    store = await open_store()
    await create(store, "s", b"abc")
    log = log_file(store, "s")
    await stop(store)
    stream_id = log.name.removesuffix(".log")
    streams = log.parent
    # Cut short before its rename: a temporary name, never the log.
    (streams / f"{stream_id}.1.log.tmp").write_bytes(b"partial")
    again = await open_store()
    assert b"".join(await content(again, "s")) == b"abc"
    assert sorted(p.name for p in streams.iterdir()) == [log.name]
    await stop(again)
    # Renamed but the old generation not yet unlinked: the newer one is the log.
    shutil.copy(log, streams / f"{stream_id}.2.log")
    third = await open_store()
    assert b"".join(await content(third, "s")) == b"abc"
    assert sorted(p.name for p in streams.iterdir()) == [f"{stream_id}.2.log"]


# -- space ------------------------------------------------------------------------


async def test_purge_and_expiry_remove_the_files(open_store: OpenStore, tmp_path: Path) -> None:
    clock = [1_900_000_000.0]

    def now() -> float:
        return clock[0]

    store = await open_store(durable=False, clock=now)
    await create(store, "gone", b"x")
    for _ in range(5000):  # enough records for an index side file
        await append(store, "gone", b"y")
    await content(store, "gone", max_bytes=100)
    await persistence(store).checkpoint()
    await create(store, "ttl", b"x", expiry=Expiry(ttl_seconds=10))
    gone_files = [log_file(store, "gone"), log_file(store, "gone").with_suffix(".idx")]
    ttl_log = log_file(store, "ttl")
    assert all(path.exists() for path in [*gone_files, ttl_log])

    await store.delete("gone")
    assert not any(path.exists() for path in gone_files)
    clock[0] += 11
    await store.sweep()
    assert not ttl_log.exists()
    await stop(store)

    again = await open_store(durable=False, clock=now)
    assert again._entries == {}
    assert list((tmp_path / "data" / "files" / "streams").iterdir()) == []
    entries = Catalog(tmp_path / "data" / "files" / "catalog.log").load().entries
    assert entries == {}


@pytest.mark.parametrize("failure", [errno.ENOSPC, errno.EDQUOT, errno.EFBIG])
async def test_full_disk_writes_nothing_and_reads_go_on(
    open_store: OpenStore,
    monkeypatch: pytest.MonkeyPatch,
    failure: int,
) -> None:
    store = await open_store()
    await create(store, "s", b"abc")
    log = log_file(store, "s")
    size = log.stat().st_size
    real_pwrite = os.pwrite

    def half_then_full(fd: int, data: memoryview, pos: int) -> int:
        real_pwrite(fd, data[: len(data) // 2], pos)
        raise OSError(failure, os.strerror(failure))

    monkeypatch.setattr(os, "pwrite", half_then_full)
    with pytest.raises(StorageFull):
        await append(store, "s", b"defgh", producer=("p", 0, 0))
    monkeypatch.undo()

    assert log.stat().st_size == size
    assert (await store.head("s")).tail == 3
    assert b"".join(await content(store, "s")) == b"abc"
    # The refused append left no producer state behind: seq 0 is still new.
    assert await append(store, "s", b"def", producer=("p", 0, 0)) is AppendOutcome.APPENDED
    await stop(store)
    again = await open_store()
    assert b"".join(await content(again, "s")) == b"abcdef"


async def test_fsync_failure_is_fatal_for_writes_only(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store()
    await create(store, "s", b"abc")

    def broken(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fdatasync", broken)
    with pytest.raises(StorageFull, match="restart"):
        await append(store, "s", b"def")
    monkeypatch.undo()
    with pytest.raises(StorageFull):
        await append(store, "s", b"ghi")
    with pytest.raises(StorageFull):
        await create(store, "t")
    assert b"".join(await content(store, "s")) == b"abc"


# -- concurrency and resources -----------------------------------------------------


async def test_a_cancelled_append_is_still_applied(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that leaves mid-write must not leave the log and the state disagreeing."""
    store = await open_store()
    await create(store, "s", b"a")
    real_pwrite = os.pwrite

    def slow(fd: int, data: memoryview, pos: int) -> int:
        time.sleep(0.2)
        return real_pwrite(fd, data, pos)

    monkeypatch.setattr(os, "pwrite", slow)
    leaving = asyncio.create_task(append(store, "s", b"b"))
    await asyncio.sleep(0.05)
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    monkeypatch.undo()
    await append(store, "s", b"c")
    assert b"".join(await content(store, "s")) == b"abc"
    await stop(store)
    again = await open_store()
    assert b"".join(await content(again, "s")) == b"abc"


async def test_concurrent_appends_share_fsyncs(
    open_store: OpenStore,
) -> None:
    store = await open_store()
    await create(store, "s")
    before = persistence(store).fsync_count
    writers = 64
    outcomes = await asyncio.gather(
        *(append(store, "s", b"%03d" % i, producer=(f"p{i}", 0, 0)) for i in range(writers))
    )
    assert outcomes == [AppendOutcome.APPENDED] * writers
    fsyncs = persistence(store).fsync_count - before
    assert 1 <= fsyncs < writers
    data = b"".join(await content(store, "s"))
    assert sorted(data[i : i + 3] for i in range(0, len(data), 3)) == [
        b"%03d" % i for i in range(writers)
    ]


async def test_fast_mode_never_fsyncs(open_store: OpenStore) -> None:
    store = await open_store(durable=False)
    await create(store, "s", b"a")
    await asyncio.gather(*(append(store, "s", b"b") for _ in range(10)))
    await store.delete("s")
    assert persistence(store).fsync_count == 0


async def test_file_handle_pool_stays_bounded(open_store: OpenStore, tmp_path: Path) -> None:
    store = await open_store(max_open_files=4)
    streams_dir = tmp_path / "data" / "files" / "streams"

    def open_logs() -> int:
        fds = os.listdir("/proc/self/fd")
        targets = [os.path.realpath(f"/proc/self/fd/{fd}") for fd in fds]
        return sum(t.startswith(str(streams_dir)) and t.endswith(".log") for t in targets)

    for i in range(40):
        await create(store, f"s{i}", b"x")
        await append(store, f"s{i}", b"y")
        assert persistence(store).open_files <= 4
    for i in range(40):
        assert b"".join(await content(store, f"s{i}")) == b"xy"
    await asyncio.gather(*(append(store, f"s{i}", b"z") for i in range(40)))
    await asyncio.sleep(0.05)
    assert persistence(store).open_files <= 4
    assert open_logs() <= 4


async def test_index_side_file_is_used_and_a_bad_one_rebuilt(
    open_store: OpenStore, tmp_path: Path
) -> None:
    store = await open_store(durable=False)
    await create(store, "j", content_type=JSON)
    messages = [b'{"n":%d}' % i for i in range(6000)]
    for i in range(0, len(messages), 3):
        await append(store, "j", *messages[i : i + 3], content_type=JSON)
    await content(store, "j", max_bytes=4096)  # builds the index
    await stop(store)
    side = log_file(store, "j").with_suffix(".idx")
    assert side.exists()

    again = await open_store(durable=False)
    assert await content(again, "j", max_bytes=4096) == messages
    await stop(again)
    side.write_bytes(side.read_bytes()[:-5] + b"12345")
    third = await open_store(durable=False)
    assert await content(third, "j", max_bytes=777) == messages
    offset = sum(len(m) for m in messages[:100])
    assert (await third.read("j", offset, 9)).chunks == [messages[100]]


async def test_indexes_past_the_memory_bound_are_dropped_and_rebuilt(
    open_store: OpenStore,
) -> None:
    store = await open_store(durable=False)
    cache = persistence(store)._indexes
    cache._max_records = 25
    for i in range(6):
        await create(store, f"s{i}", b"a")
        for j in range(9):
            await append(store, f"s{i}", b"%d" % j)
    for _ in range(2):
        for i in range(6):
            assert b"".join(await content(store, f"s{i}", max_bytes=3)) == b"a012345678"
            assert cache._records <= 25
    indexed = [s for s in persistence(store)._logs.values() if s.index is not None]
    assert 1 <= len(indexed) <= 2


async def test_one_server_per_data_dir(open_store: OpenStore) -> None:
    await open_store()
    with pytest.raises(
        DirectoryInUse, match=f"in use by another ds-server \\(pid {os.getpid()}\\)"
    ):
        await open_store()


async def test_a_crash_between_fork_purge_and_source_purge_is_finished_at_start(
    open_store: OpenStore, tmp_path: Path
) -> None:
    store = await open_store()
    await create(store, "src", b"abc")
    await create(store, "fork", fork=ForkSpec(source="src", offset=1))
    await store.delete("src")
    fork_log = log_file(store, "fork")
    copy = crash_copy(tmp_path / "data", tmp_path / "crashed")
    # As if the fork's log was unlinked and the process died before the source went.
    (copy / "files" / "streams" / fork_log.name).unlink()

    again = await open_store(copy)
    with pytest.raises(StreamNotFound):
        await again.head("src")
    assert list((copy / "files" / "streams").iterdir()) == []


# -- a real process: kill -9 and a file-size limit ------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _Server:
    def __init__(self, data_dir: Path, mode: str, fsize_limit: int | None = None) -> None:
        self.url = f"http://127.0.0.1:{_free_port()}"
        env = {
            **os.environ,
            "DS_STORAGE__MODE": mode,
            "DS_STORAGE__DATA_DIR": str(data_dir),
            "DS_SERVER__HOST": "127.0.0.1",
            "DS_SERVER__PORT": self.url.rsplit(":", 1)[1],
            "DS_METRICS__PORT": "0",
        }

        def limit() -> None:
            if fsize_limit is not None:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_limit, fsize_limit))

        self.process = subprocess.Popen(
            [sys.executable, "-m", "ds_server", "--log-level", "warning"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=limit,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "ds-server exited during start-up"
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("ds-server did not become ready")

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.mark.parametrize("mode", ["file-durable", "file-fast"])
def test_kill_9_loses_nothing_acknowledged(tmp_path: Path, mode: str) -> None:
    server = _Server(tmp_path, mode)
    acked: list[bytes] = []
    try:
        stream = f"{server.url}/v1/stream/k"
        assert httpx.put(stream, headers={"Content-Type": BYTES}).status_code == 201
        with httpx.Client() as client:
            for i in range(50):
                body = b"<%04d>" % i
                response = client.post(
                    stream,
                    content=body,
                    headers={
                        "Content-Type": BYTES,
                        "Producer-Id": "w",
                        "Producer-Epoch": "0",
                        "Producer-Seq": str(i),
                    },
                )
                assert response.status_code in (200, 204)
                acked.append(body)
    finally:
        server.kill()
    server = _Server(tmp_path, mode)
    try:
        stream = f"{server.url}/v1/stream/k"
        assert httpx.get(f"{stream}?offset=-1").content == b"".join(acked)
        retry = httpx.post(
            stream,
            content=acked[-1],
            headers={
                "Content-Type": BYTES,
                "Producer-Id": "w",
                "Producer-Epoch": "0",
                "Producer-Seq": str(len(acked) - 1),
            },
        )
        assert retry.status_code == 204  # a duplicate, known across the crash
    finally:
        server.kill()


def test_file_size_limit_gives_507_and_reads_go_on(tmp_path: Path) -> None:
    server = _Server(tmp_path, "file-durable", fsize_limit=256 * 1024)
    acked: list[bytes] = []
    try:
        stream = f"{server.url}/v1/stream/full"
        assert httpx.put(stream, headers={"Content-Type": BYTES}).status_code == 201
        with httpx.Client() as client:
            for i in range(100):
                body = bytes([65 + i % 26]) * 10_000
                response = client.post(stream, content=body, headers={"Content-Type": BYTES})
                if response.status_code == 507:
                    break
                assert response.status_code in (200, 204)
                acked.append(body)
            else:
                pytest.fail("the size limit was never reached")
            assert len(acked) > 10
            assert client.get(f"{stream}?offset=-1").content == b"".join(acked)
            # Small appends that still fit keep working.
            assert client.post(stream, content=b"!", headers={"Content-Type": BYTES}).is_success
            acked.append(b"!")
    finally:
        server.kill()
    server = _Server(tmp_path, "file-durable")
    try:
        assert httpx.get(f"{server.url}/v1/stream/full?offset=-1").content == b"".join(acked)
    finally:
        server.kill()
