"""Values of the Postgres → stream direction: changes, control points, batches, table shapes."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

# A row as JSON values (sessions.md §4's mapping); json/jsonb columns as msgspec.Raw.
Row = dict[str, Any]


class Control(enum.Enum):
    """State Protocol control messages (``headers.control``)."""

    SNAPSHOT_START = "snapshot-start"
    SNAPSHOT_END = "snapshot-end"
    RESET = "reset"


@dataclass(frozen=True, slots=True)
class Change:
    """One committed row change, ready to become a State Protocol change message."""

    operation: str  # insert, update or delete
    key: str
    value: Row | None  # the row after (None for delete)
    old_value: Row | None  # the row before (update, delete)
    txid: str | None  # None: the feed doesn't know it (Electric's snapshot rows)
    timestamp: str  # RFC 3339: the commit time, else when ds-sync read the change


Item = Change | Control


@dataclass(frozen=True, slots=True)
class FeedBatch:
    """Changes and control points in commit order, and the feed's position after them.

    ``position`` is the feed's own JSON: handed back to the feed after a
    restart, it resumes right after the last item.
    """

    items: tuple[Item, ...]
    position: bytes
    committed_at: float | None = None  # Unix time of the last commit in the batch, when known


@dataclass(frozen=True, slots=True)
class Column:
    """A column's name and its type name (a domain's base type; ``_int4`` for arrays)."""

    name: str
    type_name: str
    is_array: bool = False


@dataclass(frozen=True, slots=True)
class TableShape:
    """What the catalog says of a mirrored table: its columns and primary key, in key order."""

    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    replica_identity_full: bool


class TableRefused(Exception):
    """The table can't be mirrored as it is (missing, no primary key, ...); the message says why."""


class FeedError(Exception):
    """The feed failed in a way a retry may cure (the message says how)."""
