"""The write transactions' bodies besides appends; each runs in the writer thread's transaction.

Each function is one whole mutation, announced on the change feed from the
same transaction: the writer may commit several in one transaction, and
replays each alone if the shared one fails, so they have no effect outside
the database.

Those that change what a bucket stores update its ``bucket_usage`` row (the
writer has locked it) by what the stored rows say changed. A create or a
snapshot its bucket's quota has no room for changes nothing and *returns*
the error (raising would roll back the other writes of the batch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ds_server.stores._postgres import chunks, feed
from ds_server.stores._postgres.rows import INSERT_STREAM, stream_row
from ds_server.stores._quotas import Quota, Usage, bucket_of
from ds_server.stores.errors import PayloadTooLarge, QuotaExceeded, StaleStream, StreamNotFound
from ds_server.stores.persistence import StreamChange

if TYPE_CHECKING:
    from collections.abc import Sequence

    import psycopg

    from ds_server.stores._rules import StreamState
    from ds_server.stores.base import SnapshotInfo

_UPSERT_PRODUCERS = """
    INSERT INTO producers (stream_id, producer_id, epoch, last_seq)
    SELECT %s, p, e, q FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS t(p, e, q)
"""
_UPSERT_WRITER_SEQS = """
    INSERT INTO writer_seqs (stream_id, writer, seq)
    SELECT %s, w, q FROM unnest(%s::text[], %s::text[]) AS t(w, q)
"""
# One snapshot per stream: the new one replaces the previous row.
_REPLACE_SNAPSHOT = """
    INSERT INTO snapshots (stream_id, stream_offset, content_type, size, created_at, data)
    VALUES (%s, %s, %s, %s, %s, %s)
    ON CONFLICT (stream_id) DO UPDATE SET stream_offset = excluded.stream_offset,
        content_type = excluded.content_type, size = excluded.size,
        created_at = excluded.created_at, data = excluded.data
"""
_LAST_BEFORE = """
    SELECT start, octet_length(data) FROM chunks WHERE stream_id = %s AND start < %s
    ORDER BY start DESC LIMIT 1
"""


@dataclass(frozen=True, slots=True)
class Feed:
    """Where and as whom a mutation announces itself."""

    channel: str
    origin: str

    def announce(self, conn: psycopg.Connection[Any], kind: str, state: StreamState) -> None:
        change = StreamChange(
            kind, state.stream_id, state.path, state.version, state.tail, state.closed, self.origin
        )
        feed.notify(conn, self.channel, change)


def charge(
    conn: psycopg.Connection[Any], bucket: str, quota: Quota, size: int, streams: int = 0
) -> QuotaExceeded | PayloadTooLarge | None:
    """Count a write in its bucket's stored totals; the error instead if there is no room."""
    row = conn.execute(
        "SELECT bytes, streams FROM bucket_usage WHERE bucket = %s", (bucket,)
    ).fetchone()
    usage = Usage(bucket, quota, *row) if row is not None else Usage(bucket, quota)
    try:
        usage.charge(size, streams)
    except (QuotaExceeded, PayloadTooLarge) as error:
        return error
    conn.execute(
        "UPDATE bucket_usage SET bytes = bytes + %s, streams = streams + %s WHERE bucket = %s",
        (size, streams, bucket),
    )
    return None


def create_stream(
    conn: psycopg.Connection[Any],
    announce: Feed,
    state: StreamState,
    messages: Sequence[bytes],
    quota: Quota,
) -> QuotaExceeded | PayloadTooLarge | None:
    """Insert a new stream with its initial messages (a path taken meanwhile: UniqueViolation).

    ``quota``: its bucket's; the error when there is no room (nothing is stored then).
    """
    bucket = bucket_of(state.path)
    if bucket is not None:
        refused = charge(conn, bucket, quota, state.retained_bytes, streams=1)
        if refused is not None:
            return refused
    conn.execute(INSERT_STREAM, stream_row(state))
    if state.producers:
        producers = state.producers
        conn.execute(
            _UPSERT_PRODUCERS,
            (
                state.stream_id,
                list(producers),
                [p.epoch for p in producers.values()],
                [p.last_seq for p in producers.values()],
            ),
        )
    if state.writer_seqs:
        seqs = state.writer_seqs
        conn.execute(_UPSERT_WRITER_SEQS, (state.stream_id, list(seqs), list(seqs.values())))
    chunks.insert(conn, state.stream_id, state.fork_offset, messages)
    announce.announce(conn, "create", state)
    return None


def save_state(conn: psycopg.Connection[Any], announce: Feed, state: StreamState) -> None:
    """Store the metadata that changes outside appends (soft deletion), fenced on the version."""
    cursor = conn.execute(
        "UPDATE streams SET soft_deleted = %s, last_access = %s, version = %s"
        " WHERE stream_id = %s AND version = %s",
        (state.soft_deleted, state.last_access, state.version, state.stream_id, state.version - 1),
    )
    if cursor.rowcount != 1:
        raise StaleStream()
    announce.announce(conn, "state", state)


