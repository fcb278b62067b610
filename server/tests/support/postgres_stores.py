"""Postgres-backed stores for the store suites: one, or two sharing a schema (two replicas)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from ds_server.live import LiveNotifier
from ds_server.stores._rules import StreamState
from ds_server.stores.base import Expiry
from ds_server.stores.postgres import PostgresStore

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

BYTES = "application/octet-stream"


async def started_postgres(url: str, schema: str, **options: Any) -> PostgresStore:
    """A started ``PostgresStore`` on ``schema`` (a 1 GiB stream limit unless ``options`` say)."""
    live = LiveNotifier()
    live.bind(asyncio.get_running_loop())
    store = PostgresStore(live, url, **{"max_retained_bytes": 1 << 30, **options}, schema=schema)
    await store.start()
    return store


@contextlib.asynccontextmanager
async def replica_pair(
    url: str, schema: str, **options: Any
) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
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
