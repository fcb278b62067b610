"""The append decision every backend shares: validation order and outcomes."""

from __future__ import annotations

import pytest
from ds_server.stores._producers import ProducerState
from ds_server.stores._rules import (
    StreamState,
    apply_decision,
    decide_append,
    matches_existing,
    same_content_type,
)
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    CreateRequest,
    Expiry,
    ForkSpec,
    ProducerClaim,
)
from ds_server.stores.errors import (
    ContentTypeMismatch,
    InvalidProducerState,
    PayloadTooLarge,
    ProducerFenced,
    SequenceConflict,
    SequenceGap,
    StreamClosed,
)

LIMIT = 1000


def state(**overrides: object) -> StreamState:
    values: dict[str, object] = {
        "stream_id": "s1",
        "path": "a",
        "content_type": "text/plain",
        "created_at": 0.0,
        "expiry": Expiry(),
        "last_access": 0.0,
        "tail": 10,
    }
    values.update(overrides)
    return StreamState(**values)  # type: ignore[arg-type]


def append(
    *messages: bytes,
    content_type: str | None = "text/plain",
    close: bool = False,
    seq: str | None = None,
    writer: str = "",
    producer: tuple[str, int, int] | None = None,
) -> AppendRequest:
    return AppendRequest(
        path="a",
        content_type=content_type if messages else None,
        messages=messages,
        close=close,
        stream_seq=seq,
        writer=writer,
        producer=ProducerClaim(*producer) if producer else None,
    )


def decide(st: StreamState, request: AppendRequest) -> AppendOutcome:
    decision = decide_append(st, request, LIMIT)
    apply_decision(st, request, decision)
    return decision.outcome


# -- plain appends -----------------------------------------------------------


def test_append_decision_and_apply() -> None:
    st = state()
    request = append(b"hello", b"!")
    decision = decide_append(st, request, LIMIT)
    assert decision.outcome is AppendOutcome.APPENDED
    assert decision.messages == (b"hello", b"!")
    assert decision.size == 6
    assert st.tail == 10  # deciding changes nothing
    apply_decision(st, request, decision)
    assert st.tail == 16
    assert not st.closed


def test_append_and_close() -> None:
    st = state()
    assert decide(st, append(b"x", close=True)) is AppendOutcome.APPENDED
    assert st.closed
    assert st.tail == 11


def test_close_only_on_open_stream() -> None:
    st = state()
    assert decide(st, append(close=True)) is AppendOutcome.CLOSED
    assert st.closed
    assert st.tail == 10


def test_close_only_on_closed_stream_is_closed_outcome() -> None:
    st = state(closed=True)
    decision = decide_append(st, append(close=True), LIMIT)
    assert decision.outcome is AppendOutcome.CLOSED
    assert not decision.messages


@pytest.mark.parametrize("close", [False, True])
def test_data_on_closed_stream_raises_with_tail(close: bool) -> None:
    with pytest.raises(StreamClosed) as info:
        decide_append(state(closed=True, tail=42), append(b"x", close=close), LIMIT)
    assert info.value.tail == 42


# -- content type ------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/plain", "TEXT/PLAIN", "text/plain; charset=utf-8"])
def test_content_type_matches_on_media_type(content_type: str) -> None:
    decide_append(state(), append(b"x", content_type=content_type), LIMIT)


@pytest.mark.parametrize("content_type", ["application/json", "text/html", None])
def test_content_type_mismatch(content_type: str | None) -> None:
    request = AppendRequest(path="a", content_type=content_type, messages=(b"x",))
    with pytest.raises(ContentTypeMismatch):
        decide_append(state(), request, LIMIT)


def test_closed_is_reported_before_content_type_mismatch() -> None:
    with pytest.raises(StreamClosed):
        decide_append(state(closed=True), append(b"x", content_type="image/png"), LIMIT)


def test_close_only_ignores_content_type() -> None:
    request = AppendRequest(path="a", content_type="image/png", messages=(), close=True)
    assert decide_append(state(), request, LIMIT).outcome is AppendOutcome.CLOSED


# -- Stream-Seq --------------------------------------------------------------


def test_stream_seq_must_strictly_increase() -> None:
    st = state()
    decide(st, append(b"x", seq="b"))
    with pytest.raises(SequenceConflict):
        decide_append(st, append(b"x", seq="b"), LIMIT)
    with pytest.raises(SequenceConflict):
        decide_append(st, append(b"x", seq="a"), LIMIT)
    decide(st, append(b"x", seq="c"))


