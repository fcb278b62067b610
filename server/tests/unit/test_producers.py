"""The idempotent-producer state machine."""

from __future__ import annotations

import pytest
from ds_server.stores._producers import ProducerState, Verdict, accepted, check_claim
from ds_server.stores.base import ProducerClaim
from ds_server.stores.errors import InvalidProducerState, ProducerFenced, SequenceGap


def claim(epoch: int, seq: int, producer_id: str = "p") -> ProducerClaim:
    return ProducerClaim(producer_id=producer_id, epoch=epoch, seq=seq)


def test_first_claim_at_seq_zero_is_accepted() -> None:
    assert check_claim(None, claim(0, 0)) is Verdict.ACCEPT


def test_first_claim_may_start_at_any_epoch() -> None:
    assert check_claim(None, claim(7, 0)) is Verdict.ACCEPT


@pytest.mark.parametrize("seq", [1, 5, 2**53 - 1])
def test_first_claim_must_start_at_seq_zero(seq: int) -> None:
    with pytest.raises(SequenceGap) as info:
        check_claim(None, claim(0, seq))
    assert (info.value.expected, info.value.received) == (0, seq)


def test_next_seq_is_accepted() -> None:
    assert check_claim(ProducerState(epoch=0, last_seq=3), claim(0, 4)) is Verdict.ACCEPT


@pytest.mark.parametrize("seq", [0, 2, 3])
def test_seen_seq_is_a_duplicate(seq: int) -> None:
    assert check_claim(ProducerState(epoch=0, last_seq=3), claim(0, seq)) is Verdict.DUPLICATE


def test_gap_reports_expected_and_received() -> None:
    with pytest.raises(SequenceGap) as info:
        check_claim(ProducerState(epoch=2, last_seq=3), claim(2, 9))
    assert info.value.expected == 4
    assert info.value.received == 9


@pytest.mark.parametrize("seq", [0, 4, 100])
def test_stale_epoch_is_fenced_with_current_epoch(seq: int) -> None:
    with pytest.raises(ProducerFenced) as info:
        check_claim(ProducerState(epoch=5, last_seq=3), claim(4, seq))
    assert info.value.current_epoch == 5


def test_new_epoch_starting_at_zero_is_accepted() -> None:
    assert check_claim(ProducerState(epoch=0, last_seq=9), claim(1, 0)) is Verdict.ACCEPT
    assert check_claim(ProducerState(epoch=0, last_seq=9), claim(6, 0)) is Verdict.ACCEPT


@pytest.mark.parametrize("seq", [1, 10])
def test_new_epoch_must_start_at_zero(seq: int) -> None:
    with pytest.raises(InvalidProducerState):
        check_claim(ProducerState(epoch=0, last_seq=9), claim(1, seq))


def test_accepted_records_epoch_and_seq() -> None:
    assert accepted(claim(3, 7)) == ProducerState(epoch=3, last_seq=7)


def test_whole_lifecycle() -> None:
    state: ProducerState | None = None
    for step in (claim(0, 0), claim(0, 1), claim(0, 2)):
        assert check_claim(state, step) is Verdict.ACCEPT
        state = accepted(step)
    assert check_claim(state, claim(0, 1)) is Verdict.DUPLICATE
    # Restart: new epoch, seq back to 0; the old epoch is now a zombie.
    assert check_claim(state, claim(1, 0)) is Verdict.ACCEPT
    state = accepted(claim(1, 0))
    with pytest.raises(ProducerFenced):
        check_claim(state, claim(0, 3))
    assert check_claim(state, claim(1, 0)) is Verdict.DUPLICATE
    assert check_claim(state, claim(1, 1)) is Verdict.ACCEPT
