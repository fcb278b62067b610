"""The idempotent-producer state machine (protocol section 5.2.1), shared by every backend."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_server.stores.errors import InvalidProducerState, ProducerFenced, SequenceGap

if TYPE_CHECKING:
    from ds_server.stores.base import ProducerClaim


@dataclass(frozen=True, slots=True)
class ProducerState:
    """What a stream remembers of one producer: its epoch and last accepted seq."""

    epoch: int
    last_seq: int


class Verdict(enum.Enum):
    ACCEPT = "accept"
    DUPLICATE = "duplicate"


def check_claim(state: ProducerState | None, claim: ProducerClaim) -> Verdict:
    """Decide an append's fate from the producer's state, or raise why it is refused.

    Raises ProducerFenced (stale epoch), InvalidProducerState (new epoch not
    starting at 0) or SequenceGap (a skipped seq, including a first seq > 0).
    """
    if state is None:
        if claim.seq != 0:
            raise SequenceGap(expected=0, received=claim.seq)
        return Verdict.ACCEPT
    if claim.epoch < state.epoch:
        raise ProducerFenced(current_epoch=state.epoch)
    if claim.epoch > state.epoch:
        if claim.seq != 0:
            raise InvalidProducerState()
        return Verdict.ACCEPT
    if claim.seq <= state.last_seq:
        return Verdict.DUPLICATE
    if claim.seq == state.last_seq + 1:
        return Verdict.ACCEPT
    raise SequenceGap(expected=state.last_seq + 1, received=claim.seq)


def accepted(claim: ProducerClaim) -> ProducerState:
    """The producer's state after ``claim`` was accepted."""
    return ProducerState(epoch=claim.epoch, last_seq=claim.seq)
