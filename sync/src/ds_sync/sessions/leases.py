"""Shard leases: how several ds-sync processes divide the session streams (a consumer group).

The streams are divided into ``DS_SYNC__SHARDS`` shards (``shards.shard_of``).
Each shard is a pull-wake subscription on ds-server, ``{name}-shard-{k}``,
explicitly linked to one stream that always has unacknowledged data
(``ds-sync/{name}-leases``). Claiming it takes the shard's lease, with what
the server guarantees of a claim: one holder at a time, a generation that
grows with every new holder (a holder whose lease ran out is fenced: its
renewals answer 409), and a TTL (``DS_SYNC__LEASE_TTL_SECS``). The holder
renews every third of the TTL (an ack of nothing, ``done: false``) and never
acks the lease stream. A process that dies stops renewing; its leases run
out, the server announces each shard again on ``ds-sync/{name}-lease-wakes``
and a live process claims it. A process that stops cleanly releases its
shards, and they are taken over at once.

Who takes how many: with every renewal each process writes a heartbeat row
in ``sync_instances`` (the shards it holds). With N live processes each aims
at ceil(shards / N): it releases shards above that and claims free ones
below it.

A lease says who reads a shard; it is not what keeps rows exactly once:
the checkpoint compare-and-set is (``writer``). A process that lost a lease
without knowing it (paused past the TTL) stops reading and committing the
shard at the lease's local deadline; until then its commits and the new
holder's meet at the checkpoint, where only one of two commits of the same
rows can apply.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import msgspec
import psycopg
from durable_sessions.async_server import UnexpectedStatusError
from durable_sessions.protocol.offsets import format_offset, normal_offset
from durable_sessions.protocol.subscriptions import NO_PENDING_WORK, Grant
from durable_sessions.sse_reader import SseReader

from ds_sync.backoff import Backoff
from ds_sync.sessions.shards import shard_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from durable_sessions import Update
    from durable_sessions.async_server import AsyncStreamServer
    from psycopg_pool import AsyncConnectionPool

    from ds_sync.metrics import Metrics
    from ds_sync.sessions.options import LeaseOptions

log = logging.getLogger("ds_sync.leases")

LEASE_BUCKET = "ds-sync"
# Claim tokens live an hour on ds-server: a lease is handed back and claimed again before.
ROTATE_AFTER_SECS = 50 * 60
# A heartbeat row older than this many TTLs is a process that is gone.
LIVE_WITHIN_TTLS = 1.0
_LEASE_MESSAGE = b'[{"type":"lease","note":"never acked: the shards of this group lease it"}]'
_HEARTBEAT = """
INSERT INTO sync_instances (consumer, instance, shards) VALUES (%s, %s, %s)
ON CONFLICT (consumer, instance) DO UPDATE SET shards = EXCLUDED.shards, seen_at = now()
"""
# A process that is gone (SIGKILLed, its host lost) never deletes its row, and
# every restart of `{hostname}-{pid}` adds one: rows unseen this long, of any
# group, are deleted by whichever process renews next. Far past any TTL (60 s at most),
# so an operator still sees a process that died recently.
FORGET_AFTER_SECS = 3600
_LIVE = """
WITH forgotten AS (
    DELETE FROM sync_instances WHERE (consumer, instance) IN (
        SELECT consumer, instance FROM sync_instances
        WHERE seen_at < now() - make_interval(secs => %s)
        FOR UPDATE SKIP LOCKED  -- another process deleting them: never wait on it
    )
)
SELECT instance, shards FROM sync_instances
WHERE consumer = %s AND instance <> %s AND seen_at > now() - make_interval(secs => %s)
"""


class _Wake(msgspec.Struct):
    subscription_id: str


_decode_wake = msgspec.json.Decoder(_Wake).decode


@dataclass(slots=True)
class Lease:
    """A held shard: the claim that is our lease, and until when it surely is ours."""

    grant: Grant
    deadline: float  # time.monotonic(): renewed before this, the lease is still ours
    claimed_at: float


class ShardLeases:
    """This process's shard leases: claims, renewals, releases, and the share it aims at."""

    def __init__(
        self,
        options: LeaseOptions,
        api: AsyncStreamServer,
        pool: AsyncConnectionPool,
        metrics: Metrics,
        *,
        on_gained: Callable[[set[int]], None],
        on_lost: Callable[[set[int]], None],
        on_resumed: Callable[[set[int]], None],
    ) -> None:
        self._api = api
        self._pool = pool
        self._metrics = metrics
        self._on_gained = on_gained
        self._on_lost = on_lost
        self._on_resumed = on_resumed
        self.shards = options.shards
        self.instance = options.instance
        self._name = options.group
        self._ttl = options.ttl_secs
        self.lease_stream = f"{LEASE_BUCKET}/{options.group}-leases"
        self.wake_stream = f"{LEASE_BUCKET}/{options.group}-lease-wakes"
        self.held: dict[int, Lease] = {}
        self.others: dict[str, list[int]] = {}  # live processes of the group, and their shards
        self._claiming = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    def sub_id(self, shard: int) -> str:
        return f"{self._name}-shard-{shard}"

    def owns(self, path: str) -> bool:
        """Whether this process holds the lease of ``path``'s shard right now."""
        lease = self.held.get(shard_of(path, self.shards))
        return lease is not None and time.monotonic() < lease.deadline

    def shared(self) -> bool:
        """Whether other live processes share the work (as of the last heartbeat)."""
        return bool(self.others)

    @property
    def quota(self) -> int:
        """The shards this process aims to hold: its share among the live processes."""
        return math.ceil(self.shards / (len(self.others) + 1))

    async def prepare(self) -> str:
        """Streams and subscriptions; the first heartbeat and claims (so the first scan
        already knows which streams are ours); the lease-wake stream's tail to read from."""
        await self._api.ensure_bucket(LEASE_BUCKET)
        await self._api.create_json_stream(self.lease_stream)
        await self._api.create_json_stream(self.wake_stream)
        for shard in range(self.shards):
            body = {
                "type": "pull-wake",
                "streams": [self.lease_stream],
                "wake_stream": self.wake_stream,
                "lease_ttl_ms": int(self._ttl * 1000),
                "description": f"{self._name}: the lease of shard {shard} of {self.shards}",
            }
            await self._api.put_subscription(self.sub_id(shard), body)
        head = await self._api.head(self.wake_stream)
        await self._heartbeat()
        await self._balance()
        return format_offset(0 if head is None else head.tail)

    async def run(self, start: str) -> None:
        """Renew, heartbeat and balance every third of the TTL; claim announced shards."""
        listener = asyncio.create_task(self._listen(start), name="lease wakes")
        try:
            while True:
                await asyncio.sleep(self._ttl / 3)
                try:
                    await self._renew_all()
                    await self._heartbeat()
                    await self._balance()
                except (psycopg.Error, OSError, TimeoutError, UnexpectedStatusError) as exc:
                    # Leases still run to their deadlines; the next tick tries again.
                    self._metrics.server_errors += 1
                    log.warning("shard leases: %s: %s", type(exc).__name__, exc)
                    self._expire_overdue()
        finally:
            listener.cancel()

    async def stop(self) -> None:
        """Hand every lease back (others take the shards over at once); leave the group."""
        held, self.held = self.held, {}
        for shard, lease in sorted(held.items()):
            try:
                await self._api.release(self.sub_id(shard), lease.grant)
            except (UnexpectedStatusError, OSError, TimeoutError, httpx.HTTPError) as exc:
                log.info("releasing shard %d: %s (its lease runs out instead)", shard, exc)
        try:
            async with self._pool.connection() as conn:
                await conn.execute(
                    "DELETE FROM sync_instances WHERE consumer = %s AND instance = %s",
                    (self._name, self.instance),
                )
        except psycopg.Error as exc:
            log.info("leaving sync_instances: %s", exc)

    # Claims and releases.

    async def _claim(self, shard: int) -> bool:
        """Try to take the shard's lease; True when it is ours now."""
        sent = time.monotonic()
        found = await self._api.claim(self.sub_id(shard), self.instance)
        if found == NO_PENDING_WORK:
            # A group made just now: give the lease stream the message nobody acks.
            await self._api.append_json(self.lease_stream, _LEASE_MESSAGE)
            sent = time.monotonic()
            found = await self._api.claim(self.sub_id(shard), self.instance)
        if not isinstance(found, Grant):
            return False
        self.held[shard] = Lease(found, sent + self._ttl, sent)
        self._metrics.shards_gained += 1
        log.info("shard %d is ours now (generation %d)", shard, found.generation)
        self._on_gained({shard})
        return True

    async def _release(self, shard: int) -> None:
        lease = self.held.pop(shard, None)
        if lease is None:
            return
        self._on_lost({shard})
        self._metrics.shards_released += 1
        try:
            await self._api.release(self.sub_id(shard), lease.grant)
        except UnexpectedStatusError as exc:
            log.info("releasing shard %d: %s", shard, exc)

    def _lose(self, shard: int, why: str) -> None:
        if self.held.pop(shard, None) is not None:
            self._metrics.shards_lost += 1
            log.warning("shard %d: lease lost (%s); its streams are left to others", shard, why)
            self._on_lost({shard})

    def _expire_overdue(self) -> None:
        now = time.monotonic()
        for shard in [s for s, lease in self.held.items() if now >= lease.deadline]:
            self._lose(shard, "not renewed in time")

    async def _renew_all(self) -> None:
        """Renew every lease at once (one round trip, not one per shard: a slow round would
        let the last shards' local deadlines pass)."""
        for shard, lease in list(self.held.items()):
            if time.monotonic() - lease.claimed_at > ROTATE_AFTER_SECS:
                # The claim's token expires after an hour: hand it back and take it anew.
                async with self._claiming:
                    await self._release(shard)
                    await self._claim(shard)
        held = list(self.held.items())
        outcomes = await asyncio.gather(
            *(self._renew(shard, lease) for shard, lease in held), return_exceptions=True
        )
        resumed = {s for (s, _), outcome in zip(held, outcomes, strict=True) if outcome is True}
        self._expire_overdue()
        if resumed:
            # While the local deadline had passed, wakes and reads of these shards' streams
            # were set aside (``owns`` said no); the server kept the lease, so act on them now.
            self._on_resumed(resumed)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _renew(self, shard: int, lease: Lease) -> bool:
        """Renew one lease; True when it is ours again after its local deadline had passed."""
        sent = time.monotonic()
        try:
            await self._api.renew(self.sub_id(shard), lease.grant)
        except UnexpectedStatusError as exc:
            if exc.status in (401, 404, 409):  # fenced, expired or gone: no longer ours
                self._lose(shard, str(exc))
                return False
            raise
        if self.held.get(shard) is not lease:
            return False
        lapsed = time.monotonic() >= lease.deadline
        if lapsed:
            log.info(
                "shard %d: renewed %.2fs after its local deadline; reading its streams again",
                shard,
                time.monotonic() - lease.deadline,
            )
        lease.deadline = sent + self._ttl
        return lapsed

    async def _heartbeat(self) -> None:
        """Record what this process holds; learn who else is alive and what they hold."""
        async with self._pool.connection() as conn:
            await conn.execute(_HEARTBEAT, (self._name, self.instance, sorted(self.held)))
            cursor = await conn.execute(
                _LIVE,
                (FORGET_AFTER_SECS, self._name, self.instance, self._ttl * LIVE_WITHIN_TTLS),
            )
            rows = await cursor.fetchall()
        self.others = {str(instance): list(shards or []) for instance, shards in rows}
        self._metrics.instances = len(self.others) + 1
        self._metrics.shards_held = len(self.held)

    async def _balance(self) -> None:
        """Release shards above this process's share; claim free ones below it."""
        async with self._claiming:
            quota = self.quota
            for shard in sorted(self.held, reverse=True)[: max(0, len(self.held) - quota)]:
                log.info("handing shard %d back: %d processes share the work", shard, quota)
                await self._release(shard)
            if len(self.held) >= quota:
                return
            taken = {shard for shards in self.others.values() for shard in shards}
            for shard in range(self.shards):
                if len(self.held) >= quota:
                    break
                if shard not in self.held and shard not in taken:
                    await self._claim(shard)
            self._metrics.shards_held = len(self.held)

    # Announcements of shards whose lease ran out or was handed back.

    async def _listen(self, start: str) -> None:
        offset = start
        backoff = Backoff(cap=10.0)
        url = self._api.stream_url(self.wake_stream)
        while True:
            reader = SseReader(url, offset, self._announced, headers=await self._api.auth_headers())
            try:
                await reader.read()
                backoff.reset()
            except Exception as exc:  # the server away, the stream gone: the ticks go on
                delay = backoff.next_delay()
                log.warning("lease wakes: %s: %s; again in %.2fs", type(exc).__name__, exc, delay)
                await asyncio.sleep(delay)
            offset = normal_offset(reader.offset)
            await asyncio.sleep(0.5)  # at most two connections a second

    def _announced(self, update: Update) -> None:
        prefix = f"{self._name}-shard-"
        for raw in update.messages:
            try:
                wake = _decode_wake(raw)
            except msgspec.DecodeError:
                continue
            number = wake.subscription_id.removeprefix(prefix)
            if wake.subscription_id.startswith(prefix) and number.isdigit():
                shard = int(number)
                if shard < self.shards and shard not in self.held:
                    task = asyncio.ensure_future(self._take_announced(shard))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)

    async def _take_announced(self, shard: int) -> None:
        async with self._claiming:
            if shard in self.held or len(self.held) >= self.quota:
                return  # the next tick claims it if nobody else did
            try:
                await self._claim(shard)
            except (UnexpectedStatusError, OSError, TimeoutError) as exc:
                log.info("claiming announced shard %d: %s", shard, exc)
