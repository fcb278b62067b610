"""Reading stream states, buckets and snapshots back out of the SQLite tables (``_state_rows``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores import _state_rows as mapping

if TYPE_CHECKING:
    import sqlite3

    from ds_server.stores._rules import StreamState

INSERT_STREAM = (
    f"INSERT INTO streams ({', '.join(mapping.STREAM_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(mapping.STREAM_COLUMNS))})"
)
_SELECT_STREAMS = f"SELECT sid, {', '.join(mapping.STREAM_COLUMNS)} FROM streams"


def load_states(conn: sqlite3.Connection) -> tuple[list[StreamState], dict[str, int]]:
    """Every stored stream's state, and each stream id's ``sid``."""
    by_sid = {sid: mapping.stream_state(row) for sid, *row in conn.execute(_SELECT_STREAMS)}
    mapping.complete_states(
        by_sid,
        conn.execute(f"SELECT sid, {mapping.PRODUCER_COLUMNS} FROM producers"),
        conn.execute(f"SELECT sid, {mapping.WRITER_SEQ_COLUMNS} FROM writer_seqs"),
        conn.execute(f"SELECT sid, {mapping.SNAPSHOT_COLUMNS} FROM snapshots"),
    )
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
