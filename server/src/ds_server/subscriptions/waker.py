"""Wakes: when one starts, how it reaches the consumer, and how it ends.

A subscription has at most one outstanding wake. It starts when a linked
stream has unacknowledged data and ends on ``done``, release or lease
expiry; if work is still pending then, the next generation starts at once.
Webhook wakes are POSTed (retried with backoff while the wake is current);
pull-wake wakes are announced on the wake stream and claimed by a worker.
Every transition runs under the subscription's lock; background steps
re-check that their wake is still the current one before acting.

A wake's generation is in storage before its token exists, and acks are in
storage before they are answered (``saver``). When storage fails where no
request waits for the outcome, the next wake is retried with backoff.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from ds_server import metrics
from ds_server.protocol.json_mode import JSON_CONTENT_TYPE
from ds_server.stores.base import AppendRequest
from ds_server.stores.errors import StoreError
from ds_server.subscriptions import render
from ds_server.subscriptions._tasks import cancel_unless_current
from ds_server.subscriptions.errors import AlreadyClaimed, NoPendingWork, StorageUnavailable
from ds_server.subscriptions.fencing import apply_acks, check_fence, pending, pick_trigger
from ds_server.subscriptions.fencing import validate_acks as checked_acks
from ds_server.subscriptions.model import StreamState, SubscriptionType, Wake
from ds_server.subscriptions.retry import backoff_seconds

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.stores.base import Store
    from ds_server.subscriptions._tasks import TaskOwner
    from ds_server.subscriptions.delivery import WebhookSender
    from ds_server.subscriptions.model import Subscription
    from ds_server.subscriptions.payloads import AckBody
    from ds_server.subscriptions.saver import Saver
    from ds_server.subscriptions.tokens import CallbackTokens
    from ds_server.subscriptions.wake_retention import WakeStreamRetention

log = logging.getLogger("ds_server.subscriptions")


class Waker:
    """Starts, delivers, leases and ends wakes."""

    def __init__(
        self,
        store: Store,
        tokens: CallbackTokens,
        sender: WebhookSender,
        tasks: TaskOwner,
        saver: Saver,
        retention: WakeStreamRetention,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._retention = retention
        self._saver = saver
        self._tokens = tokens
        self._sender = sender
        self._tasks = tasks
        self._clock = clock

    async def tail(self, path: str) -> int | None:
        """The stream's tail, or None when it does not exist (or is gone)."""
        try:
            return (await self._store.head(path)).tail
        except StoreError:
            return None

    async def stream_states(self, sub: Subscription) -> list[StreamState]:
        """Every linked stream with its ack position and current tail."""
        return [
            StreamState(path, link.link_type, link.acked, await self.tail(path))
            for path, link in sorted(sub.links.items())
        ]

    async def poke(self, sub: Subscription, path: str) -> None:
        """Data arrived on ``path``: save new links, start a wake unless one is outstanding."""
        async with sub.lock:
            sub.poke_scheduled = False
            await self.save_quietly(sub)
            await self.next_wake(sub, path)

    async def save_later(self, sub: Subscription) -> None:
        """Save link changes made outside the lock (by stream events)."""
        async with sub.lock:
            await self.save_quietly(sub)

    async def save_quietly(self, sub: Subscription) -> None:
        """Save what changed (lock held); on failure log it: the next save carries it."""
        try:
            await self._saver.save(sub)
        except StorageUnavailable as exc:
            log.warning("saving subscription %s failed: %s", sub.id, exc.__cause__)

    async def next_wake(self, sub: Subscription, preferred: str | None) -> bool:
        """``start_if_pending``, retried in the background while storage fails (lock held)."""
        try:
            return await self.start_if_pending(sub, preferred)
        except StorageUnavailable as exc:
            log.warning("starting a wake of %s failed: %s; retrying", sub.id, exc.__cause__)
            if not sub.wake_retrying:
                sub.wake_retrying = True
                self._tasks.spawn(self._retry_wake(sub, preferred), name=f"retry {sub.id}")
            return False

    async def _retry_wake(self, sub: Subscription, preferred: str | None) -> None:
        retries = 0
        try:
            while not sub.deleted:
                retries += 1
                await asyncio.sleep(backoff_seconds(retries))
                async with sub.lock:
                    try:
                        await self.start_if_pending(sub, preferred)
                        return
                    except StorageUnavailable:
                        continue
        finally:
            sub.wake_retrying = False

    async def start_if_pending(self, sub: Subscription, preferred: str | None) -> bool:
        """Start the next wake if none is outstanding and work is pending (lock held)."""
        if sub.deleted or sub.wake is not None:
            return False
        states = await self.stream_states(sub)
        if not pending(states):
            return False
        await self._open(sub, states, pick_trigger(states, preferred))
        return True

    async def _open(self, sub: Subscription, states: list[StreamState], trigger: str) -> Wake:
        sub.generation += 1
        # Durable before any token names it: a restarted server never reuses it.
        await self._saver.save(sub)
        wake = Wake(
            wake_id="w_" + secrets.token_hex(12),
            generation=sub.generation,
            snapshot=_snapshot(states),
            trigger=trigger,
        )
        name = f"wake {sub.id}#{wake.generation}"
        if sub.spec.type is SubscriptionType.WEBHOOK:
            wake = replace(wake, token=self._tokens.mint(sub.id, wake.generation, self._clock()))
            body = render.notification(sub, wake, states)
            self._tasks.spawn(self._deliver(sub, wake, body), name=name)
        else:
            self._tasks.spawn(self._announce(sub, wake), name=name)
        sub.wake = wake
        return wake

    def end(self, sub: Subscription) -> None:
        """Forget the outstanding wake, its token, holder and lease (lock held)."""
        sub.wake = None
        sub.lease_nonce += 1
        cancel_unless_current(sub.lease_task)
        sub.lease_task = None

    def start_lease(self, sub: Subscription) -> None:
        """(Re)start the lease of the outstanding wake, from now (lock held)."""
        assert sub.wake is not None
        cancel_unless_current(sub.lease_task)
        sub.lease_nonce += 1
        expiry = self._expire(sub, sub.wake.wake_id, sub.lease_nonce)
        sub.lease_task = self._tasks.spawn(expiry, name=f"lease {sub.id}")

    async def _expire(self, sub: Subscription, wake_id: str, nonce: int) -> None:
        await asyncio.sleep(sub.spec.lease_ttl_ms / 1000)
        async with sub.lock:
            wake = sub.wake
            # A newer lease or wake supersedes this timer.
            if wake is None or wake.wake_id != wake_id or sub.lease_nonce != nonce:
                return
            self.end(sub)
            await self.next_wake(sub, wake.trigger)

    async def claim(self, sub: Subscription, worker: str) -> render.JSON:
        """Give the outstanding (or a new) pull-wake to ``worker`` under a fresh lease."""
        async with sub.lock:
            wake = sub.wake
            if wake is not None and wake.holder is not None:
                raise AlreadyClaimed(current_holder=wake.holder, generation=wake.generation)
            states = await self.stream_states(sub)
            if not pending(states):
                if wake is not None:
                    self.end(sub)
                raise NoPendingWork()
            if wake is None:
                wake = await self._open(sub, states, pick_trigger(states, None))
            token = self._tokens.mint(sub.id, wake.generation, self._clock())
            wake = replace(wake, snapshot=_snapshot(states), token=token, holder=worker)
            sub.wake = wake
            self.start_lease(sub)
            return render.claim_grant(wake, states, sub.spec.lease_ttl_ms)

    async def settle(
        self, sub: Subscription, *, token: str, token_generation: int, body: AckBody
    ) -> bool:
        """Apply a callback/ack; True when ``done`` started the next wake at once."""
        acks = body.ack_pairs()
        async with sub.lock:
            wake = check_fence(
                sub.wake,
                token=token,
                token_generation=token_generation,
                wake_id=body.wake_id,
                generation=body.generation,
            )
            tails = {path: await self.tail(path) for path, _ in acks}
            sub.unsaved.update(apply_acks(sub.links, checked_acks(acks, sub.links, tails)))
            await self._saver.save(sub)  # answered only once durable
            if not body.done:
                self.start_lease(sub)
                return False
            self.end(sub)
            return await self.next_wake(sub, wake.trigger)

    async def release(
        self, sub: Subscription, *, token: str, token_generation: int, wake_id: str, generation: int
    ) -> None:
        """Give a claimed wake back without acking; pending work is re-announced."""
        async with sub.lock:
            wake = check_fence(
                sub.wake,
                token=token,
                token_generation=token_generation,
                wake_id=wake_id,
                generation=generation,
            )
            self.end(sub)
            await self.next_wake(sub, wake.trigger)

    async def _deliver(self, sub: Subscription, wake: Wake, body: bytes) -> None:
        assert sub.spec.webhook_url is not None
        while True:
            result = await self._sender.send(sub.spec.webhook_url, body)
            metrics.delivery("webhook", delivered=result.delivered)
            async with sub.lock:
                if not _is_current(sub, wake):
                    return
                if result.delivered:
                    sub.failed, sub.retry_count = False, 0
                    if not result.done:
                        self.start_lease(sub)
                        return
                    # A synchronous "done" acknowledges exactly what the wake showed.
                    sub.unsaved.update(apply_acks(sub.links, wake.snapshot))
                    await self.save_quietly(sub)
                    self.end(sub)
                    await self.next_wake(sub, wake.trigger)
                    return
                sub.failed = True
                sub.retry_count += 1
                delay = backoff_seconds(sub.retry_count)
            log.warning("webhook for %s failed (%s); retry in %.1fs", sub.id, result.detail, delay)
            await asyncio.sleep(delay)

    async def _announce(self, sub: Subscription, wake: Wake) -> None:
        assert sub.spec.wake_stream is not None
        event = render.wake_event(sub, wake, self._clock())
        request = AppendRequest(
            path=sub.spec.wake_stream, content_type=JSON_CONTENT_TYPE, messages=(event,)
        )
        retries = 0
        while _is_current(sub, wake):
            try:
                # Straight to the store: a wake stream's own appends must not wake anything.
                appended = await self._store.append(request)
            except StoreError as exc:
                metrics.delivery("wake-stream", delivered=False)
                sub.failed = True
                retries += 1
                delay = backoff_seconds(retries)
                log.warning("wake event for %s failed (%s); retry in %.1fs", sub.id, exc, delay)
                await asyncio.sleep(delay)
                continue
            metrics.delivery("wake-stream", delivered=True)
            sub.failed = False
            await self._retention.appended(request.path, appended.tail - len(event), appended.tail)
            return


def _snapshot(states: list[StreamState]) -> dict[str, int]:
    return {state.path: state.tail for state in states if state.tail is not None}


def _is_current(sub: Subscription, wake: Wake) -> bool:
    return not sub.deleted and sub.wake is not None and sub.wake.wake_id == wake.wake_id
