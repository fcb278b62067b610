"""Finding the synced streams by listing them: at start, after a lost subscription, and every
``rescan_secs`` as a safety net under the wakes.

A literal pattern (``session-events``) is one HEAD; ``bucket/*`` is the
bucket's listing (``GET /ds/{bucket}/streams``, paged). Other patterns
cannot be listed (the server lists buckets, not the whole namespace):
their streams are found by wakes alone, from their first write after
ds-sync subscribed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from durable_sessions.async_server import AsyncStreamServer
    from durable_sessions.protocol.patterns import Pattern

    from ds_sync.metrics import Metrics
    from ds_sync.sessions.streams import Streams

log = logging.getLogger("ds_sync.discovery")


class Scanner:
    """Lists the streams of every listable pattern and reports them to ``Streams``."""

    def __init__(
        self,
        patterns: tuple[Pattern, ...],
        api: AsyncStreamServer,
        streams: Streams,
        metrics: Metrics,
        *,
        rescan_secs: float,
    ) -> None:
        self._patterns = patterns
        self._rescan_secs = rescan_secs
        self._api = api
        self._streams = streams
        self._metrics = metrics
        for pattern in patterns:
            if not pattern.listable:
                log.info("pattern %s can't be listed: its streams are found by wakes", pattern.text)

    async def scan(self) -> None:
        """One pass over every listable pattern."""
        known_before = set(self._streams.paths())
        seen: set[str] = set()
        covered: list[str] = []  # prefixes whose complete listing we have
        for pattern in self._patterns:
            if not pattern.listable:
                continue
            for info in await self._api.find(pattern):
                seen.add(info.path)
                self._streams.observe(info)
            covered.append(pattern.text if pattern.literal else f"{pattern.bucket}/")
        self._metrics.scans += 1
        for path in sorted(known_before - seen):
            if any(_covers(prefix, path) for prefix in covered):
                await self._streams.confirm_gone(path)

    async def run(self) -> None:
        """Scan every ``rescan_secs`` until cancelled."""
        while True:
            await asyncio.sleep(self._rescan_secs)
            try:
                await self.scan()
            except Exception as exc:  # the server down, or an answer we could not read
                self._metrics.server_errors += 1
                log.warning("rescan failed (%s); next one in %.0fs", exc, self._rescan_secs)


def _covers(prefix: str, path: str) -> bool:
    """Whether a listing of ``prefix`` (a stream, or a bucket ending in ``/``) shows ``path``."""
    return path == prefix or (prefix.endswith("/") and path.startswith(prefix))
