"""How much a wake stream keeps: about ``retain_bytes`` of its newest events.

A wake event matters only until a worker has read it and claimed the wake;
what work is pending is what a claim answers, never the events. The server
appends the events, so the server also drops them, or a wake stream that
lives for months would reach the retained-bytes limit and refuse every
wake: once a wake stream retains more than ``retain_bytes``, a snapshot is
published at the start of the oldest event in the newest half, and
retention drops everything before it. A reader that fell more than that
half behind gets ``410`` and reads on from ``/bootstrap`` (or ``now``),
then claims each of its subscriptions: nothing pending is lost.

The event starts are remembered in memory, only those of the newest half
(a few thousand at most); after a restart the first trim cuts at the start
of the newest event.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING

from ds_server.protocol.json_mode import JSON_CONTENT_TYPE
from ds_server.stores.errors import StoreError

if TYPE_CHECKING:
    from ds_server.stores.base import Store

log = logging.getLogger("ds_server.subscriptions")

# The snapshot a trim publishes: wake events fold to nothing worth keeping.
TRIMMED = (
    b'{"format":"ds-wake-stream/1",'
    b'"note":"older wake events were dropped; claim to see pending work"}'
)


class WakeStreamRetention:
    """Trims the wake streams the server appends to."""

    def __init__(self, store: Store, retain_bytes: int) -> None:
        self._store = store
        self._retain_bytes = retain_bytes
        # Per wake stream: the starts of its newest events, oldest first.
        self._starts: dict[str, deque[int]] = {}
        self._earliest: dict[str, int] = {}

    async def appended(self, path: str, start: int, end: int) -> None:
        """An event was appended at ``[start, end)``; trim the stream if it holds too much."""
        starts = self._starts.setdefault(path, deque())
        starts.append(start)
        keep_from = end - self._retain_bytes // 2
        while len(starts) > 1 and starts[0] < keep_from:
            starts.popleft()
        earliest = self._earliest.get(path)
        if earliest is None or earliest > start:  # unknown, or the stream was made anew
            try:
                earliest = (await self._store.head(path)).earliest_offset
            except StoreError:
                return  # deleted meanwhile: nothing to trim
            self._earliest[path] = earliest
        if end - earliest <= self._retain_bytes:
            return
        cut = starts[0]
        try:
            await self._store.publish_snapshot(path, cut, JSON_CONTENT_TYPE, TRIMMED)
        except StoreError as exc:
            # Only space: the next event tries again.
            log.warning("trimming wake stream %s at %d failed (%s)", path, cut, exc)
            self._earliest.pop(path, None)
            return
        self._earliest[path] = cut

    def forget(self, path: str) -> None:
        """``path`` is no longer a wake stream."""
        self._starts.pop(path, None)
        self._earliest.pop(path, None)
