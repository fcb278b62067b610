"""The subscription registry, and the stream-event observer that feeds it.

The manager keeps which streams belong to which subscription and which
streams are wake channels; the ``Waker`` does everything about wakes.
Subscriptions outlive the process in ``storage``: ``start`` loads them all
(before the server answers anything) and every change a request makes is
stored before it is answered.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import TYPE_CHECKING

from ds_server.protocol.json_mode import is_json_content_type
from ds_server.stores.errors import StoreError
from ds_server.stream_observer import StreamObserver
from ds_server.subscriptions import membership, render, restore
from ds_server.subscriptions._tasks import TaskOwner, cancel_unless_current
from ds_server.subscriptions.delivery import WebhookSender
from ds_server.subscriptions.errors import (
    InvalidRequest,
    SubscriptionExists,
    SubscriptionNotFound,
    WakeStreamInvalid,
)
from ds_server.subscriptions.model import Subscription, SubscriptionType
from ds_server.subscriptions.saver import Saver
from ds_server.subscriptions.signing import SigningKey
from ds_server.subscriptions.storage import MemorySubscriptionStorage
from ds_server.subscriptions.tokens import CallbackTokens
from ds_server.subscriptions.wake_retention import WakeStreamRetention
from ds_server.subscriptions.waker import Waker

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ds_server.stores.base import Store
    from ds_server.subscriptions.model import SubscriptionSpec
    from ds_server.subscriptions.payloads import AckBody, ReleaseBody
    from ds_server.subscriptions.storage import SubscriptionStorage

# DS_SUBSCRIPTIONS__WAKE_STREAM_RETAINED_BYTES's default, for managers made without settings.
DEFAULT_WAKE_STREAM_RETAINED_BYTES = 1024 * 1024
# Names of the server's secrets in subscription storage.
TOKEN_SECRET = "callback-token-key"
SIGNING_KEY = "webhook-signing-key"


class SubscriptionManager(StreamObserver):
    """Creates, finds and deletes subscriptions; turns stream writes into wakes."""

    def __init__(
        self,
        store: Store,
        *,
        storage: SubscriptionStorage | None = None,
        key: SigningKey | None = None,
        tokens: CallbackTokens | None = None,
        sender: WebhookSender | None = None,
        allow_private_webhooks: bool = False,
        wake_stream_retained_bytes: int = DEFAULT_WAKE_STREAM_RETAINED_BYTES,
    ) -> None:
        self.store = store
        self.storage = storage or MemorySubscriptionStorage()
        self._saver = Saver(self.storage)
        self._key = key
        # Stored private key bytes, made into a key only when one is needed.
        self._stored_key: bytes | None = None
        self._key_saved = key is not None
        self._given_tokens = tokens is not None
        self.tokens = tokens or CallbackTokens()
        self._sender = sender or WebhookSender(
            lambda: self.key, allow_private=allow_private_webhooks
        )
        self._tasks = TaskOwner()
        self.wake_retention = WakeStreamRetention(store, wake_stream_retained_bytes)
        self.waker = Waker(
            store, self.tokens, self._sender, self._tasks, self._saver, self.wake_retention
        )
        self._subs: dict[str, Subscription] = {}
        # Serializes creates and deletes, so storage sees them in answer order.
        self._registry = asyncio.Lock()
        # Wake stream path -> ids of the pull-wake subscriptions announcing on it.
        self._wake_streams: dict[str, set[str]] = {}
        # Streams written since start, so a new pattern can adopt them at their
        # current tail (the store has no listing). Insertion-ordered set.
        self._written: dict[str, None] = {}

    async def start(self) -> None:
        """Open storage and load every subscription; pending work wakes again.

        Call once the stream store is open and before serving. Outstanding
        wakes of before are gone: each subscription with pending work gets a
        new one, with a generation above every one handed out before.
        """
        await self.storage.open()
        if not self._given_tokens:
            stored = await self.storage.keep_secret(TOKEN_SECRET, secrets.token_bytes(32))
            self.tokens.use_secret(stored)
        if self._key is None:
            self._stored_key = await self.storage.get_secret(SIGNING_KEY)
            self._key_saved = self._stored_key is not None
        loaded = [restore.revive(stored) for stored in await self.storage.load_all()]
        for sub in loaded:
            self._register(sub)
        for sub in loaded:
            for path in await restore.reconcile(sub, self.waker.tail):
                self._written[path] = None
        for sub in loaded:
            async with sub.lock:
                await self.waker.save_quietly(sub)
                await self.waker.next_wake(sub, None)

    @property
    def key(self) -> SigningKey:
        """The webhook signing key: the stored one, else made when first needed."""
        if self._key is None:
            if self._stored_key is not None:
                self._key = SigningKey.from_private_bytes(self._stored_key)
            else:
                self._key = SigningKey.generate()
        return self._key

    async def _keep_key(self) -> None:
        """Store the signing key before a webhook subscription points at it."""
        if self._key_saved:
            return
        stored = await self._saver.keep_secret(SIGNING_KEY, self.key.private_bytes())
        if stored != self.key.private_bytes():  # another process stored one first
            self._key = SigningKey.from_private_bytes(stored)
        self._key_saved = True

    def get(self, sub_id: str) -> Subscription:
        """The subscription, or SubscriptionNotFound."""
        sub = self._subs.get(sub_id)
        if sub is None:
            raise SubscriptionNotFound(f"subscription {sub_id!r} not found")
        return sub

    async def put(self, spec: SubscriptionSpec, root_url: str) -> tuple[Subscription, bool]:
        """Create the subscription (True), or confirm an identical one (False)."""
        async with self._registry:
            existing = self._subs.get(spec.id)
            if existing is not None:
                if existing.spec != spec:
                    raise SubscriptionExists()
                return existing, False
            if spec.wake_stream is not None:
                await self._check_wake_stream(spec.wake_stream)
            if any(self._is_wake_stream(path) for path in spec.streams):
                raise InvalidRequest("a wake stream cannot be a subscribed stream")
            if spec.type is SubscriptionType.WEBHOOK:
                await self._keep_key()
            sub = Subscription(spec=spec, root_url=root_url, created_at=time.time())
            # Registered before linking so no write in between goes unseen; the lock
            # keeps wakes from looking at a half-linked subscription.
            self._register(sub)
            try:
                async with sub.lock:
                    for path in spec.streams:
                        membership.link_explicit(sub, path, await self.waker.tail(path))
                    if spec.pattern is not None:
                        await self._adopt_written(sub)
                    await self._saver.create(sub)
            except BaseException:
                self._unregister(sub)
                raise
        return sub, True

    async def delete(self, sub_id: str) -> None:
        """Forget the subscription and stop its timers; unknown ids are fine."""
        async with self._registry:
            sub = self._subs.get(sub_id)
            if sub is None:
                return
            async with sub.lock:
                await self._saver.delete(sub_id)
                self._unregister(sub)

    async def add_streams(self, sub_id: str, paths: Iterable[str]) -> None:
        """Link ``paths`` explicitly, from their current tails."""
        sub = self.get(sub_id)
        paths = list(paths)
        if any(self._is_wake_stream(path) for path in paths):
            raise InvalidRequest("a wake stream cannot be a subscribed stream")
        tails = {path: await self.waker.tail(path) for path in paths}
        async with sub.lock:
            self._check_live(sub)
            for path in paths:
                membership.link_explicit(sub, path, tails[path])
            await self._saver.save(sub)

    async def remove_stream(self, sub_id: str, path: str) -> None:
        """Drop the explicit link of ``path`` (a no-op when it has none)."""
        sub = self.get(sub_id)
        async with sub.lock:
            self._check_live(sub)
            membership.unlink_explicit(sub, path)
            await self._saver.save(sub)

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
            self._save_later(sub)

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
        """Cancel delivery and lease tasks; close the webhook client and storage."""
        for sub in self._subs.values():
            sub.deleted = True
        await self._tasks.close()
        await self._sender.close()
        await self.storage.close()

    def _register(self, sub: Subscription) -> None:
        self._subs[sub.id] = sub
        wake_stream = sub.spec.wake_stream
        if wake_stream is None:
            return
        self._wake_streams.setdefault(wake_stream, set()).add(sub.id)
        # A wake channel is never a member, or its own announcements would wake it.
        self._written.pop(wake_stream, None)
        for other in self._subs.values():
            if wake_stream in other.links:
                membership.unlink(other, wake_stream)
                self._save_later(other)

    def _unregister(self, sub: Subscription) -> None:
        self._subs.pop(sub.id, None)
        sub.deleted = True
        cancel_unless_current(sub.lease_task)
        if sub.spec.wake_stream is not None:
            ids = self._wake_streams.get(sub.spec.wake_stream, set())
            ids.discard(sub.id)
            if not ids:
                self._wake_streams.pop(sub.spec.wake_stream, None)
                self.wake_retention.forget(sub.spec.wake_stream)

    def _save_later(self, sub: Subscription) -> None:
        """Store link changes a stream event made, once the lock is free."""
        if sub.unsaved and sub.id in self._subs:
            self._tasks.spawn(self.waker.save_later(sub), name=f"save {sub.id}")

    def _check_live(self, sub: Subscription) -> None:
        if sub.deleted:
            raise SubscriptionNotFound(f"subscription {sub.id!r} not found")

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