def test_stream_seq_is_lexicographic_not_numeric() -> None:
    st = state()
    decide(st, append(b"x", seq="9"))
    # Numerically larger, lexicographically smaller.
    with pytest.raises(SequenceConflict):
        decide_append(st, append(b"x", seq="10"), LIMIT)
    decide(st, append(b"x", seq="90"))


def test_stream_seq_is_byte_wise() -> None:
    st = state()
    # "Z" (0x5A) < "a" (0x61) byte-wise, whatever a locale might say.
    decide(st, append(b"x", seq="Z"))
    decide(st, append(b"x", seq="a"))
    # U+00E9 encodes as 0xC3 0xA9, above every ASCII byte.
    decide(st, append(b"x", seq="\u00e9"))
    with pytest.raises(SequenceConflict):
        decide_append(st, append(b"x", seq="z"), LIMIT)


def test_stream_seq_is_scoped_per_writer() -> None:
    st = state()
    decide(st, append(b"x", seq="5", writer="alice"))
    decide(st, append(b"x", seq="1", writer="bob"))
    with pytest.raises(SequenceConflict):
        decide_append(st, append(b"x", seq="4", writer="alice"), LIMIT)
    decide(st, append(b"x", seq="2", writer="bob"))


def test_closed_is_reported_before_stream_seq_regression() -> None:
    st = state()
    decide(st, append(b"x", seq="5"))
    st.closed = True
    with pytest.raises(StreamClosed):
        decide_append(st, append(b"x", seq="1"), LIMIT)


def test_a_content_type_mismatch_says_what_the_stream_has_and_what_was_sent() -> None:
    request = AppendRequest(path="a", content_type="image/png", messages=(b"x",))
    with pytest.raises(ContentTypeMismatch) as raised:
        decide_append(state(), request, LIMIT)
    assert raised.value.reason == (
        "the stream's content type is 'text/plain'; the request sent 'image/png'"
    )


def test_content_type_is_reported_before_stream_seq_regression() -> None:
    st = state()
    decide(st, append(b"x", seq="5"))
    with pytest.raises(ContentTypeMismatch):
        decide_append(st, append(b"x", seq="1", content_type="image/png"), LIMIT)


# -- size limit --------------------------------------------------------------


def test_size_limit() -> None:
    st = state(tail=LIMIT - 3)
    decide_append(st, append(b"abc"), LIMIT)
    with pytest.raises(PayloadTooLarge):
        decide_append(st, append(b"abcd"), LIMIT)
    with pytest.raises(PayloadTooLarge):
        decide_append(st, append(b"ab", b"cd"), LIMIT)


def test_rejected_append_changes_nothing() -> None:
    st = state(tail=LIMIT - 1)
    with pytest.raises(PayloadTooLarge):
        decide_append(st, append(b"ab", seq="1", producer=("p", 0, 0)), LIMIT)
    assert st.tail == LIMIT - 1
    assert st.producers == {}
    assert st.writer_seqs == {}


# -- producers ---------------------------------------------------------------


def test_producer_append_records_state() -> None:
    st = state()
    decision = decide_append(st, append(b"x", producer=("p", 0, 0)), LIMIT)
    assert decision.producer == ProducerClaim("p", 0, 0)
    apply_decision(st, append(b"x", producer=("p", 0, 0)), decision)
    assert st.producers["p"] == ProducerState(epoch=0, last_seq=0)


def test_producer_duplicate_writes_nothing_and_echoes_state() -> None:
    st = state()
    decide(st, append(b"x", producer=("p", 0, 0)))
    decide(st, append(b"y", producer=("p", 0, 1)))
    tail = st.tail
    decision = decide_append(st, append(b"x", producer=("p", 0, 0)), LIMIT)
    assert decision.outcome is AppendOutcome.DUPLICATE
    assert decision.messages == ()
    assert decision.size == 0
    assert decision.echo == ProducerState(epoch=0, last_seq=1)
    apply_decision(st, append(b"x", producer=("p", 0, 0)), decision)
    assert st.tail == tail


def test_producer_gap_and_new_epoch_rules() -> None:
    st = state()
    with pytest.raises(SequenceGap):
        decide_append(st, append(b"x", producer=("p", 0, 1)), LIMIT)
    decide(st, append(b"x", producer=("p", 0, 0)))
    with pytest.raises(SequenceGap) as info:
        decide_append(st, append(b"x", producer=("p", 0, 5)), LIMIT)
    assert (info.value.expected, info.value.received) == (1, 5)
    with pytest.raises(InvalidProducerState):
        decide_append(st, append(b"x", producer=("p", 1, 1)), LIMIT)


