"""The subscription registry, and the stream-event observer that feeds it.

Subscriptions live in memory, per process (see ``model``). The manager keeps
which streams belong to which subscription and which streams are wake
channels; the ``Waker`` does everything about wakes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ds_server.events import StreamEvents
from ds_server.protocol.json_mode import is_json_content_type
from ds_server.stores.errors import StoreError
from ds_server.subscriptions import membership, render
from ds_server.subscriptions._tasks import TaskOwner, cancel_unless_current
from ds_server.subscriptions.delivery import WebhookSender
from ds_server.subscriptions.errors import (
    InvalidRequest,
    SubscriptionExists,
    SubscriptionNotFound,
    WakeStreamInvalid,
)
from ds_server.subscriptions.model import Subscription, SubscriptionType
from ds_server.subscriptions.signing import SigningKey
from ds_server.subscriptions.tokens import CallbackTokens
from ds_server.subscriptions.waker import Waker

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ds_server.stores.base import Store
    from ds_server.subscriptions.model import SubscriptionSpec
    from ds_server.subscriptions.payloads import AckBody, ReleaseBody


class SubscriptionManager(StreamEvents):
    """Creates, finds and deletes subscriptions; turns stream writes into wakes."""

    def __init__(
        self,
        store: Store,
        *,
        key: SigningKey | None = None,
        tokens: CallbackTokens | None = None,
        sender: WebhookSender | None = None,
        allow_private_webhooks: bool = False,
    ) -> None:
        self.store = store
        self._key = key
        self.tokens = tokens or CallbackTokens()
        self._sender = sender or WebhookSender(
            lambda: self.key, allow_private=allow_private_webhooks
        )
        self._tasks = TaskOwner()
        self.waker = Waker(store, self.tokens, self._sender, self._tasks)
        self._subs: dict[str, Subscription] = {}
        # Wake stream path -> ids of the pull-wake subscriptions announcing on it.
        self._wake_streams: dict[str, set[str]] = {}
        # Streams written since start, so a new pattern can adopt them at their
        # current tail (the store has no listing). Insertion-ordered set.
        self._written: dict[str, None] = {}

    @property
    def key(self) -> SigningKey:
        """The webhook signing key, made when first needed (a subscription or the JWKS)."""
        if self._key is None:
            self._key = SigningKey.generate()
        return self._key

    def get(self, sub_id: str) -> Subscription:
        """The subscription, or SubscriptionNotFound."""
        sub = self._subs.get(sub_id)
        if sub is None:
            raise SubscriptionNotFound(f"subscription {sub_id!r} not found")
        return sub

    async def put(self, spec: SubscriptionSpec, root_url: str) -> tuple[Subscription, bool]:
        """Create the subscription (True), or confirm an identical one (False)."""
        existing = self._subs.get(spec.id)
        if existing is None:
            if spec.wake_stream is not None:
                await self._check_wake_stream(spec.wake_stream)
            if any(self._is_wake_stream(path) for path in spec.streams):
                raise InvalidRequest("a wake stream cannot be a subscribed stream")
            existing = self._subs.get(spec.id)  # another PUT may have won meanwhile
        if existing is not None:
            if existing.spec != spec:
                raise SubscriptionExists()
            return existing, False
        sub = Subscription(spec=spec, root_url=root_url, created_at=time.time())
        # Registered before linking so no write in between goes unseen; the lock
        # keeps wakes from looking at a half-linked subscription.
        self._register(sub)
        async with sub.lock:
            for path in spec.streams:
                membership.link_explicit(sub, path, await self.waker.tail(path))
            if spec.pattern is not None:
                await self._adopt_written(sub)
        return sub, True

    async def delete(self, sub_id: str) -> None:
        """Forget the subscription and stop its timers; unknown ids are fine."""
        sub = self._subs.pop(sub_id, None)
        if sub is None:
            return
        sub.deleted = True
        cancel_unless_current(sub.lease_task)
        if sub.spec.wake_stream is not None:
            ids = self._wake_streams.get(sub.spec.wake_stream, set())
            ids.discard(sub_id)
            if not ids:
                self._wake_streams.pop(sub.spec.wake_stream, None)

    async def add_streams(self, sub_id: str, paths: Iterable[str]) -> None:
        """Link ``paths`` explicitly, from their current tails."""
        sub = self.get(sub_id)
        paths = list(paths)
        if any(self._is_wake_stream(path) for path in paths):
            raise InvalidRequest("a wake stream cannot be a subscribed stream")
        for path in paths:
            tail = await self.waker.tail(path)
            async with sub.lock:
                membership.link_explicit(sub, path, tail)

    async def remove_stream(self, sub_id: str, path: str) -> None:
        """Drop the explicit link of ``path`` (a no-op when it has none)."""
        sub = self.get(sub_id)
        async with sub.lock:
            membership.unlink_explicit(sub, path)

    def data_arrived(self, path: str) -> None:
        """A stream got data: link it where it matches and wake who needs waking."""
        if self._is_wake_stream(path):
            return
        self._written[path] = None
        for sub in self._subs.values():
            if membership.link_on_data(sub, path) and not sub.poke_scheduled:
                sub.poke_scheduled = True
                self._tasks.spawn(self.waker.poke(sub, path), name=f"poke {sub.id}")

    def stream_deleted(self, path: str) -> None:
        """A stream was deleted: glob links go, explicit links restart from zero."""
        self._written.pop(path, None)
        for sub in self._subs.values():
            membership.forget_stream(sub, path)

    async def settle(self, sub_id: str, kind: SubscriptionType, token: str, body: AckBody) -> bool:
        """A webhook callback or pull-wake ack; True when the next wake started at once."""
        generation = self.tokens.verify(sub_id, token, time.time())
        sub = self._typed(sub_id, kind)
        return await self.waker.settle(sub, token=token, token_generation=generation, body=body)

    async def claim(self, sub_id: str, worker: str) -> render.JSON:
        """Lease the pull-wake subscription's work to ``worker``."""
        return await self.waker.claim(self._typed(sub_id, SubscriptionType.PULL_WAKE), worker)

    async def release(self, sub_id: str, token: str, body: ReleaseBody) -> None:
        """Hand a claimed pull-wake back unacknowledged."""
        generation = self.tokens.verify(sub_id, token, time.time())
        sub = self._typed(sub_id, SubscriptionType.PULL_WAKE)
        await self.waker.release(
            sub,
            token=token,
            token_generation=generation,
            wake_id=body.wake_id,
            generation=body.generation,
        )

    async def close(self) -> None:
        """Cancel delivery and lease tasks; close the webhook client (app shutdown)."""
        for sub in self._subs.values():
            sub.deleted = True
        await self._tasks.close()
        await self._sender.close()

    def _register(self, sub: Subscription) -> None:
        self._subs[sub.id] = sub
        wake_stream = sub.spec.wake_stream
        if wake_stream is None:
            return
        self._wake_streams.setdefault(wake_stream, set()).add(sub.id)
        # A wake channel is never a member, or its own announcements would wake it.
        self._written.pop(wake_stream, None)
        for other in self._subs.values():
            if other.links.get(wake_stream) is not None:
                del other.links[wake_stream]

    async def _adopt_written(self, sub: Subscription) -> None:
        """Link matching streams that already hold data, at their current tail."""
        for path in list(self._written):
            if not membership.pattern_matches(sub, path) or self._is_wake_stream(path):
                continue
            tail = await self.waker.tail(path)
            if tail is None:
                # Expired or deleted behind our back: stop tracking it.
                self._written.pop(path, None)
            else:
                membership.link_existing(sub, path, tail)

    def _typed(self, sub_id: str, kind: SubscriptionType) -> Subscription:
        sub = self.get(sub_id)
        if sub.spec.type is not kind:
            raise InvalidRequest(f"{sub_id!r} is not a {kind.value} subscription")
        return sub

    def _is_wake_stream(self, path: str) -> bool:
        return path in self._wake_streams

    async def _check_wake_stream(self, path: str) -> None:
        try:
            info = await self.store.head(path)
        except StoreError:
            raise WakeStreamInvalid(f"wake_stream {path!r} does not exist") from None
        if info.closed or not is_json_content_type(info.content_type):
            raise WakeStreamInvalid()
