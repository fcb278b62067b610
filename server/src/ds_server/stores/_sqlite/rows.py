"""Stream states to and from rows: ``streams``, ``producers``, ``writer_seqs``, ``snapshots``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ds_server.stores._producers import ProducerState
from ds_server.stores._rules import StreamState
from ds_server.stores.base import Expiry, ProducerClaim, SnapshotInfo

if TYPE_CHECKING:
    import sqlite3

# In the order of ``StreamState``'s fields; ``_state`` unpacks them in this order.
_COLUMNS = (
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
INSERT_STREAM = (
    f"INSERT INTO streams ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
)
_SELECT_STREAMS = f"SELECT sid, {', '.join(_COLUMNS)} FROM streams"
# Everything but the blob, which only ``load_snapshot`` reads.
_SELECT_SNAPSHOTS = "SELECT sid, stream_offset, content_type, size, created_at FROM snapshots"

Row = tuple[object, ...]


def stream_values(state: StreamState) -> Row:
    """The ``streams`` row of ``state``, in ``INSERT_STREAM`` order."""
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
        int(state.closed),
        closed_by.producer_id if closed_by else None,
        closed_by.epoch if closed_by else None,
        closed_by.seq if closed_by else None,
        int(state.soft_deleted),
        state.earliest_offset,
        state.last_write,
    )


def _state(row: tuple[Any, ...]) -> StreamState:
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
        fork_requested_offset=fork_requested_offset,
        fork_sub_offset=fork_sub_offset,
        closed=bool(closed),
        closed_by=closed_by,
        soft_deleted=bool(soft_deleted),
        earliest_offset=earliest_offset,
        last_write=last_write,
    )


def load_states(conn: sqlite3.Connection) -> tuple[list[StreamState], dict[str, int]]:
    """Every stored stream's state, and each stream id's ``sid``."""
    by_sid: dict[int, StreamState] = {}
    for sid, *row in conn.execute(_SELECT_STREAMS):
        by_sid[sid] = _state(tuple(row))
    for sid, producer_id, epoch, last_seq in conn.execute(
        "SELECT sid, producer_id, epoch, last_seq FROM producers"
    ):
        by_sid[sid].producers[producer_id] = ProducerState(epoch=epoch, last_seq=last_seq)
    for sid, writer, seq in conn.execute("SELECT sid, writer, seq FROM writer_seqs"):
        by_sid[sid].writer_seqs[writer] = seq
    for sid, offset, content_type, size, created_at in conn.execute(_SELECT_SNAPSHOTS):
        by_sid[sid].snapshot = SnapshotInfo(offset, content_type, size, created_at)
    sids = {state.stream_id: sid for sid, state in by_sid.items()}
    return list(by_sid.values()), sids


def load_buckets(conn: sqlite3.Connection) -> list[tuple[str, float]]:
    """Every bucket as ``(bucket_id, created_at)``."""
    return [
        (bucket_id, created_at)
        for bucket_id, created_at in conn.execute("SELECT bucket_id, created_at FROM buckets")
    ]


def load_snapshot(conn: sqlite3.Connection, sid: int, offset: int) -> bytes | None:
    """The blob of the stream's snapshot if it is (still) the one at ``offset``."""
    row = conn.execute(
        "SELECT data FROM snapshots WHERE sid = ? AND stream_offset = ?", (sid, offset)
    ).fetchone()
    if row is None:
        return None
    data: bytes = row[0]
    return data