def test_producers_are_independent() -> None:
    st = state()
    decide(st, append(b"x", producer=("p", 3, 0)))
    assert decide(st, append(b"x", producer=("q", 0, 0))) is AppendOutcome.APPENDED


def test_fencing_comes_before_closure() -> None:
    st = state()
    decide(st, append(b"x", producer=("p", 2, 0)))
    st.closed = True
    with pytest.raises(ProducerFenced) as info:
        decide_append(st, append(b"x", producer=("p", 1, 0)), LIMIT)
    assert info.value.current_epoch == 2


def test_duplicate_comes_before_closed_check() -> None:
    st = state()
    decide(st, append(b"final", close=True, producer=("p", 0, 0)))
    assert st.closed
    # A retry of the closing append is a deduplicated success, not 409.
    decision = decide_append(st, append(b"final", close=True, producer=("p", 0, 0)), LIMIT)
    assert decision.outcome is AppendOutcome.DUPLICATE


def test_new_producer_seq_on_closed_stream_is_closed() -> None:
    st = state()
    decide(st, append(b"final", close=True, producer=("p", 0, 0)))
    with pytest.raises(StreamClosed):
        decide_append(st, append(b"more", producer=("p", 0, 1)), LIMIT)


def test_gap_comes_before_closure() -> None:
    st = state()
    decide(st, append(b"final", close=True, producer=("p", 0, 0)))
    with pytest.raises(SequenceGap):
        decide_append(st, append(b"more", producer=("p", 0, 5)), LIMIT)


def test_close_records_the_closing_producer() -> None:
    st = state()
    decide(st, append(b"final", close=True, producer=("p", 0, 0)))
    assert st.closed_by == ProducerClaim("p", 0, 0)


# -- stream state and re-create matching ------------------------------------


def test_expiry_by_ttl_slides_with_touch() -> None:
    st = state(expiry=Expiry(ttl_seconds=10), last_access=100.0)
    assert st.expires_at() == 110.0
    assert not st.is_expired(109.9)
    assert st.is_expired(110.0)
    st.touch(105.0)
    assert not st.is_expired(110.0)


def test_expiry_at_fixed_instant() -> None:
    st = state(expiry=Expiry(expires_at=50.0), last_access=10.0)
    st.touch(40.0)
    assert st.expires_at() == 50.0
    assert st.is_expired(50.0)


def test_no_expiry() -> None:
    assert state().expires_at() is None
    assert not state().is_expired(1e12)


def test_info_reflects_state() -> None:
    info = state(tail=7, closed=True, forked_from="src", fork_offset=3).info()
    assert (info.tail, info.closed, info.forked_from, info.fork_offset) == (7, True, "src", 3)
    assert state().info().fork_offset is None


def test_same_content_type() -> None:
    assert same_content_type("Text/Plain; charset=utf-8", "text/plain")
    assert not same_content_type("text/plain", "text/html")


def _create(**overrides: object) -> CreateRequest:
    values: dict[str, object] = {"path": "a", "content_type": "text/plain"}
    values.update(overrides)
    return CreateRequest(**values)  # type: ignore[arg-type]


def test_matches_existing() -> None:
    st = state(expiry=Expiry(ttl_seconds=60))
    assert matches_existing(st, _create(), Expiry(ttl_seconds=60))
    assert matches_existing(st, _create(content_type=None), Expiry(ttl_seconds=60))
    assert not matches_existing(st, _create(content_type="text/html"), Expiry(ttl_seconds=60))
    assert not matches_existing(st, _create(), Expiry(ttl_seconds=61))
    assert not matches_existing(st, _create(closed=True), Expiry(ttl_seconds=60))
    assert not matches_existing(
        st, _create(fork=ForkSpec(source="b", offset=None)), Expiry(ttl_seconds=60)
    )


def test_matches_existing_fork() -> None:
    st = state(forked_from="src", fork_offset=4, fork_requested_offset=4)
    fork = ForkSpec(source="src", offset=4)
    assert matches_existing(st, _create(fork=fork), Expiry())
    assert matches_existing(st, _create(fork=ForkSpec(source="src", offset=None)), Expiry())
    assert not matches_existing(st, _create(fork=ForkSpec(source="src", offset=2)), Expiry())
    assert not matches_existing(st, _create(fork=ForkSpec(source="other", offset=4)), Expiry())
    assert not matches_existing(st, _create(), Expiry())
