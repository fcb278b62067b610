"""The contract every ``Store`` backend keeps; the ``store`` fixture runs it per backend."""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING

import pytest
from ds_server.protocol.offsets import Sentinel
from ds_server.settings import LimitsSection
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    AppendResult,
    BucketInfo,
    CreateRequest,
    CreateResult,
    Expiry,
    ForkSpec,
    ProducerClaim,
    SnapshotInfo,
    StreamSummary,
)
from ds_server.stores.errors import (
    BucketExists,
    BucketNotEmpty,
    BucketNotFound,
    ContentTypeMismatch,
    InvalidFork,
    InvalidOffset,
    InvalidProducerState,
    OffsetGone,
    PayloadTooLarge,
    ProducerFenced,
    SequenceConflict,
    SequenceGap,
    SnapshotConflict,
    SnapshotNotFound,
    StreamClosed,
    StreamExists,
    StreamGone,
    StreamNotFound,
)
from support.backends import BACKENDS, backend_settings, backend_storage, started_store

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ds_server.stores.base import Store

MAX_STREAM_BYTES = 4096
BYTES = "application/octet-stream"
JSON = "application/json"
BIG = 1 << 20


async def create(
    store: Store,
    path: str = "s",
    *messages: bytes,
    content_type: str | None = BYTES,
    expiry: Expiry | None = None,
    closed: bool = False,
    fork: ForkSpec | None = None,
) -> CreateResult:
    return await store.create(
        CreateRequest(
            path=path,
            content_type=content_type,
            expiry=expiry or Expiry(),
            closed=closed,
            messages=messages,
            fork=fork,
        )
    )


async def append(
    store: Store,
    path: str,
    *messages: bytes,
    content_type: str = BYTES,
    close: bool = False,
    seq: str | None = None,
    writer: str = "",
    producer: tuple[str, int, int] | None = None,
) -> AppendResult:
    return await store.append(
        AppendRequest(
            path=path,
            content_type=content_type if messages else None,
            messages=messages,
            close=close,
            stream_seq=seq,
            writer=writer,
            producer=ProducerClaim(*producer) if producer else None,
        )
    )


async def read_all(store: Store, path: str, max_bytes: int = BIG) -> list[bytes]:
    """Every chunk from the beginning, paging with next_offset."""
    chunks: list[bytes] = []
    offset: int | Sentinel = Sentinel.BEGINNING
    while True:
        result = await store.read(path, offset, max_bytes)
        chunks.extend(result.chunks)
        if result.up_to_date:
            return chunks
        assert result.next_offset > result.start, "a read must make progress"
        offset = result.next_offset


async def content(store: Store, path: str) -> bytes:
    return b"".join(await read_all(store, path))


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A started backend, built the way the server builds it."""
    url = request.getfixturevalue("postgres").url() if request.param == "postgres" else None
    limits = LimitsSection(max_retained_bytes=MAX_STREAM_BYTES, max_snapshot_bytes=MAX_STREAM_BYTES)
    storage = backend_storage(request.param, tmp_path / "data", url)
    settings = backend_settings(storage, limits=limits)
    async with started_store(settings) as backend:
        yield backend


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(store: Store) -> Clock:
    """The store's clock, moved by hand."""
    fake = Clock(1_900_000_000.0)
    store.clock = fake
    return fake


# -- create ------------------------------------------------------------------


async def test_create_new_stream(store: Store) -> None:
    result = await create(store, "a/b", content_type="text/plain")
    assert result.created
    info = result.info
    assert (info.path, info.content_type, info.tail, info.closed) == ("a/b", "text/plain", 0, False)
    assert info.stream_id
    assert info.forked_from is None
    assert await store.head("a/b") == info


async def test_create_defaults_content_type(store: Store) -> None:
    result = await create(store, "s", content_type=None)
    assert result.info.content_type == BYTES


async def test_create_with_initial_content(store: Store) -> None:
    result = await create(store, "s", b"hello")
    assert result.info.tail == 5
    assert await content(store, "s") == b"hello"


async def test_idempotent_create(store: Store) -> None:
    first = await create(store, "s", b"abc", expiry=Expiry(ttl_seconds=60))
    again = await create(store, "s", expiry=Expiry(ttl_seconds=60))
    assert not again.created
    assert again.info.stream_id == first.info.stream_id
    assert again.info.tail == 3
    # The body of a matching re-create is not appended.
    assert await content(store, "s") == b"abc"


async def test_idempotent_create_matches_media_type_loosely(store: Store) -> None:
    await create(store, "s", content_type="text/plain")
    assert not (await create(store, "s", content_type="Text/Plain; charset=utf-8")).created


@pytest.mark.parametrize(
    "change",
    [
        {"content_type": "text/plain"},
        {"expiry": Expiry(ttl_seconds=61)},
        {"expiry": Expiry()},
        {"expiry": Expiry(expires_at=4_000_000_000.0)},
        {"closed": True},
    ],
)
async def test_create_conflict(store: Store, change: dict[str, object]) -> None:
    await create(store, "s", expiry=Expiry(ttl_seconds=60))
    with pytest.raises(StreamExists):
        await create(store, "s", **{"expiry": Expiry(ttl_seconds=60), **change})  # type: ignore[arg-type]


async def test_create_closed(store: Store) -> None:
    result = await create(store, "s", b"final", closed=True)
    assert result.info.closed
    assert not (await create(store, "s", closed=True)).created
    with pytest.raises(StreamExists):
        await create(store, "s")
    with pytest.raises(StreamClosed):
        await append(store, "s", b"more")