def save_access(conn: psycopg.Connection[Any], accesses: Sequence[tuple[str, float]]) -> None:
    """Record last-access times, ``(stream_id, when)`` pairs; never moves one back."""
    conn.execute(
        "UPDATE streams SET last_access = GREATEST(last_access, a.w)"
        " FROM unnest(%s::text[], %s::float8[]) AS a(id, w) WHERE stream_id = a.id",
        ([stream_id for stream_id, _ in accesses], [when for _, when in accesses]),
    )


def save_snapshot(
    conn: psycopg.Connection[Any],
    announce: Feed,
    state: StreamState,
    snapshot: SnapshotInfo,
    earliest: int,
    data: bytes,
    quota: Quota,
) -> QuotaExceeded | PayloadTooLarge | None:
    """Replace the stream's snapshot and move its earliest offset, together.

    Only that column of the stream's row is written (and not its version):
    the rest belongs to appends, which go on meanwhile. ``quota``: the
    bucket's; the error when it has no room for what the snapshot adds.
    """
    stored = conn.execute(
        "SELECT s.earliest_offset, coalesce(n.size, 0) FROM streams s"
        " LEFT JOIN snapshots n ON n.stream_id = s.stream_id WHERE s.stream_id = %s"
        " FOR UPDATE OF s",
        (state.stream_id,),
    ).fetchone()
    if stored is None:
        raise StreamNotFound()  # purged while the snapshot waited for the writer
    bucket = bucket_of(state.path)
    if bucket is not None:
        old_earliest, old_size = stored
        refused = charge(conn, bucket, quota, snapshot.size - old_size - (earliest - old_earliest))
        if refused is not None:
            return refused
    cursor = conn.execute(
        "UPDATE streams SET earliest_offset = %s WHERE stream_id = %s"
        " RETURNING version, tail, closed",
        (earliest, state.stream_id),
    )
    row = cursor.fetchone()
    assert row is not None  # locked above: no purge came in between
    conn.execute(
        _REPLACE_SNAPSHOT,
        (
            state.stream_id,
            snapshot.offset,
            snapshot.content_type,
            snapshot.size,
            snapshot.created_at,
            data,
        ),
    )
    # What is stored now: appends of the stream may still be in flight.
    version, tail, closed = row
    change = StreamChange(
        "snapshot", state.stream_id, state.path, version, tail, closed, announce.origin
    )
    feed.notify(conn, announce.channel, change)
    return None


def reclaim_before(conn: psycopg.Connection[Any], stream_id: str, before: int) -> int:
    """Delete the stored pieces that end at or before stream offset ``before``; how many.

    Pieces never overlap, so all but the last one starting before ``before``
    end by the next one's start; that last one goes only if it ends in time.
    """
    cursor = conn.execute(_LAST_BEFORE, (stream_id, before))
    last = cursor.fetchone()
    if last is None:
        return 0
    start, size = last
    cutoff = before if start + size <= before else start
    cursor = conn.execute(
        "DELETE FROM chunks WHERE stream_id = %s AND start < %s", (stream_id, cutoff)
    )
    return cursor.rowcount


def purge(conn: psycopg.Connection[Any], announce: Feed, state: StreamState) -> None:
    """Delete a stream's rows from every table, and uncount it from its bucket's totals."""
    for statement in (
        "DELETE FROM chunks WHERE stream_id = %s",
        "DELETE FROM producers WHERE stream_id = %s",
        "DELETE FROM writer_seqs WHERE stream_id = %s",
    ):
        conn.execute(statement, (state.stream_id,))
    snapshot = conn.execute(
        "DELETE FROM snapshots WHERE stream_id = %s RETURNING size", (state.stream_id,)
    ).fetchone()
    stream = conn.execute(
        "DELETE FROM streams WHERE stream_id = %s RETURNING tail - earliest_offset",
        (state.stream_id,),
    ).fetchone()
    bucket = bucket_of(state.path)
    if bucket is not None and stream is not None:
        size = stream[0] + (snapshot[0] if snapshot is not None else 0)
        conn.execute(
            "UPDATE bucket_usage SET bytes = bytes - %s, streams = streams - 1 WHERE bucket = %s",
            (size, bucket),
        )
    announce.announce(conn, "purge", state)


def save_bucket(
    conn: psycopg.Connection[Any], announce: Feed, bucket_id: str, created_at: float
) -> None:
    """Insert a bucket (announced as ``bucket`` with ``closed`` False)."""
    conn.execute(
        "INSERT INTO buckets (bucket_id, created_at) VALUES (%s, %s)", (bucket_id, created_at)
    )
    change = StreamChange("bucket", bucket_id, "", 0, 0, False, announce.origin)
    feed.notify(conn, announce.channel, change)


def drop_bucket(conn: psycopg.Connection[Any], announce: Feed, bucket_id: str) -> None:
    """Delete a bucket (announced as ``bucket`` with ``closed`` True: it is gone)."""
    conn.execute("DELETE FROM buckets WHERE bucket_id = %s", (bucket_id,))
    change = StreamChange("bucket", bucket_id, "", 0, 0, True, announce.origin)
    feed.notify(conn, announce.channel, change)
