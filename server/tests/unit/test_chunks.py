"""The read rule every backend shares: chunks cut to the range and the byte budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._chunks import ChunkCutter, cut_chunks
from ds_server.stores.persistence import Chunk
from hypothesis import given
from hypothesis import strategies as st

if TYPE_CHECKING:
    from collections.abc import Iterator


def whole_pieces(messages: list[bytes], at: int = 0) -> list[tuple[int, bool, bytes]]:
    out = []
    for message in messages:
        out.append((at, False, message))
        at += len(message)
    return out


def split_pieces(messages: list[bytes], size: int) -> list[tuple[int, bool, bytes]]:
    """Each message stored as pieces of at most ``size`` bytes, the later ones continued."""
    out = []
    at = 0
    for message in messages:
        for cut in range(0, len(message), size):
            out.append((at + cut, cut > 0, message[cut : cut + size]))
        at += len(message)
    return out


def expected(
    messages: list[bytes], start: int, limit: int, max_bytes: int, *, whole: bool
) -> list[Chunk]:
    """The rule written the slow way: one chunk per message overlapping the range."""
    out: list[Chunk] = []
    budget = max_bytes
    at = 0
    for message in messages:
        end = at + len(message)
        if at >= limit or budget <= 0:
            break
        if end > start:
            lo, hi = max(at, start), min(end, limit)
            if not whole:
                hi = min(hi, lo + budget)
            out.append(Chunk(lo, message[lo - at : hi - at]))
            budget -= hi - lo
        at = end
    return out


def test_a_byte_read_is_cut_at_the_budget() -> None:
    chunks = cut_chunks(whole_pieces([b"abcdef", b"ghij"]), 2, 100, 6, whole=False)
    assert chunks == [Chunk(2, b"cdef"), Chunk(6, b"gh")]


def test_a_whole_read_keeps_its_last_message_whole_and_stops_before_the_next() -> None:
    chunks = cut_chunks(whole_pieces([b"abc", b"defgh", b"ij"]), 0, 100, 4, whole=True)
    assert chunks == [Chunk(0, b"abc"), Chunk(3, b"defgh")]


def test_every_chunk_is_cut_to_the_range_even_inside_a_message() -> None:
    # A fork's limit may fall inside one of its source's messages.
    chunks = cut_chunks(whole_pieces([b"abcdef", b"ghij"]), 4, 8, 100, whole=True)
    assert chunks == [Chunk(4, b"ef"), Chunk(6, b"gh")]


def test_continued_pieces_are_joined_into_their_message() -> None:
    pieces = [(0, False, b"ab"), (2, True, b"cd"), (4, True, b"e"), (5, False, b"fg")]
    assert cut_chunks(pieces, 1, 100, 100, whole=True) == [Chunk(1, b"bcde"), Chunk(5, b"fg")]


def test_a_whole_read_finishes_a_message_past_its_budget() -> None:
    pieces = [(0, False, b"ab"), (2, True, b"cd"), (4, True, b"e"), (5, False, b"fg")]
    assert cut_chunks(pieces, 0, 100, 2, whole=True) == [Chunk(0, b"abcde")]
    assert cut_chunks(pieces, 0, 100, 2, whole=False) == [Chunk(0, b"ab")]


def test_a_continued_piece_after_a_gap_starts_a_chunk() -> None:
    # The read starts inside the second piece: nothing kept to join it to.
    pieces = [(0, False, b"ab"), (2, True, b"cd")]
    assert cut_chunks(pieces, 3, 100, 100, whole=True) == [Chunk(3, b"d")]


def test_pieces_are_taken_no_further_than_the_read_wants() -> None:
    taken: list[int] = []

    def pieces() -> Iterator[tuple[int, bool, bytes]]:
        for at in range(0, 100, 10):
            taken.append(at)
            yield (at, False, b"x" * 10)

    assert len(cut_chunks(pieces(), 0, 100, 25, whole=False)) == 3
    assert taken == [0, 10, 20, 30]  # the fourth only to learn the budget is spent


def test_span_and_keep_serve_a_backend_that_reads_only_the_span() -> None:
    # The file backend asks for the span and reads just those bytes.
    stored = {0: b"abcdef", 6: b"ghij"}
    cutter = ChunkCutter(2, 9, 100, whole=False)
    for at, data in stored.items():
        span = cutter.span(at, len(data))
        assert span is not None
        cutter.keep(at, span[0], data[span[0] : span[1]])
    assert cutter.span(10, 4) is None
    assert cutter.chunks() == [Chunk(2, b"cdef"), Chunk(6, b"ghi")]


def test_a_piece_before_the_start_gives_an_empty_span() -> None:
    cutter = ChunkCutter(8, 20, 100, whole=True)
    assert cutter.span(0, 8) == (8, 8)
    assert cutter.wants(0)


messages_st = st.lists(st.binary(min_size=1, max_size=12), max_size=8)


@given(
    messages=messages_st,
    piece=st.integers(1, 5),
    start=st.integers(0, 60),
    length=st.integers(1, 60),
    max_bytes=st.integers(1, 40),
    whole=st.booleans(),
)
def test_cutting_stored_pieces_reads_as_the_messages_would(
    messages: list[bytes], piece: int, start: int, length: int, max_bytes: int, whole: bool
) -> None:
    total = sum(map(len, messages))
    start = min(start, total)
    limit = start + length
    want = expected(messages, start, limit, max_bytes, whole=whole)
    assert cut_chunks(whole_pieces(messages), start, limit, max_bytes, whole=whole) == want
    split = cut_chunks(split_pieces(messages, piece), start, limit, max_bytes, whole=whole)
    assert split == want