async def test_streams_are_independent(store: Store) -> None:
    await create(store, "a", b"aaa")
    await create(store, "b", b"bb")
    await append(store, "a", b"A")
    assert await content(store, "a") == b"aaaA"
    assert await content(store, "b") == b"bb"
    assert (await store.head("a")).stream_id != (await store.head("b")).stream_id


# -- append and read ---------------------------------------------------------


async def test_append_read_round_trip_is_byte_exact(store: Store) -> None:
    payload = bytes(range(256)) + b"\r\n\x00" + "é日本".encode()
    await create(store, "s")
    result = await append(store, "s", payload)
    assert result.outcome is AppendOutcome.APPENDED
    assert result.tail == len(payload)
    assert await content(store, "s") == payload


async def test_offsets_are_cumulative_byte_positions(store: Store) -> None:
    await create(store, "s", b"abc")
    assert (await append(store, "s", b"defgh")).tail == 8
    assert (await append(store, "s", b"i")).tail == 9
    read = await store.read("s", 3, BIG)
    assert (read.start, read.next_offset, b"".join(read.chunks)) == (3, 9, b"defghi")
    read = await store.read("s", 5, BIG)
    assert b"".join(read.chunks) == b"fghi"
    assert read.up_to_date


async def test_read_from_beginning_sentinel(store: Store) -> None:
    await create(store, "s", b"abc")
    read = await store.read("s", Sentinel.BEGINNING, BIG)
    assert (read.start, read.next_offset, b"".join(read.chunks)) == (0, 3, b"abc")


async def test_read_at_tail_is_empty_and_up_to_date(store: Store) -> None:
    await create(store, "s", b"abc")
    read = await store.read("s", 3, BIG)
    assert read.chunks == []
    assert read.next_offset == 3
    assert read.up_to_date
    assert not read.at_closed_end


async def test_read_beyond_tail_is_invalid(store: Store) -> None:
    await create(store, "s", b"abc")
    with pytest.raises(InvalidOffset):
        await store.read("s", 4, BIG)


async def test_now_sentinel_reads_nothing_at_the_tail(store: Store) -> None:
    await create(store, "s", b"abc")
    read = await store.read("s", Sentinel.NOW, BIG)
    assert (read.start, read.next_offset, read.chunks) == (3, 3, [])
    assert read.up_to_date


async def test_chunked_reads_reconstruct_the_stream(store: Store) -> None:
    await create(store, "s")
    pieces = [bytes([i]) * (i * 37 % 60 + 1) for i in range(20)]
    for piece in pieces:
        await append(store, "s", piece)
    expected = b"".join(pieces)
    assert len(expected) <= MAX_STREAM_BYTES
    for max_bytes in (1, 7, 100, 1000):
        offset: int | Sentinel = Sentinel.BEGINNING
        got = b""
        while True:
            read = await store.read("s", offset, max_bytes)
            data = b"".join(read.chunks)
            assert len(data) <= max_bytes
            assert read.next_offset == read.start + len(data)
            got += data
            if read.up_to_date:
                break
            assert data, "a partial read must return data"
            offset = read.next_offset
        assert got == expected


async def test_read_missing_stream(store: Store) -> None:
    with pytest.raises(StreamNotFound):
        await store.read("nope", Sentinel.BEGINNING, BIG)
    with pytest.raises(StreamNotFound):
        await store.head("nope")
    with pytest.raises(StreamNotFound):
        await append(store, "nope", b"x")
    with pytest.raises(StreamNotFound):
        await store.delete("nope")


async def test_content_type_mismatch(store: Store) -> None:
    await create(store, "s", content_type="text/plain")
    with pytest.raises(ContentTypeMismatch):
        await append(store, "s", b"x", content_type="application/octet-stream")
    await append(store, "s", b"x", content_type="text/plain; charset=utf-8")


# -- JSON --------------------------------------------------------------------


async def test_json_messages_keep_their_boundaries(store: Store) -> None:
    await create(store, "j", b"1", b'{"a":2}', content_type=JSON)
    await append(store, "j", b"[3]", content_type=JSON)
    read = await store.read("j", Sentinel.BEGINNING, BIG)
    assert read.chunks == [b"1", b'{"a":2}', b"[3]"]
    assert read.next_offset == 11
    assert (await store.read("j", 1, BIG)).chunks == [b'{"a":2}', b"[3]"]
    assert (await store.read("j", 8, BIG)).chunks == [b"[3]"]


@pytest.mark.parametrize("offset", [2, 3, 7, 9, 10])
async def test_json_read_inside_a_message_is_invalid(store: Store, offset: int) -> None:
    await create(store, "j", b"1", b'{"a":2}', b"[3]", content_type=JSON)
    with pytest.raises(InvalidOffset):
        await store.read("j", offset, BIG)


async def test_json_chunked_reads_return_whole_messages(store: Store) -> None:
    messages = [f'{{"n":{i},"pad":"{"x" * i}"}}'.encode() for i in range(15)]
    await create(store, "j", *messages, content_type=JSON)
    assert await read_all(store, "j", max_bytes=10) == messages


async def test_empty_json_stream(store: Store) -> None:
    await create(store, "j", content_type=JSON)
    read = await store.read("j", Sentinel.BEGINNING, BIG)
    assert (read.chunks, read.next_offset) == ([], 0)


# -- closure -----------------------------------------------------------------


async def test_append_and_close(store: Store) -> None:
    await create(store, "s", b"abc")
    result = await append(store, "s", b"end", close=True)
    assert result.outcome is AppendOutcome.APPENDED
    assert result.closed
    assert result.tail == 6
    read = await store.read("s", 3, BIG)
    assert b"".join(read.chunks) == b"end"
    assert read.at_closed_end


