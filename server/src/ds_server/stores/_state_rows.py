"""Stream states to and from SQL rows, one mapping for the SQLite and Postgres backends.

Both keep a state in the same tables: ``streams`` (one row, the columns
below), ``producers``, ``writer_seqs`` and ``snapshots``. The backends differ
in placeholders, in how rows are keyed (SQLite's integer ``sid``,
Postgres's ``stream_id``) and in Postgres's extra ``version`` column, not in
what a row means; that meaning lives here, free of any connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

from ds_server.stores._producers import ProducerState
from ds_server.stores._rules import StreamState
from ds_server.stores.base import Expiry, ProducerClaim, SnapshotInfo

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

K = TypeVar("K")  # how a backend keys its rows: SQLite's sid, Postgres's stream_id

# The ``streams`` columns, in the order of ``stream_values`` and ``stream_state``.
STREAM_COLUMNS: tuple[LiteralString, ...] = (
    "stream_id",
    "path",
    "content_type",
    "created_at",
    "ttl_seconds",
    "expires_at",
    "last_access",
    "tail",
    "fork_offset",
    "forked_from",
    "forked_from_id",
    "fork_requested_offset",
    "fork_sub_offset",
    "closed",
    "closed_by_producer",
    "closed_by_epoch",
    "closed_by_seq",
    "soft_deleted",
    "earliest_offset",
    "last_write",
)
# What the completing queries select, after the key of the stream.
PRODUCER_COLUMNS: LiteralString = "producer_id, epoch, last_seq"
WRITER_SEQ_COLUMNS: LiteralString = "writer, seq"
# Everything but the blob, which only ``load_snapshot`` reads.
SNAPSHOT_COLUMNS: LiteralString = "stream_offset, content_type, size, created_at"


def stream_values(state: StreamState) -> tuple[object, ...]:
    """The ``streams`` row of ``state``, in ``STREAM_COLUMNS`` order."""
    closed_by = state.closed_by
    return (
        state.stream_id,
        state.path,
        state.content_type,
        state.created_at,
        state.expiry.ttl_seconds,
        state.expiry.expires_at,
        state.last_access,
        state.tail,
        state.fork_offset,
        state.forked_from,
        state.forked_from_id,
        state.fork_requested_offset,
        state.fork_sub_offset,
        state.closed,
        closed_by.producer_id if closed_by else None,
        closed_by.epoch if closed_by else None,
        closed_by.seq if closed_by else None,
        state.soft_deleted,
        state.earliest_offset,
        state.last_write,
    )


def stream_state(row: Sequence[Any], version: int = 0) -> StreamState:
    """The state of a ``streams`` row (``STREAM_COLUMNS``; producers etc. come after)."""
    (
        stream_id,
        path,
        content_type,
        created_at,
        ttl_seconds,
        expires_at,
        last_access,
        tail,
        fork_offset,
        forked_from,
        forked_from_id,
        fork_requested_offset,
        fork_sub_offset,
        closed,
        closed_by_producer,
        closed_by_epoch,
        closed_by_seq,
        soft_deleted,
        earliest_offset,
        last_write,
    ) = row
    closed_by = None
    if closed_by_producer is not None:
        closed_by = ProducerClaim(closed_by_producer, closed_by_epoch, closed_by_seq)
    return StreamState(
        stream_id=stream_id,
        path=path,
        content_type=content_type,
        created_at=created_at,
        expiry=Expiry(ttl_seconds=ttl_seconds, expires_at=expires_at),
        last_access=last_access,
        tail=tail,
        fork_offset=fork_offset,
        forked_from=forked_from,
        forked_from_id=forked_from_id,
        # Postgres's numeric comes back as Decimal.
        fork_requested_offset=None if fork_requested_offset is None else int(fork_requested_offset),
        fork_sub_offset=fork_sub_offset,
        # SQLite keeps booleans as integers.
        closed=bool(closed),
        closed_by=closed_by,
        soft_deleted=bool(soft_deleted),
        earliest_offset=earliest_offset,
        last_write=last_write,
        version=version,
    )


def complete_states(
    states: Mapping[K, StreamState],
    producers: Iterable[tuple[K, str, int, int]],
    writer_seqs: Iterable[tuple[K, str, str]],
    snapshots: Iterable[tuple[K, int, str, int, float]],
) -> None:
    """Add the rows of ``producers``, ``writer_seqs`` and ``snapshots`` to ``states`` (by key)."""
    for key, producer_id, epoch, last_seq in producers:
        states[key].producers[producer_id] = ProducerState(epoch=epoch, last_seq=last_seq)
    for key, writer, seq in writer_seqs:
        states[key].writer_seqs[writer] = seq
    for key, offset, content_type, size, created_at in snapshots:
        states[key].snapshot = SnapshotInfo(offset, content_type, size, created_at)
