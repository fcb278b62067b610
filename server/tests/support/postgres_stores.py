"""Postgres-backed stores for the store suites: one, or two sharing a schema (two replicas)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from ds_server.live import LiveNotifier
from ds_server.postgres_database import PostgresDatabase
from ds_server.stores._log_store import LogStore
from ds_server.stores._postgres import PostgresPersistence
from ds_server.stores._quotas import NO_QUOTAS
from ds_server.stores._rules import StreamState
from ds_server.stores.base import Expiry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.stores._quotas import QuotaPolicy

BYTES = "application/octet-stream"


async def started_postgres(
    url: str, schema: str, *, quotas: QuotaPolicy = NO_QUOTAS, **options: Any
) -> LogStore:
    """A started store on Postgres ``schema`` (a 1 GiB stream limit unless ``options`` say)."""
    live = LiveNotifier()
    live.bind(asyncio.get_running_loop())
    backend = PostgresPersistence(PostgresDatabase(url, schema=schema), quotas=quotas)
    store = LogStore(live, backend, quotas=quotas, **{"max_retained_bytes": 1 << 30, **options})
    await store.start()
    return store


@contextlib.asynccontextmanager
async def replica_pair(
    url: str, schema: str, **options: Any
) -> AsyncIterator[tuple[LogStore, LogStore]]:
    """Two started stores on one schema, stopped after the block."""
    first = await started_postgres(url, schema, **options)
    try:
        second = await started_postgres(url, schema, **options)
        try:
            yield first, second
        finally:
            await second.stop()
    finally:
        await first.stop()


def new_state(stream_id: str, path: str) -> StreamState:
    """An empty byte stream's state, as a backend would store it on create."""
    return StreamState(
        stream_id=stream_id,
        path=path,
        content_type=BYTES,
        created_at=1.0,
        expiry=Expiry(),
        last_access=1.0,
        tail=0,
    )