async def test_close_only(store: Store) -> None:
    await create(store, "s", b"abc")
    result = await append(store, "s", close=True)
    assert result.outcome is AppendOutcome.CLOSED
    assert (result.closed, result.tail) == (True, 3)
    # Closing again is idempotent.
    again = await append(store, "s", close=True)
    assert again.outcome is AppendOutcome.CLOSED
    assert again.tail == 3
    assert (await store.head("s")).closed


@pytest.mark.parametrize("close", [False, True])
async def test_append_to_closed_stream(store: Store, close: bool) -> None:
    await create(store, "s", b"abc")
    await append(store, "s", close=True)
    with pytest.raises(StreamClosed) as info:
        await append(store, "s", b"more", close=close)
    assert info.value.tail == 3
    assert await content(store, "s") == b"abc"


async def test_closed_read_before_the_end_is_not_eof(store: Store) -> None:
    await create(store, "s", b"abcdef", closed=True)
    read = await store.read("s", Sentinel.BEGINNING, 2)
    assert read.info.closed
    assert not read.at_closed_end
    read = await store.read("s", Sentinel.NOW, BIG)
    assert read.at_closed_end


# -- idempotent producers ----------------------------------------------------


async def test_producer_appends_and_echo(store: Store) -> None:
    await create(store, "s")
    first = await append(store, "s", b"a", producer=("p", 0, 0))
    assert (first.outcome, first.producer_epoch, first.producer_seq) == (
        AppendOutcome.APPENDED,
        0,
        0,
    )
    second = await append(store, "s", b"b", producer=("p", 0, 1))
    assert (second.producer_epoch, second.producer_seq) == (0, 1)


async def test_producer_duplicate_is_not_written(store: Store) -> None:
    await create(store, "s")
    await append(store, "s", b"a", producer=("p", 0, 0))
    await append(store, "s", b"b", producer=("p", 0, 1))
    retry = await append(store, "s", b"a", producer=("p", 0, 0))
    assert retry.outcome is AppendOutcome.DUPLICATE
    assert (retry.producer_epoch, retry.producer_seq) == (0, 1)
    assert retry.tail == 2
    assert await content(store, "s") == b"ab"


async def test_producer_fencing(store: Store) -> None:
    await create(store, "s")
    await append(store, "s", b"a", producer=("p", 3, 0))
    with pytest.raises(ProducerFenced) as info:
        await append(store, "s", b"zombie", producer=("p", 2, 5))
    assert info.value.current_epoch == 3
    assert await content(store, "s") == b"a"


async def test_producer_gap(store: Store) -> None:
    await create(store, "s")
    with pytest.raises(SequenceGap) as first:
        await append(store, "s", b"a", producer=("p", 0, 1))
    assert (first.value.expected, first.value.received) == (0, 1)
    await append(store, "s", b"a", producer=("p", 0, 0))
    with pytest.raises(SequenceGap) as later:
        await append(store, "s", b"c", producer=("p", 0, 3))
    assert (later.value.expected, later.value.received) == (1, 3)
    assert await content(store, "s") == b"a"


async def test_producer_new_epoch(store: Store) -> None:
    await create(store, "s")
    await append(store, "s", b"a", producer=("p", 0, 0))
    with pytest.raises(InvalidProducerState):
        await append(store, "s", b"b", producer=("p", 1, 1))
    await append(store, "s", b"b", producer=("p", 1, 0))
    assert await content(store, "s") == b"ab"


async def test_producer_retry_of_closing_append_is_duplicate(store: Store) -> None:
    await create(store, "s")
    await append(store, "s", b"last", close=True, producer=("p", 0, 0))
    retry = await append(store, "s", b"last", close=True, producer=("p", 0, 0))
    assert retry.outcome is AppendOutcome.DUPLICATE
    assert retry.closed
    with pytest.raises(StreamClosed):
        await append(store, "s", b"more", producer=("p", 0, 1))
    with pytest.raises(StreamClosed):
        await append(store, "s", b"more", producer=("q", 0, 0))


# -- Stream-Seq --------------------------------------------------------------


async def test_stream_seq(store: Store) -> None:
    await create(store, "s")
    await append(store, "s", b"a", seq="001")
    with pytest.raises(SequenceConflict):
        await append(store, "s", b"b", seq="001")
    with pytest.raises(SequenceConflict):
        await append(store, "s", b"b", seq="0009")
    await append(store, "s", b"b", seq="002")
    await append(store, "s", b"c", seq="001", writer="someone-else")
    assert await content(store, "s") == b"abc"


# -- expiry ------------------------------------------------------------------


async def test_ttl_expires_an_idle_stream(store: Store, clock: Clock) -> None:
    result = await create(store, "s", b"abc", expiry=Expiry(ttl_seconds=10))
    assert result.info.expires_at == pytest.approx(clock.now + 10)
    clock.now += 9
    await store.read("s", Sentinel.BEGINNING, BIG)  # renews the TTL
    clock.now += 9
    await append(store, "s", b"d")  # so does an append
    clock.now += 9
    assert await content(store, "s") == b"abcd"
    clock.now += 10
    with pytest.raises(StreamNotFound):
        await store.read("s", Sentinel.BEGINNING, BIG)


async def test_head_does_not_renew_ttl(store: Store, clock: Clock) -> None:
    await create(store, "s", expiry=Expiry(ttl_seconds=10))
    clock.now += 6
    await store.head("s")
    clock.now += 5
    with pytest.raises(StreamNotFound):
        await store.head("s")


