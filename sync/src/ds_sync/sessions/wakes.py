"""Learning about new data without a connection per idle stream: pull-wake subscriptions.

One pull-wake subscription per pattern, all announcing on one wake stream
(``ds-sync/{name}-wakes``). When a linked stream gets data and no wake is
outstanding, the server appends a wake event there; ds-sync reads the
wake stream over SSE, claims the subscription, hands every stream the
claim lists to ``Streams.observe`` (starting readers where data waits),
and acks each at the tail the claim reported. Data arriving after that
wakes the subscription again, so nothing goes unnoticed, and claims are
spaced by ``wake_interval_secs`` so a busy server costs a few wakes a
second, not one per append. While claims only name streams whose readers
are running anyway (a steady load), the spacing doubles up to
``MAX_SPACING_FACTOR`` times that; a claim naming a stream without a reader
brings it back.

The server stores subscriptions (except on its ``memory`` backend).
Whenever the wake stream's connection ends, they are put again anyway; a
subscription the server had lost is created anew and a rescan covers
whatever its wakes would have said.
The server keeps the wake stream short (``DS_SUBSCRIPTIONS__WAKE_STREAM_RETAINED_BYTES``):
if ds-sync ever falls that far behind, its read gets 410, and it subscribes
again from the tail and rescans, as after any error.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import TYPE_CHECKING

import httpx
import msgspec
import psycopg
from durable_sessions.async_server import UnexpectedStatusError
from durable_sessions.protocol.content_types import JSON
from durable_sessions.protocol.listing import StreamInfo
from durable_sessions.protocol.offsets import format_offset, normal_offset, parse_offset
from durable_sessions.protocol.subscriptions import Grant
from durable_sessions.sse_reader import SseReader

from ds_sync.backoff import Backoff
from ds_sync.sessions.shards import AllStreams

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from durable_sessions import Update
    from durable_sessions.async_server import AsyncStreamServer
    from durable_sessions.protocol.patterns import Pattern

    from ds_sync.metrics import Metrics
    from ds_sync.sessions.shards import Ownership

log = logging.getLogger("ds_sync.wakes")

WAKE_BUCKET = "ds-sync"
# A claimed wake is acked within moments; a ds-sync killed mid-claim blocks wakes this long.
LEASE_TTL_MS = 5_000
# Claims that teach nothing new are spaced out up to this many wake intervals.
MAX_SPACING_FACTOR = 4


class _WakeEvent(msgspec.Struct):
    subscription_id: str


_decode_wake = msgspec.json.Decoder(_WakeEvent).decode


def subscription_id(name: str, pattern: Pattern) -> str:
    """A stable id per (consumer, pattern): the same configuration finds its subscription again."""
    digest = hashlib.sha256(pattern.text.encode()).hexdigest()[:12]
    return f"{name}-{digest}"


class Wakes:
    """Keeps the subscriptions, reads the wake stream, claims and acks."""

    def __init__(
        self,
        group: str,
        patterns: tuple[Pattern, ...],
        api: AsyncStreamServer,
        observe: Callable[[StreamInfo], bool],
        rescan: Callable[[], Awaitable[None]],
        metrics: Metrics,
        *,
        interval_secs: float,
        ownership: Ownership | None = None,
        publish: Callable[[list[tuple[str, int]]], Awaitable[None]] | None = None,
    ) -> None:
        self._group = group
        # Least time between two claims (bounds the wake traffic).
        self._interval_secs = interval_secs
        self._api = api
        self._observe = observe  # True when what it was told started (or needs) a reader
        # When other processes share the work, they learn what a claim says (sightings)
        # before the ack: their own shards' streams, and tails for shards they may take over.
        self._ownership = ownership or AllStreams()
        self._publish = publish
        self._rescan = rescan
        self._metrics = metrics
        self.wake_stream = f"{WAKE_BUCKET}/{group}-wakes"
        self._subs = {subscription_id(group, p): p for p in patterns}
        self._due: set[str] = set()
        self._due_event = asyncio.Event()
        self._spacing = 1  # wake intervals between claims, up to MAX_SPACING_FACTOR

    async def prepare(self) -> str:
        """Create the bucket, wake stream and subscriptions; the wake stream's tail to read from."""
        await self._api.ensure_bucket(WAKE_BUCKET)
        await self._api.create_json_stream(self.wake_stream)
        await self.subscribe()
        head = await self._api.head(self.wake_stream)
        tail = 0 if head is None else head.tail
        # Work may be outstanding from before (an earlier process, missed events).
        self._due.update(self._subs)
        self._due_event.set()
        return format_offset(tail)

    async def rescan_now(self) -> None:
        """List the streams again (after wakes may have been missed)."""
        await self._rescan()

    async def subscribe(self) -> bool:
        """Put every subscription; True when the server had lost (or never had) one."""
        created = False
        for sub_id, pattern in self._subs.items():
            body = {
                "type": "pull-wake",
                "pattern": pattern.text,
                "wake_stream": self.wake_stream,
                "lease_ttl_ms": LEASE_TTL_MS,
                "description": f"{self._group}: sync {pattern.text} into Postgres",
            }
            created = await self._api.put_subscription(sub_id, body) or created
        return created

    async def listen(self, start: str) -> None:
        """Read the wake stream from ``start`` until an error ends it (then prepare again)."""
        offset = start
        url = self._api.stream_url(self.wake_stream)
        while True:
            reader = SseReader(
                url,
                offset,
                self._wake_update,
                headers=await self._api.auth_headers(),
                content_type=JSON,
            )
            started = time.monotonic()
            await reader.read()
            offset = normal_offset(reader.offset)
            if time.monotonic() - started < 1.0:
                await asyncio.sleep(1.0)  # the connection ended at once: don't spin
            # The server ended the connection (its reconnect interval, or a restart):
            # make sure it still has our subscriptions before reading on.
            if await self.subscribe():
                log.warning("the server had lost ds-sync's subscriptions; rescanning")
                await self._rescan()

    def _wake_update(self, update: Update) -> None:
        for raw in update.messages:
            try:
                wake = _decode_wake(raw)
            except msgspec.DecodeError:
                continue
            if wake.subscription_id in self._subs:
                log.debug("wake of %s announced", wake.subscription_id)
                self._due.add(wake.subscription_id)
                self._due_event.set()

    async def claim_loop(self) -> None:
        """Claim due subscriptions, at most once per ``wake_interval_secs``, until cancelled."""
        backoff = Backoff()
        while True:
            await self._due_event.wait()
            self._due_event.clear()
            due, self._due = self._due, set()
            learnt = False
            for sub_id in sorted(due):
                try:
                    learnt = await self._claim(sub_id) or learnt
                    backoff.reset()
                except (
                    httpx.HTTPError,
                    UnexpectedStatusError,
                    OSError,
                    TimeoutError,
                    psycopg.Error,
                ) as exc:
                    self._metrics.server_errors += 1
                    self._due.add(sub_id)
                    self._due_event.set()
                    delay = backoff.next_delay()
                    log.warning("claiming %s failed (%s); retrying in %.2fs", sub_id, exc, delay)
                    await asyncio.sleep(delay)
            # A steady load keeps naming the same streams, already being read: claim less
            # often then; anything new brings the spacing back to one interval.
            self._spacing = 1 if learnt else min(self._spacing * 2, MAX_SPACING_FACTOR)
            await asyncio.sleep(self._interval_secs * self._spacing)

    async def _claim(self, sub_id: str) -> bool:
        """Claim, observe and ack; True when a named stream had no reader yet."""
        grant = await self._api.claim(sub_id, self._group)
        if not isinstance(grant, Grant):
            return False  # nothing pending, or a lease held by an earlier (killed) process
        self._metrics.wakes += 1
        if log.isEnabledFor(logging.DEBUG):
            tails = ", ".join(f"{s.path}@{s.tail_offset}" for s in grant.streams)
            log.debug("claimed %s (generation %d): %s", sub_id, grant.generation, tails)
        acks: list[tuple[str, str]] = []
        others: list[tuple[str, int]] = []
        learnt = False
        for stream in grant.streams:
            tail = parse_offset(stream.tail_offset)
            info = StreamInfo(path=stream.path, content_type=None, tail=tail)
            learnt = self._observe(info) or learnt
            if tail > parse_offset(stream.acked_offset):
                acks.append((stream.path, stream.tail_offset))
                others.append((stream.path, tail))
        if others and self._publish is not None and self._ownership.shared():
            # Committed before the ack: a claimer killed in between leaves the wake unacked.
            await self._publish(others)
            self._metrics.sightings_sent += len(others)
        try:
            await self._api.ack(sub_id, grant, acks)
        except UnexpectedStatusError as exc:
            # A stream shrank (deleted, made again) between claim and ack: hand the
            # wake back so the server announces it again with fresh tails.
            log.warning("ack of %s refused (%s); releasing the wake", sub_id, exc)
            await self._api.release(sub_id, grant)
        return learnt
