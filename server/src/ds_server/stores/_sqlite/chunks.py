"""Stream bytes in the ``chunks`` table: writing pieces, reading ranges, finding boundaries."""

from __future__ import annotations

from contextlib import closing
from typing import TYPE_CHECKING

from ds_server.stores._chunks import cut_chunks
from ds_server.stores._sqlite.schema import PIECE_BYTES

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence

    from ds_server.stores.persistence import Chunk

_INSERT = "INSERT INTO chunks (sid, start, cont, data) VALUES (?, ?, ?, ?)"
_FLOOR = "SELECT start FROM chunks WHERE sid = ? AND start <= ? ORDER BY start DESC LIMIT 1"
_RANGE = (
    "SELECT start, cont, data FROM chunks WHERE sid = ? AND start >= ? AND start < ? ORDER BY start"
)
_BOUNDARY = "SELECT cont FROM chunks WHERE sid = ? AND start = ?"


def _pieces(sid: int, start: int, messages: Sequence[bytes]) -> Iterator[tuple[object, ...]]:
    for message in messages:
        if len(message) <= PIECE_BYTES:
            # An empty message is nothing to store (and would share its start with the next).
            if message:
                yield (sid, start, 0, message)
        else:
            view = memoryview(message)
            for cut in range(0, len(message), PIECE_BYTES):
                yield (sid, start + cut, int(cut > 0), view[cut : cut + PIECE_BYTES])
        start += len(message)


def insert(conn: sqlite3.Connection, sid: int, start: int, messages: Sequence[bytes]) -> None:
    """Store ``messages`` back to back from stream offset ``start``."""
    conn.executemany(_INSERT, _pieces(sid, start, messages))


def read(
    conn: sqlite3.Connection, sid: int, start: int, limit: int, max_bytes: int, *, whole: bool
) -> list[Chunk]:
    """The chunks overlapping ``[start, limit)``, as ``Persistence.read`` defines them.

    Rows are fetched as ``cut_chunks`` takes them, so a page costs its pieces.
    """
    floor = conn.execute(_FLOOR, (sid, start)).fetchone()
    first = start if floor is None else floor[0]
    with closing(conn.execute(_RANGE, (sid, first, limit))) as rows:
        pieces = ((at, bool(cont), data) for at, cont, data in rows)
        return cut_chunks(pieces, start, limit, max_bytes, whole=whole)


def is_boundary(conn: sqlite3.Connection, sid: int, position: int) -> bool:
    """True when a message or append (not a later piece of one) starts at ``position``."""
    row = conn.execute(_BOUNDARY, (sid, position)).fetchone()
    return row is not None and row[0] == 0