async def test_expires_at_is_fixed(store: Store, clock: Clock) -> None:
    deadline = clock.now + 30
    await create(store, "s", expiry=Expiry(expires_at=deadline))
    clock.now = deadline - 1
    await store.read("s", Sentinel.BEGINNING, BIG)
    assert (await store.head("s")).expires_at == deadline
    clock.now = deadline
    with pytest.raises(StreamNotFound):
        await store.read("s", Sentinel.BEGINNING, BIG)


async def test_expired_path_can_be_created_again(store: Store, clock: Clock) -> None:
    old = await create(store, "s", b"old", expiry=Expiry(ttl_seconds=1))
    clock.now += 2
    new = await create(store, "s", expiry=Expiry(ttl_seconds=1))
    assert new.created
    assert new.info.stream_id != old.info.stream_id
    assert await content(store, "s") == b""


# -- delete ------------------------------------------------------------------


async def test_delete_then_recreate(store: Store) -> None:
    old = await create(store, "s", b"abc")
    await store.delete("s")
    with pytest.raises(StreamNotFound):
        await store.head("s")
    with pytest.raises(StreamNotFound):
        await store.read("s", Sentinel.BEGINNING, BIG)
    with pytest.raises(StreamNotFound):
        await store.delete("s")
    new = await create(store, "s", content_type="text/plain")
    assert new.created
    assert new.info.stream_id != old.info.stream_id
    assert new.info.tail == 0
    assert await content(store, "s") == b""


# -- forks -------------------------------------------------------------------


async def test_fork_at_tail_inherits_everything(store: Store) -> None:
    await create(store, "src", b"abc", content_type="text/plain")
    await append(store, "src", b"def", content_type="text/plain")
    result = await create(store, "f", content_type=None, fork=ForkSpec(source="src", offset=None))
    assert result.created
    info = result.info
    assert (info.content_type, info.tail, info.forked_from, info.fork_offset) == (
        "text/plain",
        6,
        "src",
        6,
    )
    assert await content(store, "f") == b"abcdef"


async def test_fork_at_offset_inherits_the_prefix(store: Store) -> None:
    await create(store, "src", b"abc")
    await append(store, "src", b"def")
    result = await create(store, "f", fork=ForkSpec(source="src", offset=3))
    assert result.info.tail == 3
    assert await content(store, "f") == b"abc"
    read = await store.read("f", 1, BIG)
    assert b"".join(read.chunks) == b"bc"


async def test_fork_at_zero_is_empty(store: Store) -> None:
    await create(store, "src", b"abc")
    result = await create(store, "f", fork=ForkSpec(source="src", offset=0))
    assert result.info.tail == 0
    assert await content(store, "f") == b""


async def test_fork_isolation_both_ways(store: Store) -> None:
    await create(store, "src", b"abc")
    await create(store, "f", fork=ForkSpec(source="src", offset=None))
    await append(store, "f", b"FORK")
    await append(store, "src", b"SRC")
    assert await content(store, "src") == b"abcSRC"
    assert await content(store, "f") == b"abcFORK"
    # Closing one leaves the other open.
    await append(store, "src", close=True)
    assert not (await store.head("f")).closed
    await append(store, "f", b"!")


async def test_fork_of_a_fork(store: Store) -> None:
    await create(store, "a", b"1")
    await create(store, "b", fork=ForkSpec(source="a", offset=None))
    await append(store, "b", b"2")
    await create(store, "c", fork=ForkSpec(source="b", offset=None))
    await append(store, "c", b"3")
    await append(store, "a", b"x")
    await append(store, "b", b"y")
    assert await content(store, "a") == b"1x"
    assert await content(store, "b") == b"12y"
    assert await content(store, "c") == b"123"
    assert b"".join((await store.read("c", 1, BIG)).chunks) == b"23"


async def test_fork_json_keeps_message_boundaries(store: Store) -> None:
    await create(store, "src", b"1", b"22", b"333", content_type=JSON)
    await create(store, "f", content_type=None, fork=ForkSpec(source="src", offset=None))
    await append(store, "f", b"4", content_type=JSON)
    assert await read_all(store, "f") == [b"1", b"22", b"333", b"4"]
    assert (await store.read("f", 3, BIG)).chunks == [b"333", b"4"]
    with pytest.raises(InvalidOffset):
        await store.read("f", 2, BIG)


async def test_fork_sub_offset_bytes(store: Store) -> None:
    await create(store, "src", b"abc")
    await append(store, "src", b"defgh")
    result = await create(store, "f", fork=ForkSpec(source="src", offset=3, sub_offset=2))
    assert result.info.tail == 5
    assert await content(store, "f") == b"abcde"
    with pytest.raises(InvalidFork):
        await create(store, "g", fork=ForkSpec(source="src", offset=3, sub_offset=6))


async def test_fork_sub_offset_json_counts_messages(store: Store) -> None:
    await create(store, "src", b"1", b"22", b"333", content_type=JSON)
    fork = ForkSpec(source="src", offset=0, sub_offset=2)
    result = await create(store, "f", content_type=None, fork=fork)
    assert result.info.tail == 3
    assert await read_all(store, "f") == [b"1", b"22"]
    fork = ForkSpec(source="src", offset=0, sub_offset=4)
    with pytest.raises(InvalidFork):
        await create(store, "g", content_type=None, fork=fork)


