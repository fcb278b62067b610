"""The change-feed interface, and the implementations chosen by name.

A feed delivers one table's committed changes in commit order, in batches,
each with the feed's position after it. The mirror stores that position
with the batch it delivered and hands it back after a restart; the feed
then resumes right after the batch. A feed starting without a position (or
starting over) sends a snapshot of the table first, between
``snapshot-start`` and ``snapshot-end``.

Two implementations, chosen by ``Settings.change_feed``: ``native``
(Postgres's logical decoding, read through a replication slot) and
``electric`` (Electric's Shape API). Like uvicorn's loop and protocol
tables, the registry names them as ``module:Class`` and imports only the
one in use.
"""

from __future__ import annotations

import abc
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

    from ds_sync.metrics import TableMetrics
    from ds_sync.mirror.model import FeedBatch, TableShape
    from ds_sync.mirror.options import FeedOptions
    from ds_sync.table_names import TableName

FEEDS: dict[str, str] = {
    "native": "ds_sync.mirror.native:NativeFeed",
    "electric": "ds_sync.mirror.electric:ElectricFeed",
}


@dataclass(frozen=True, slots=True)
class FeedContext:
    """What a feed works with: its table, its options, and connections of its own."""

    table: TableName
    shape: TableShape  # as the catalog said when the feed was made
    options: FeedOptions
    conn: AsyncConnection[TupleRow]  # this table's alone (the native feed's slot session)
    http: httpx.AsyncClient
    metrics: TableMetrics


class ChangeFeed(abc.ABC):
    """One table's committed changes, batch by batch."""

    def __init__(self, context: FeedContext) -> None:
        self.context = context

    @abc.abstractmethod
    async def start(self, position: bytes | None) -> None:
        """Prepare to read after ``position`` (None: from a snapshot of the table).

        Raises TableRefused when the table can't be mirrored as it is.
        """

    @abc.abstractmethod
    async def next_batch(self) -> FeedBatch:
        """Wait for the next batch. Its items may be empty when only the position moved."""

    async def delivered(self, position: bytes) -> None:  # noqa: B027 - optional
        """Everything up to ``position`` is stored: what it took to get there may be released."""

    async def close(self) -> None:  # noqa: B027 - optional
        """Release what the feed holds besides the context's connection."""


def feed_class(name: str) -> type[ChangeFeed]:
    """The implementation registered as ``name``."""
    module_name, _, class_name = FEEDS[name].partition(":")
    found: type[ChangeFeed] = getattr(importlib.import_module(module_name), class_name)
    return found
