"""Stream bytes in the ``chunks`` table: writing pieces, reading ranges, finding boundaries."""

from __future__ import annotations

from contextlib import closing
from typing import TYPE_CHECKING

from ds_server.stores._sqlite.schema import PIECE_BYTES
from ds_server.stores.persistence import Chunk

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence

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

    Pieces of one message or append are joined again, so callers see the
    same chunks as if each append had been stored in one row. Every chunk
    is cut to ``[start, limit)``; only ``whole=False`` also cuts at
    ``max_bytes``, ``whole=True`` stops before the next message instead.
    """
    floor = conn.execute(_FLOOR, (sid, start)).fetchone()
    first = start if floor is None else floor[0]
    out: list[tuple[int, list[bytes]]] = []
    end = -1  # where the last chunk in ``out`` ends
    budget = max_bytes
    with closing(conn.execute(_RANGE, (sid, first, limit))) as rows:
        for piece_start, cont, data in rows:
            joins = bool(cont) and piece_start == end
            if budget <= 0 and not (whole and joins):
                break
            if piece_start + len(data) <= start:
                continue
            cut_from = max(0, start - piece_start)
            cut_to = min(len(data), limit - piece_start)
            if not whole:
                cut_to = min(cut_to, cut_from + budget)
            if not joins:
                out.append((piece_start + cut_from, []))
            out[-1][1].append(data[cut_from:cut_to] if cut_from or cut_to < len(data) else data)
            end = piece_start + cut_to
            budget -= cut_to - cut_from
    return [Chunk(at, parts[0] if len(parts) == 1 else b"".join(parts)) for at, parts in out]


def is_boundary(conn: sqlite3.Connection, sid: int, position: int) -> bool:
    """True when a message or append (not a later piece of one) starts at ``position``."""
    row = conn.execute(_BOUNDARY, (sid, position)).fetchone()
    return row is not None and row[0] == 0