async def test_fork_offset_must_be_readable(store: Store) -> None:
    await create(store, "src", b"abc")
    with pytest.raises(InvalidFork):
        await create(store, "f", fork=ForkSpec(source="src", offset=4))
    await create(store, "j", b"11", b"22", content_type=JSON)
    with pytest.raises(InvalidFork):
        await create(store, "g", content_type=None, fork=ForkSpec(source="j", offset=1))
    for path in ("f", "g"):
        with pytest.raises(StreamNotFound):
            await store.head(path)


async def test_fork_of_missing_source(store: Store) -> None:
    with pytest.raises(StreamNotFound):
        await create(store, "f", fork=ForkSpec(source="nope", offset=None))


async def test_fork_content_type_must_match_source(store: Store) -> None:
    await create(store, "src", b"abc", content_type="text/plain")
    with pytest.raises(StreamExists):
        await create(store, "f", content_type=JSON, fork=ForkSpec(source="src", offset=None))


async def test_fork_inherits_expiry_and_recreate_is_idempotent(store: Store) -> None:
    await create(store, "src", b"abc", expiry=Expiry(ttl_seconds=600))
    fork = ForkSpec(source="src", offset=2)
    first = await create(store, "f", content_type=None, fork=fork)
    assert first.info.expiry == Expiry(ttl_seconds=600)
    again = await create(store, "f", content_type=None, fork=fork)
    assert not again.created
    assert again.info.stream_id == first.info.stream_id
    with pytest.raises(StreamExists):
        await create(store, "f", content_type=None, fork=ForkSpec(source="src", offset=1))


async def test_deleting_a_forked_source_is_a_soft_delete(store: Store) -> None:
    await create(store, "src", b"abc")
    await create(store, "f", fork=ForkSpec(source="src", offset=None))
    await store.delete("src")
    with pytest.raises(StreamGone):
        await store.read("src", Sentinel.BEGINNING, BIG)
    with pytest.raises(StreamGone):
        await store.head("src")
    with pytest.raises(StreamGone):
        await append(store, "src", b"x")
    # The path stays taken while a fork reads through it.
    with pytest.raises(StreamExists):
        await create(store, "src")
    # Nothing new can fork from it.
    with pytest.raises(StreamExists):
        await create(store, "g", fork=ForkSpec(source="src", offset=None))
    assert await content(store, "f") == b"abc"
    await append(store, "f", b"d")
    assert await content(store, "f") == b"abcd"


async def test_deleting_the_last_fork_purges_the_source(store: Store) -> None:
    await create(store, "src", b"abc")
    await create(store, "f1", fork=ForkSpec(source="src", offset=None))
    await create(store, "f2", fork=ForkSpec(source="src", offset=1))
    await store.delete("src")
    await store.delete("f1")
    # One fork left: the source is still only soft-deleted.
    with pytest.raises(StreamGone):
        await store.head("src")
    assert await content(store, "f2") == b"a"
    await store.delete("f2")
    with pytest.raises(StreamNotFound):
        await store.head("src")
    result = await create(store, "src", b"new")
    assert result.created
    assert await content(store, "src") == b"new"


async def test_cascade_purge_through_a_chain(store: Store) -> None:
    await create(store, "a", b"1")
    await create(store, "b", fork=ForkSpec(source="a", offset=None))
    await create(store, "c", fork=ForkSpec(source="b", offset=None))
    await store.delete("a")
    await store.delete("b")
    assert await content(store, "c") == b"1"
    await store.delete("c")
    for path in ("a", "b", "c"):
        with pytest.raises(StreamNotFound):
            await store.head(path)
        assert (await create(store, path)).created


# -- limits ------------------------------------------------------------------


async def test_append_over_stream_limit_appends_nothing(store: Store) -> None:
    await create(store, "s", b"x" * (MAX_STREAM_BYTES - 2))
    with pytest.raises(PayloadTooLarge):
        await append(store, "s", b"abc")
    assert (await store.head("s")).tail == MAX_STREAM_BYTES - 2
    await append(store, "s", b"ab")
    assert (await store.head("s")).tail == MAX_STREAM_BYTES


async def test_json_batch_over_limit_appends_no_message(store: Store) -> None:
    await create(store, "j", b"1" * (MAX_STREAM_BYTES - 10), content_type=JSON)
    with pytest.raises(PayloadTooLarge):
        await append(store, "j", b"1", b"2" * 20, content_type=JSON)
    assert len(await read_all(store, "j")) == 1


async def test_create_over_limit_creates_nothing(store: Store) -> None:
    with pytest.raises(PayloadTooLarge):
        await create(store, "s", b"x" * (MAX_STREAM_BYTES + 1))
    with pytest.raises(StreamNotFound):
        await store.head("s")


