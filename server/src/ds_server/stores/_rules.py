"""Protocol rules every backend applies the same way: stream state and the append decision.

A backend keeps a :class:`StreamState` per stream (persisting it however it
likes) and calls :func:`decide_append` under its per-stream serialization;
the decision says exactly what to write, or raises the domain error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ds_server.protocol.json_mode import is_json_content_type, media_type
from ds_server.stores._producers import ProducerState, Verdict, accepted, check_claim
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    CreateRequest,
    Expiry,
    ProducerClaim,
    SnapshotInfo,
    StreamInfo,
)
from ds_server.stores.errors import (
    ContentTypeMismatch,
    PayloadTooLarge,
    SequenceConflict,
    StreamClosed,
)


@dataclass(slots=True)
class StreamState:
    """Everything a stream knows about itself except its bytes."""

    stream_id: str
    path: str
    content_type: str
    created_at: float
    expiry: Expiry
    last_access: float
    tail: int
    fork_offset: int = 0
    forked_from: str | None = None
    forked_from_id: str | None = None
    # What the fork's creator asked for, to judge an idempotent re-create.
    fork_requested_offset: int | None = None
    fork_sub_offset: int = 0
    closed: bool = False
    closed_by: ProducerClaim | None = None
    producers: dict[str, ProducerState] = field(default_factory=dict)
    writer_seqs: dict[str, str] = field(default_factory=dict)
    # Un-purged forks whose source is this stream; data must outlive them.
    fork_refs: int = 0
    soft_deleted: bool = False
    # Retention: reads before earliest_offset are gone; the snapshot covers them.
    earliest_offset: int = 0
    snapshot: SnapshotInfo | None = None
    last_write: float = 0.0
    # Bumped by every durable change of the state (append, close, soft delete;
    # not snapshots, which only touch their own fields): what a backend shared
    # by several processes checks to refuse a write decided on a stale state.
    version: int = 0
    _is_json: bool = field(init=False, repr=False, compare=False)

    @property
    def is_json(self) -> bool:
        return self._is_json

    def __post_init__(self) -> None:
        # The content type never changes; parse it once.
        self._is_json = is_json_content_type(self.content_type)

    @property
    def retained_bytes(self) -> int:
        """Tail minus the earliest retained offset: what the per-stream limit counts.

        O(1), from the state every backend keeps in memory; what a stream wrote
        before its latest snapshot is not counted, however long it has lived.
        """
        return self.tail - self.earliest_offset

    def expires_at(self) -> float | None:
        """When the stream expires if nobody touches it again."""
        if self.expiry.expires_at is not None:
            return self.expiry.expires_at
        if self.expiry.ttl_seconds is not None:
            return self.last_access + self.expiry.ttl_seconds
        return None

    def is_expired(self, now: float) -> bool:
        moment = self.expires_at()
        return moment is not None and now >= moment

    def touch(self, now: float) -> None:
        """Slide a TTL window forward (reads and writes do; HEAD does not)."""
        self.last_access = now

    def info(self) -> StreamInfo:
        return StreamInfo(
            stream_id=self.stream_id,
            path=self.path,
            content_type=self.content_type,
            tail=self.tail,
            closed=self.closed,
            expiry=self.expiry,
            expires_at=self.expires_at(),
            created_at=self.created_at,
            forked_from=self.forked_from,
            fork_offset=self.fork_offset if self.forked_from is not None else None,
            earliest_offset=self.earliest_offset,
            snapshot=self.snapshot,
            last_write_at=self.last_write or self.created_at,
        )


def with_tail(info: StreamInfo, tail: int) -> StreamInfo:
    """``info`` as readers see it while writes up to its tail are still in flight."""
    return replace(info, tail=tail, closed=False)


def same_content_type(a: str, b: str) -> bool:
    """Content types match on their media type, case-insensitively."""
    return media_type(a) == media_type(b)


def matches_existing(state: StreamState, request: CreateRequest, expiry: Expiry) -> bool:
    """True when an idempotent re-create asks for exactly the existing configuration."""
    if request.content_type is not None and not same_content_type(
        state.content_type, request.content_type
    ):
        return False
    if state.expiry != expiry or state.closed != request.closed:
        return False
    fork = request.fork
    if fork is None:
        return state.forked_from is None
    if state.forked_from != fork.source or state.fork_sub_offset != fork.sub_offset:
        return False
    return fork.offset is None or fork.offset == state.fork_requested_offset


# A plain class for speed, as base.AppendRequest is. Treat as immutable.
class AppendDecision:
    """What an append will do: write ``messages`` (maybe none), maybe close, update producer."""

    __slots__ = ("close", "echo", "messages", "outcome", "producer", "size")

    def __init__(
        self,
        outcome: AppendOutcome,
        messages: tuple[bytes, ...] = (),
        size: int = 0,  # bytes in messages
        close: bool = False,
        producer: ProducerClaim | None = None,
        # For duplicates: the producer state to echo.
        echo: ProducerState | None = None,
    ) -> None:
        self.outcome = outcome
        self.messages = messages
        self.size = size
        self.close = close
        self.producer = producer
        self.echo = echo


def decide_append(
    state: StreamState, request: AppendRequest, max_retained_bytes: int
) -> AppendDecision:
    """Apply the protocol's validation order to one append.

    Producer fencing comes first (a zombie learns it is fenced even on a
    closed stream), then duplicates, closure, content type, Stream-Seq and
    size limits. Raises the matching domain error; changes nothing.
    """
    claim = request.producer
    if claim is not None:
        current = state.producers.get(claim.producer_id)
        if check_claim(current, claim) is Verdict.DUPLICATE:
            return AppendDecision(outcome=AppendOutcome.DUPLICATE, echo=current)
    if state.closed:
        if request.close and not request.messages:
            return AppendDecision(outcome=AppendOutcome.CLOSED)
        raise StreamClosed(state.tail)
    if request.messages and (
        request.content_type is None
        or not same_content_type(state.content_type, request.content_type)
    ):
        raise ContentTypeMismatch(state.content_type, request.content_type)
    if request.stream_seq is not None:
        last = state.writer_seqs.get(request.writer)
        if last is not None and request.stream_seq.encode() <= last.encode():
            raise SequenceConflict()
    size = sum(map(len, request.messages))
    if state.tail - state.earliest_offset + size > max_retained_bytes:
        raise over_retained_limit(max_retained_bytes)
    outcome = AppendOutcome.APPENDED if request.messages else AppendOutcome.CLOSED
    return AppendDecision(
        outcome=outcome, messages=request.messages, size=size, close=request.close, producer=claim
    )


def over_retained_limit(max_retained_bytes: int) -> PayloadTooLarge:
    """The 413 of a write that would make a stream retain more than the limit."""
    return PayloadTooLarge(
        f"stream would retain more than {max_retained_bytes} bytes since its latest snapshot; "
        "a snapshot frees room"
    )


def apply_decision(state: StreamState, request: AppendRequest, decision: AppendDecision) -> None:
    """Update the state after the decision's bytes were written."""
    state.tail += decision.size
    if decision.producer is not None:
        state.producers[decision.producer.producer_id] = accepted(decision.producer)
    if request.stream_seq is not None and decision.outcome is not AppendOutcome.DUPLICATE:
        state.writer_seqs[request.writer] = request.stream_seq
    if decision.close:
        state.closed = True
        state.closed_by = decision.producer
    if decision.messages:
        state.last_write = state.last_access
    state.version += 1
