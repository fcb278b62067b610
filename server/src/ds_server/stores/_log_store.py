"""The Store every backend is: the stream engine with buckets and snapshots composed on it.

Every backend's Store is a ``LogStore`` given that backend's ``Persistence``
(``registry.open_store`` builds it from the settings); everything else is shared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._bootstrap import open_bootstrap
from ds_server.stores._buckets import Buckets
from ds_server.stores._engine import Engine
from ds_server.stores._quotas import NO_QUOTAS
from ds_server.stores._snapshots import Snapshots
from ds_server.stores.errors import QuotaExceeded

# The default of DS_LIMITS__MAX_SNAPSHOT_BYTES, for stores made without settings.
DEFAULT_MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024

if TYPE_CHECKING:
    from ds_server.live import LiveNotifier
    from ds_server.stores._quotas import QuotaPolicy
    from ds_server.stores.base import (
        BootstrapStart,
        BucketInfo,
        ReadResult,
        Retention,
        SnapshotInfo,
        StreamListing,
    )
    from ds_server.stores.persistence import Persistence


class LogStore(Engine):
    """A complete Store over ``persistence``."""

    def __init__(
        self,
        live: LiveNotifier,
        persistence: Persistence,
        *,
        max_retained_bytes: int,
        max_snapshot_bytes: int = DEFAULT_MAX_SNAPSHOT_BYTES,
        quotas: QuotaPolicy = NO_QUOTAS,
    ) -> None:
        super().__init__(live, persistence, max_retained_bytes=max_retained_bytes, quotas=quotas)
        self.buckets = Buckets(self, persistence)
        self.snapshots = Snapshots(self, persistence, max_bytes=max_snapshot_bytes)

    async def start(self) -> None:
        await self.buckets.load()
        await super().start()

    async def reload_buckets(self) -> None:
        await self.buckets.load()

    def watched_buckets(self) -> list[str]:
        return [*super().watched_buckets(), *self.buckets.ids()]

    async def _catch_up(self) -> None:
        """On a shared backend: see every change other processes committed before now."""
        await self.coherence.catch_up()

    # -- whole-message reads and bootstrap ---------------------------------------

    async def read_messages(
        self, path: str, start: int, max_bytes: int, *, retention: Retention | None = None
    ) -> ReadResult:
        entry = await self.lookup(path, touch=True)
        retained = retention is not None and retention.holds(entry.state.stream_id, start)
        return await self.read_from(
            entry, entry.info(), start, max_bytes, whole=True, retained=retained
        )

    async def begin_bootstrap(self, path: str, max_bytes: int) -> BootstrapStart:
        await self._catch_up()  # a snapshot published elsewhere moves the start
        return await open_bootstrap(self, path, max_bytes)

    async def retain(self, path: str, start: int) -> Retention:
        """Hold the stream's data from ``start`` on until :meth:`release`."""
        return await self.snapshots.retain(path, start)

    async def release(self, retention: Retention) -> None:
        await self.snapshots.release(retention)

    # -- buckets -------------------------------------------------------------------

    async def create_bucket(self, bucket_id: str) -> BucketInfo:
        await self._catch_up()
        return await self.buckets.create(bucket_id)

    async def get_bucket(self, bucket_id: str) -> BucketInfo:
        await self._catch_up()
        # Shared backends: the stored totals, not this process's cache of them.
        await self.reload_usage(bucket_id)
        return self.buckets.get(bucket_id)

    async def delete_bucket(self, bucket_id: str) -> None:
        await self._catch_up()
        await self.buckets.delete(bucket_id)

    async def list_bucket_streams(
        self, bucket_id: str, *, prefix: str, after: str | None, limit: int
    ) -> StreamListing:
        await self._catch_up()
        return self.buckets.list_streams(bucket_id, prefix=prefix, after=after, limit=limit)

    # -- snapshots -----------------------------------------------------------------

    async def publish_snapshot(
        self, path: str, offset: int, content_type: str, data: bytes
    ) -> SnapshotInfo:
        await self._catch_up()
        try:
            return await self.snapshots.publish(path, offset, content_type, data)
        except QuotaExceeded as error:
            await self.coherence.quota_refused(error, path)
        return await self.snapshots.publish(path, offset, content_type, data)

    async def read_snapshot(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]:
        await self._catch_up()
        return await self.snapshots.read(path, offset)

    async def delete_snapshot(self, path: str, offset: int) -> None:
        await self._catch_up()
        await self.snapshots.delete(path, offset)