async def test_the_limit_counts_retained_bytes_not_lifetime_bytes(store: Store) -> None:
    # Streams live for months: a snapshot frees room, however much was ever written.
    piece = b"x" * (MAX_STREAM_BYTES // 4)
    await create(store, "s")
    for round_ in range(6):
        for _ in range(4):
            await append(store, "s", piece)
        with pytest.raises(PayloadTooLarge):
            await append(store, "s", b"y")
        tail = (await store.head("s")).tail
        assert tail == (round_ + 1) * 4 * len(piece)
        await store.publish_snapshot("s", tail, BYTES, b"state")
        head = await store.head("s")
        assert (head.earliest_offset, head.retained_bytes) == (tail, 0)
    assert (await store.head("s")).tail == 6 * MAX_STREAM_BYTES


async def test_a_fork_retains_what_it_inherits_since_its_sources_snapshot(store: Store) -> None:
    await create(store, "src")
    await append(store, "src", b"a" * (MAX_STREAM_BYTES - 100))
    await store.publish_snapshot("src", MAX_STREAM_BYTES - 100, BYTES, b"state")
    await append(store, "src", b"b" * 1000)
    # The fork inherits 1000 retained bytes, not the source's whole history.
    await create(
        store, "f", b"c" * (MAX_STREAM_BYTES - 1000), fork=ForkSpec(source="src", offset=None)
    )
    with pytest.raises(PayloadTooLarge):
        await append(store, "f", b"d")
    with pytest.raises(PayloadTooLarge):
        await create(
            store, "g", b"c" * (MAX_STREAM_BYTES - 999), fork=ForkSpec(source="src", offset=None)
        )


# -- concurrency -------------------------------------------------------------


async def test_concurrent_appends_never_interleave(store: Store) -> None:
    await create(store, "s")
    pieces = [bytes([ord("a") + i]) * (i + 1) for i in range(26)]
    await asyncio.gather(*(append(store, "s", piece) for piece in pieces))
    data = await content(store, "s")
    runs = [bytes(group) for _, group in itertools.groupby(data)]
    assert sorted(runs) == sorted(pieces)
    assert (await store.head("s")).tail == len(data)


async def test_pipelined_producer_appends_are_applied_in_order(store: Store) -> None:
    await create(store, "s")
    results = await asyncio.gather(
        *(append(store, "s", bytes([ord("a") + seq]), producer=("p", 0, seq)) for seq in range(20))
    )
    assert all(result.outcome is AppendOutcome.APPENDED for result in results)
    assert await content(store, "s") == bytes(range(ord("a"), ord("a") + 20))


# -- live notification -------------------------------------------------------


async def _wakes(store: Store, path: str, change: object) -> bool:
    event = store.live.next_change(path)
    waiter = asyncio.create_task(store.live.wait(event, 5.0))
    await asyncio.sleep(0)
    assert not waiter.done()
    await change  # type: ignore[misc]
    return await asyncio.wait_for(waiter, 5.0)


async def test_append_wakes_a_waiter(store: Store) -> None:
    await create(store, "s")
    assert await _wakes(store, "s", append(store, "s", b"x"))


async def test_close_wakes_a_waiter(store: Store) -> None:
    await create(store, "s")
    assert await _wakes(store, "s", append(store, "s", close=True))


async def test_delete_wakes_a_waiter(store: Store) -> None:
    await create(store, "s")
    assert await _wakes(store, "s", store.delete("s"))


async def test_waiter_times_out_without_change(store: Store) -> None:
    await create(store, "s")
    await create(store, "other")
    event = store.live.next_change("s")
    waiter = asyncio.create_task(store.live.wait(event, 0.05))
    await append(store, "other", b"x")
    assert await waiter is False


# -- whole-message reads -----------------------------------------------------


async def test_read_messages_returns_byte_appends_whole(store: Store) -> None:
    await create(store, "s", b"ab")
    await append(store, "s", b"cde")
    await append(store, "s", b"f")
    everything = await store.read_messages("s", 0, BIG)
    assert everything.chunks == [b"ab", b"cde", b"f"]
    assert (everything.start, everything.next_offset) == (0, 6)
    # A page holds whole appends only: at least one, never a piece of one.
    assert (await store.read_messages("s", 0, 1)).chunks == [b"ab"]
    assert (await store.read_messages("s", 2, 1)).chunks == [b"cde"]
    assert (await store.read_messages("s", 2, 4)).chunks == [b"cde", b"f"]
    assert (await store.read_messages("s", 6, BIG)).chunks == []
    with pytest.raises(InvalidOffset):
        await store.read_messages("s", 3, BIG)


async def test_read_messages_of_json_keeps_message_boundaries(store: Store) -> None:
    await create(store, "j", b"1", b"22", content_type=JSON)
    await append(store, "j", b"333", content_type=JSON)
    assert (await store.read_messages("j", 0, BIG)).chunks == [b"1", b"22", b"333"]
    assert (await store.read_messages("j", 1, 1)).chunks == [b"22"]


async def test_read_messages_through_a_fork_ends_at_the_fork_offset(store: Store) -> None:
    await create(store, "src", b"abc")
    await append(store, "src", b"defgh")
    # The fork diverges inside the source's second append.
    await create(store, "f", fork=ForkSpec(source="src", offset=3, sub_offset=2))
    await append(store, "f", b"XY")
    assert (await store.read_messages("f", 0, BIG)).chunks == [b"abc", b"de", b"XY"]
    assert (await store.read_messages("f", 3, 1)).chunks == [b"de"]
    assert (await store.read_messages("f", 5, BIG)).chunks == [b"XY"]


# -- buckets -----------------------------------------------------------------


async def test_bucket_lifecycle(store: Store, clock: Clock) -> None:
    created = await store.create_bucket("b")
    assert created == BucketInfo(bucket_id="b", created_at=clock.now, stream_count=0)
    assert await store.get_bucket("b") == created
    with pytest.raises(BucketExists):
        await store.create_bucket("b")
    await store.delete_bucket("b")
    with pytest.raises(BucketNotFound):
        await store.get_bucket("b")
    with pytest.raises(BucketNotFound):
        await store.delete_bucket("b")
    assert (await store.create_bucket("b")).stream_count == 0


async def test_missing_bucket(store: Store) -> None:
    with pytest.raises(BucketNotFound):
        await store.get_bucket("nope")
    with pytest.raises(BucketNotFound):
        await store.list_bucket_streams("nope", prefix="", after=None, limit=10)


async def test_bucket_counts_its_live_streams_only(store: Store, clock: Clock) -> None:
    await store.create_bucket("b")
    await create(store, "b/one")
    await create(store, "b/two", expiry=Expiry(ttl_seconds=5))
    await create(store, "b/held")
    await create(store, "b/one/deeper")  # not a stream of the bucket
    await create(store, "bb/other")
    await create(store, "fork", fork=ForkSpec(source="b/held", offset=None))
    assert (await store.get_bucket("b")).stream_count == 3
    await store.delete("b/held")  # soft-deleted: a fork still reads it
    clock.now += 6  # b/two expires
    assert (await store.get_bucket("b")).stream_count == 1
    listing = await store.list_bucket_streams("b", prefix="", after=None, limit=10)
    assert [s.stream_id for s in listing.streams] == ["one"]


async def test_a_bucket_with_streams_cannot_be_deleted(store: Store) -> None:
    await store.create_bucket("b")
    await create(store, "b/s")
    with pytest.raises(BucketNotEmpty):
        await store.delete_bucket("b")
    await store.delete("b/s")
    await store.delete_bucket("b")


async def test_bucket_listing_is_sorted_and_pages_with_after(store: Store) -> None:
    await store.create_bucket("b")
    for name in ("c", "ab", "b", "a", "abc"):
        await create(store, f"b/{name}")

    async def ids(after: str | None, limit: int, prefix: str = "") -> tuple[list[str], bool]:
        listing = await store.list_bucket_streams("b", prefix=prefix, after=after, limit=limit)
        assert listing.next_cursor == (listing.streams[-1].stream_id if listing.has_more else None)
        return [s.stream_id for s in listing.streams], listing.has_more

    assert await ids(None, 10) == (["a", "ab", "abc", "b", "c"], False)
    assert await ids(None, 2) == (["a", "ab"], True)
    assert await ids("ab", 2) == (["abc", "b"], True)
    assert await ids("b", 2) == (["c"], False)
    assert await ids("c", 2) == ([], False)
    assert await ids(None, 5) == (["a", "ab", "abc", "b", "c"], False)
    # ``after`` need not name a stream.
    assert await ids("aa", 10) == (["ab", "abc", "b", "c"], False)
    assert await ids(None, 10, prefix="ab") == (["ab", "abc"], False)
    assert await ids(None, 1, prefix="ab") == (["ab"], True)
    assert await ids("ab", 1, prefix="ab") == (["abc"], False)
    assert await ids(None, 10, prefix="x") == ([], False)


async def test_bucket_listing_describes_each_stream(store: Store, clock: Clock) -> None:
    await store.create_bucket("b")
    created_at = clock.now
    await create(store, "b/s", b"abc", content_type="text/plain")
    clock.now += 5
    await append(store, "b/s", b"de", content_type="text/plain", close=True)
    listing = await store.list_bucket_streams("b", prefix="", after=None, limit=10)
    assert listing.streams == [
        StreamSummary(
            stream_id="s",
            closed=True,
            content_type="text/plain",
            tail=5,
            created_at=created_at,
            last_write_at=created_at + 5,
        )
    ]


# -- last write --------------------------------------------------------------


async def test_last_write_is_the_last_append_that_wrote_data(store: Store, clock: Clock) -> None:
    created_at = clock.now
    assert (await create(store, "s", b"a")).info.last_write_at == created_at
    clock.now += 10
    await store.read("s", Sentinel.BEGINNING, BIG)
    assert (await store.head("s")).last_write_at == created_at
    await append(store, "s", b"b")
    clock.now += 10
    await append(store, "s", close=True)  # writes no data
    assert (await store.head("s")).last_write_at == created_at + 10


# -- snapshots and retention -------------------------------------------------


async def _three_appends(store: Store, path: str = "s") -> None:
    await create(store, path, b"aaa")
    await append(store, path, b"bbb")
    await append(store, path, b"ccc")


async def test_snapshot_moves_the_earliest_offset(store: Store, clock: Clock) -> None:
    await _three_appends(store)
    info = await store.publish_snapshot("s", 6, JSON, b'{"state":6}')
    assert info == SnapshotInfo(offset=6, content_type=JSON, size=11, created_at=clock.now)
    head = await store.head("s")
    assert (head.earliest_offset, head.snapshot, head.tail) == (6, info, 9)
    assert await store.read_snapshot("s", 6) == (info, b'{"state":6}')
    for offset in (Sentinel.BEGINNING, 0, 3, 5):
        with pytest.raises(OffsetGone):
            await store.read("s", offset, BIG)
    with pytest.raises(OffsetGone):
        await store.read_messages("s", 3, BIG)
    assert b"".join((await store.read("s", 6, BIG)).chunks) == b"ccc"
    assert b"".join((await store.read("s", 7, BIG)).chunks) == b"cc"
    assert (await store.read_messages("s", 6, BIG)).chunks == [b"ccc"]
    # Appends go on as before.
    await append(store, "s", b"ddd")
    assert b"".join((await store.read("s", 6, BIG)).chunks) == b"cccddd"


async def test_snapshot_of_a_json_stream(store: Store) -> None:
    await create(store, "j", b"1", b"22", b"333", content_type=JSON)
    await store.publish_snapshot("j", 3, JSON, b"[1,22]")
    assert (await store.read("j", 3, BIG)).chunks == [b"333"]
    with pytest.raises(InvalidOffset):
        await store.publish_snapshot("j", 4, JSON, b"{}")
    with pytest.raises(OffsetGone):
        await store.read("j", 1, BIG)


async def test_publish_snapshot_refusals(store: Store) -> None:
    await _three_appends(store)
    with pytest.raises(SnapshotConflict):
        await store.publish_snapshot("s", 10, BYTES, b"x")
    with pytest.raises(InvalidOffset):
        await store.publish_snapshot("s", 4, BYTES, b"x")
    with pytest.raises(PayloadTooLarge):
        await store.publish_snapshot("s", 3, BYTES, b"x" * (MAX_STREAM_BYTES + 1))
    with pytest.raises(StreamNotFound):
        await store.publish_snapshot("nope", 0, BYTES, b"x")
    # Nothing above changed the stream.
    head = await store.head("s")
    assert (head.earliest_offset, head.snapshot) == (0, None)
    await store.publish_snapshot("s", 6, BYTES, b"x")
    with pytest.raises(OffsetGone):
        await store.publish_snapshot("s", 3, BYTES, b"x")


async def test_snapshots_at_the_start_and_at_the_tail(store: Store) -> None:
    await _three_appends(store)
    await store.publish_snapshot("s", 0, BYTES, b"")
    assert await store.read_snapshot("s", 0) == ((await store.head("s")).snapshot, b"")
    assert await content(store, "s") == b"aaabbbccc"
    await store.publish_snapshot("s", 9, BYTES, b"all")
    result = await store.read("s", 9, BIG)
    assert (result.chunks, result.up_to_date) == ([], True)
    await append(store, "s", b"d")
    assert (await store.read_messages("s", 9, BIG)).chunks == [b"d"]


async def test_a_new_snapshot_replaces_the_previous_one(store: Store) -> None:
    await _three_appends(store)
    await store.publish_snapshot("s", 3, BYTES, b"old")
    newer = await store.publish_snapshot("s", 6, "text/plain", b"new")
    assert (await store.head("s")).snapshot == newer
    assert await store.read_snapshot("s", 6) == (newer, b"new")
    with pytest.raises(SnapshotNotFound):
        await store.read_snapshot("s", 3)
    with pytest.raises(SnapshotNotFound):
        await store.delete_snapshot("s", 3)
    # The latest one is what bootstrap starts from: it stays.
    with pytest.raises(SnapshotConflict):
        await store.delete_snapshot("s", 6)
    assert await store.read_snapshot("s", 6) == (newer, b"new")


async def test_snapshot_lookups_without_a_snapshot(store: Store) -> None:
    await _three_appends(store)
    with pytest.raises(SnapshotNotFound):
        await store.read_snapshot("s", 0)
    with pytest.raises(SnapshotNotFound):
        await store.delete_snapshot("s", 0)
    with pytest.raises(StreamNotFound):
        await store.read_snapshot("nope", 0)


async def test_a_recreated_stream_has_no_snapshot(store: Store) -> None:
    await _three_appends(store)
    await store.publish_snapshot("s", 6, BYTES, b"snap")
    await store.delete("s")
    await create(store, "s", b"new")
    head = await store.head("s")
    assert (head.snapshot, head.earliest_offset) == (None, 0)
    with pytest.raises(SnapshotNotFound):
        await store.read_snapshot("s", 6)
    assert await content(store, "s") == b"new"


async def test_forks_keep_reading_what_a_source_snapshot_retired(store: Store) -> None:
    await _three_appends(store, "src")
    await create(store, "f", fork=ForkSpec(source="src", offset=6))
    await append(store, "f", b"F")
    await create(store, "g", fork=ForkSpec(source="f", offset=3))
    await store.publish_snapshot("src", 9, BYTES, b"snap")
    with pytest.raises(OffsetGone):
        await store.read("src", 0, BIG)
    assert await content(store, "f") == b"aaabbbF"
    assert (await store.read_messages("f", 0, BIG)).chunks == [b"aaa", b"bbb", b"F"]
    assert await content(store, "g") == b"aaa"
    # A later snapshot of the source still spares what the forks read.
    await append(store, "src", b"ddd")
    await store.publish_snapshot("src", 12, BYTES, b"snap2")
    assert await content(store, "f") == b"aaabbbF"
    assert await content(store, "g") == b"aaa"
    # Once the fork has a snapshot of its own, it reads from there.
    await store.publish_snapshot("f", 3, BYTES, b"fsnap")
    with pytest.raises(OffsetGone):
        await store.read("f", 0, BIG)
    assert b"".join((await store.read("f", 3, BIG)).chunks) == b"bbbF"
    assert await content(store, "g") == b"aaa"


async def test_a_deleted_source_with_a_snapshot_still_serves_its_forks(store: Store) -> None:
    await _three_appends(store, "src")
    await create(store, "f", fork=ForkSpec(source="src", offset=None))
    await store.publish_snapshot("src", 6, BYTES, b"snap")
    await store.delete("src")
    assert await content(store, "f") == b"aaabbbccc"
    await store.delete("f")
    with pytest.raises(StreamNotFound):
        await store.head("src")


async def test_a_fork_of_a_snapshotted_source_starts_at_its_earliest_offset(
    store: Store,
) -> None:
    await _three_appends(store, "src")
    await store.publish_snapshot("src", 6, BYTES, b"snap")
    with pytest.raises(OffsetGone):
        await create(store, "early", fork=ForkSpec(source="src", offset=3))
    fork = await create(store, "f", fork=ForkSpec(source="src", offset=None))
    assert (fork.info.earliest_offset, fork.info.tail) == (6, 9)
    with pytest.raises(OffsetGone):
        await store.read("f", 0, BIG)
    assert b"".join((await store.read("f", 6, BIG)).chunks) == b"ccc"
    await append(store, "f", b"F")
    assert (await store.read_messages("f", 6, BIG)).chunks == [b"ccc", b"F"]
