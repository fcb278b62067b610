"""Cutting stored pieces into the chunks a read returns: the range and the byte budget.

Every backend stores a stream as pieces at offsets (one per message or byte
append, a long one split into continued pieces) and answers
``Persistence.read`` by one rule: every chunk cut to ``[start, limit)``,
about ``max_bytes`` of them in all; a byte read (``whole=False``) cuts its
last chunk at the budget, a whole read (JSON) keeps its last message whole
and stops before the next. The rule lives here, pure; backends only fetch
pieces, and stop fetching when ``ChunkCutter`` says the read has enough.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from ds_server.stores.persistence import Chunk

if TYPE_CHECKING:
    from collections.abc import Iterable


@final
class ChunkCutter:
    """One read of ``[start, limit)`` and about ``max_bytes``, fed its pieces in offset order.

    Pieces start from the one holding ``start``. A continued piece right
    after the previous one is the rest of its message and is joined to it
    again, so callers see chunks as if each append had been stored whole.
    """

    __slots__ = ("_budget", "_end", "_limit", "_out", "_start", "_whole")

    def __init__(self, start: int, limit: int, max_bytes: int, *, whole: bool) -> None:
        self._start = start
        self._limit = limit
        self._whole = whole
        self._budget = max_bytes
        self._end = -1  # where the last kept piece ends
        self._out: list[tuple[int, list[bytes]]] = []

    def wants(self, piece_start: int, continued: bool = False) -> bool:
        """Whether the read takes (part of) a piece at ``piece_start``: False once it has enough.

        Enough: past ``limit``, or the budget spent and no message left to
        finish (a whole read takes the rest of a message it began).
        """
        if piece_start >= self._limit:
            return False
        return self._budget > 0 or (self._whole and continued and piece_start == self._end)

    def span(
        self, piece_start: int, length: int, continued: bool = False
    ) -> tuple[int, int] | None:
        """The bytes ``[cut_from, cut_to)`` of the next piece that the read returns.

        ``None`` once the read has enough (``wants``); an empty span
        (``cut_from >= cut_to``) for a piece that ends before ``start``.
        """
        if not self.wants(piece_start, continued):
            return None
        cut_from = max(0, self._start - piece_start)
        cut_to = min(length, self._limit - piece_start)
        if not self._whole:
            cut_to = min(cut_to, cut_from + self._budget)
        return cut_from, cut_to

    def keep(self, piece_start: int, cut_from: int, data: bytes, continued: bool = False) -> None:
        """Keep ``data``, the span of the piece at ``piece_start`` that begins at ``cut_from``."""
        if not (continued and piece_start == self._end):
            self._out.append((piece_start + cut_from, []))
        self._out[-1][1].append(data)
        self._end = piece_start + cut_from + len(data)
        self._budget -= len(data)

    def take(self, piece_start: int, continued: bool, data: bytes) -> bool:
        """Cut a piece whose bytes are at hand and keep its span; False once the read has enough."""
        span = self.span(piece_start, len(data), continued)
        if span is None:
            return False
        cut_from, cut_to = span
        if cut_from < cut_to:
            whole_piece = cut_from == 0 and cut_to == len(data)
            self.keep(
                piece_start, cut_from, data if whole_piece else data[cut_from:cut_to], continued
            )
        return True

    def chunks(self) -> list[Chunk]:
        """The chunks kept, continued pieces joined to their message."""
        return [
            Chunk(at, parts[0] if len(parts) == 1 else b"".join(parts)) for at, parts in self._out
        ]


def cut_chunks(
    pieces: Iterable[tuple[int, bool, bytes]],
    start: int,
    limit: int,
    max_bytes: int,
    *,
    whole: bool,
) -> list[Chunk]:
    """The chunks of ``(start, continued, data)`` pieces that a read returns (``ChunkCutter``).

    ``pieces`` is read no further than the read wants, so it may be lazy.
    """
    cutter = ChunkCutter(start, limit, max_bytes, whole=whole)
    for piece_start, continued, data in pieces:
        if not cutter.take(piece_start, continued, data):
            break
    return cutter.chunks()
