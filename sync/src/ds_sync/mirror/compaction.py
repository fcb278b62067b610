"""Compaction of a ``pg-{table}`` stream: the table's state as a snapshot, so history can go.

Policy: once the stream holds ``compact_after_bytes`` past its latest
snapshot (its tail minus the snapshot offset, from a HEAD made every
quarter of that many bytes posted, and when the mirror starts), the
mirror compacts it. A compaction reads the stream's bootstrap (the last
snapshot and every message after it), folds it (``fold``) up to the last
message boundary at least half of ``compact_after_bytes`` before the
tail, and publishes that state as the snapshot at that offset; the server
then drops the history before it. The newest half stays, so a reader
following the stream less than that far behind never meets a 410, and
each compaction releases at least half the policy's bytes. A late
reader's bootstrap is the table plus the recent changes: O(table), not
O(history).

It appends nothing: followers read on without a gap or a duplicate, and
the exactly-once machinery (the idempotent producer, the outbox) is not
involved. It runs in the mirror's task between two batches, so the
mirror's own appends never race it. Killed at any moment, it leaves
either the previous snapshot or the new one (the server publishes
atomically); the next start sees which with a HEAD. A failure is logged
and tried again once as many bytes were posted again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from durable_sessions import bootstrap
from durable_sessions.protocol.offsets import format_offset, parse_offset

from ds_sync import failpoints
from ds_sync.mirror.fold import TableState

if TYPE_CHECKING:
    from durable_sessions.async_server import AsyncStreamServer
    from durable_sessions.protocol.listing import StreamInfo

    from ds_sync.metrics import TableMetrics
    from ds_sync.mirror.state import MirrorStore

log = logging.getLogger("ds_sync.mirror")


class Compactor:
    """Compacts one table's stream when it has grown past the policy's bytes."""

    def __init__(
        self,
        api: AsyncStreamServer,
        stream: str,
        table: str,
        store: MirrorStore,
        metrics: TableMetrics,
        *,
        after_bytes: int,
    ) -> None:
        self._api = api
        self._stream = stream
        self._table = table
        self._store = store
        self._metrics = metrics
        self._after_bytes = after_bytes
        # Bytes posted since the stream was last looked at.
        self._posted = 0

    async def restore(self, snapshot: tuple[str, float] | None, info: StreamInfo) -> None:
        """What is known at start: the recorded snapshot, and the stream as a HEAD saw it."""
        self._observe(info)
        if info.snapshot_offset is None:
            return
        if snapshot is not None and info.snapshot_offset == parse_offset(snapshot[0]):
            self._metrics.snapshot_at = snapshot[1]
        else:
            # Published, then killed before recording it: it is from about now.
            offset = format_offset(info.snapshot_offset)
            self._metrics.snapshot_at = await self._store.record_snapshot(self._table, offset)

    def posted(self, size: int) -> None:
        """``size`` bytes of messages were appended to the stream."""
        self._posted += size

    async def run_if_due(self, info: StreamInfo | None = None) -> None:
        """Compact when the stream holds the policy's bytes past its snapshot; never raises."""
        if self._after_bytes == 0:
            return
        if info is None:
            if self._posted < self._after_bytes // 4:
                return
            self._posted = 0
        try:
            info = info or await self._api.head(self._stream)
            if info is None:
                return
            self._observe(info)
            if info.tail - (info.snapshot_offset or 0) >= self._after_bytes:
                await self.compact()
        except Exception as exc:  # the server, the fold: the mirror goes on regardless
            self._metrics.compaction_errors += 1
            log.warning(
                "table %s: compacting %s failed (%s: %s); trying again later",
                self._table,
                self._stream,
                type(exc).__name__,
                (str(exc).splitlines() or [""])[0],
            )

    async def compact(self) -> str | None:
        """Publish the table's state as the stream's snapshot, keeping the newest half of
        the policy's bytes after it; the snapshot's offset (None: nothing to release)."""
        started = time.monotonic()
        url = self._api.stream_url(self._stream)
        headers = await self._api.auth_headers()
        begun = await bootstrap(url, client=self._api.http, headers=headers)
        state = TableState()
        if begun.snapshot is not None:
            state.apply_snapshot(begun.snapshot)
        start = cut = parse_offset(begun.snapshot_offset)
        # Offsets count message bytes: a part's size is how far its message moves them.
        keep_from = parse_offset(begun.next_offset) - self._after_bytes // 2
        for _, message in begun.messages:
            if cut + len(message) > keep_from:
                break
            state.apply_raw(message)
            cut += len(message)
        if cut == start:
            return None  # the newest half is all there is past the snapshot
        offset = format_offset(cut)
        failpoints.reached("mirror.compaction-folded")
        blob = state.snapshot(offset)
        await self._api.publish_snapshot(self._stream, cut, blob)
        failpoints.reached("mirror.compaction-published")
        self._metrics.snapshot_at = await self._store.record_snapshot(self._table, offset)
        self._metrics.compactions += 1
        self._metrics.snapshot_bytes = len(blob)
        self._metrics.retained_bytes = parse_offset(begun.next_offset) - cut
        log.info(
            "table %s: compacted %s at %s: %d rows, a %d-byte snapshot, %d bytes of history "
            "released (%.2fs)",
            self._table,
            self._stream,
            offset,
            len(state.rows),
            len(blob),
            cut - start,
            time.monotonic() - started,
        )
        return offset

    def _observe(self, info: StreamInfo) -> None:
        self._metrics.retained_bytes = info.tail - (info.snapshot_offset or 0)
