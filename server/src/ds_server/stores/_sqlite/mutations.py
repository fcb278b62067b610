"""The bodies of the write transactions; each runs on the writer's connection, inside a transaction.

Each function is one whole mutation: the writer may commit several in one
transaction, and replays each alone if the shared transaction fails, so
they must have no effect outside the database.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._sqlite import chunks
from ds_server.stores._sqlite.rows import INSERT_STREAM
from ds_server.stores._state_rows import stream_values
from ds_server.stores.errors import StorageFull, StreamNotFound

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from ds_server.stores._commit import AppendCommit
    from ds_server.stores._rules import StreamState
    from ds_server.stores.base import SnapshotInfo

_UPSERT_PRODUCER = """
    INSERT INTO producers (sid, producer_id, epoch, last_seq) VALUES (?, ?, ?, ?)
    ON CONFLICT (sid, producer_id)
    DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq
"""
_UPSERT_WRITER_SEQ = """
    INSERT INTO writer_seqs (sid, writer, seq) VALUES (?, ?, ?)
    ON CONFLICT (sid, writer) DO UPDATE SET seq = excluded.seq
"""
# One snapshot per stream: the new one replaces the previous row.
_REPLACE_SNAPSHOT = """
    INSERT OR REPLACE INTO snapshots (sid, stream_offset, content_type, size, created_at, data)
    VALUES (?, ?, ?, ?, ?, ?)
"""
_LAST_BEFORE = (
    "SELECT start, length(data) FROM chunks WHERE sid = ? AND start < ? ORDER BY start DESC LIMIT 1"
)


class BrokenChain(StorageFull):
    """An append that follows a write of the same stream that failed; it must fail too."""

    reason = "an earlier write to this stream failed; nothing was written"


def create_stream(conn: sqlite3.Connection, state: StreamState, messages: Sequence[bytes]) -> int:
    """Insert a new stream with its initial messages; returns its ``sid``."""
    sid = conn.execute(INSERT_STREAM, stream_values(state)).lastrowid
    assert sid is not None
    conn.executemany(
        _UPSERT_PRODUCER,
        [(sid, name, p.epoch, p.last_seq) for name, p in state.producers.items()],
    )
    conn.executemany(_UPSERT_WRITER_SEQ, [(sid, w, seq) for w, seq in state.writer_seqs.items()])
    chunks.insert(conn, sid, state.fork_offset, messages)
    return sid


def append(conn: sqlite3.Connection, sid: int, commit: AppendCommit) -> None:
    """Append ``commit``'s messages and its producer, Stream-Seq and closure changes.

    The stored tail must be where the engine placed the append: if an
    earlier append of this stream failed, this one was decided on top of
    it and is refused rather than written after a gap.
    """
    row = conn.execute("SELECT tail, closed FROM streams WHERE sid = ?", (sid,)).fetchone()
    if row is None:
        raise StreamNotFound()
    if row[0] != commit.start or row[1]:
        raise BrokenChain()
    chunks.insert(conn, sid, commit.start, commit.messages)
    if commit.messages:
        # An append that writes data is the stream's last write (see ``apply_decision``).
        conn.execute(
            "UPDATE streams SET tail = ?, last_access = ?, last_write = ? WHERE sid = ?",
            (commit.start + commit.size, commit.last_access, commit.last_access, sid),
        )
    else:
        conn.execute("UPDATE streams SET last_access = ? WHERE sid = ?", (commit.last_access, sid))
    claim = commit.producer
    if claim is not None:
        conn.execute(_UPSERT_PRODUCER, (sid, claim.producer_id, claim.epoch, claim.seq))
    if commit.stream_seq is not None:
        conn.execute(_UPSERT_WRITER_SEQ, (sid, commit.writer, commit.stream_seq))
    if commit.close:
        conn.execute(
            "UPDATE streams SET closed = 1, closed_by_producer = ?, closed_by_epoch = ?,"
            " closed_by_seq = ? WHERE sid = ?",
            (
                claim.producer_id if claim else None,
                claim.epoch if claim else None,
                claim.seq if claim else None,
                sid,
            ),
        )


def save_state(conn: sqlite3.Connection, sid: int, state: StreamState) -> None:
    """Store the metadata that changes outside appends (soft deletion, last access)."""
    conn.execute(
        "UPDATE streams SET soft_deleted = ?, last_access = ? WHERE sid = ?",
        (int(state.soft_deleted), state.last_access, sid),
    )


def save_access(conn: sqlite3.Connection, accesses: Sequence[tuple[int, float]]) -> None:
    """Record last-access times, ``(sid, when)`` pairs."""
    conn.executemany(
        "UPDATE streams SET last_access = ? WHERE sid = ?", [(when, sid) for sid, when in accesses]
    )


def save_snapshot(
    conn: sqlite3.Connection, sid: int, snapshot: SnapshotInfo, earliest: int, data: bytes
) -> None:
    """Replace the stream's snapshot and move its earliest offset, together.

    Only this column of the stream's row is written: the rest belongs to
    appends, which go on meanwhile.
    """
    updated = conn.execute(
        "UPDATE streams SET earliest_offset = ? WHERE sid = ?", (earliest, sid)
    ).rowcount
    if not updated:
        raise StreamNotFound()  # purged while the snapshot waited for the writer
    conn.execute(
        _REPLACE_SNAPSHOT,
        (sid, snapshot.offset, snapshot.content_type, snapshot.size, snapshot.created_at, data),
    )


def reclaim_before(conn: sqlite3.Connection, sid: int, before: int) -> int:
    """Delete the stored pieces that end at or before stream offset ``before``; how many.

    Pieces never overlap, so all but the last one starting before
    ``before`` end by the next one's start; that last one goes only if it
    ends in time too. Later pieces of an append cut this way stay readable
    on their own (reads may start inside an append).
    """
    last = conn.execute(_LAST_BEFORE, (sid, before)).fetchone()
    if last is None:
        return 0
    start, size = last
    cutoff = before if start + size <= before else start
    return conn.execute("DELETE FROM chunks WHERE sid = ? AND start < ?", (sid, cutoff)).rowcount


def save_bucket(conn: sqlite3.Connection, bucket_id: str, created_at: float) -> None:
    """Insert a bucket."""
    conn.execute(
        "INSERT INTO buckets (bucket_id, created_at) VALUES (?, ?)", (bucket_id, created_at)
    )


def drop_bucket(conn: sqlite3.Connection, bucket_id: str) -> None:
    """Delete a bucket."""
    conn.execute("DELETE FROM buckets WHERE bucket_id = ?", (bucket_id,))


def purge(conn: sqlite3.Connection, sid: int) -> None:
    """Delete a stream's rows from every table."""
    for table in ("chunks", "producers", "writer_seqs", "snapshots", "streams"):
        conn.execute(f"DELETE FROM {table} WHERE sid = ?", (sid,))
