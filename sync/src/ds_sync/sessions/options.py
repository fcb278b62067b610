"""What the streams → Postgres components read of the settings, each its own part.

Built once from the settings (``ds_sync.options``), so a component's
constructor says what it depends on and a test builds just that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from durable_sessions.protocol.patterns import Pattern


@dataclass(frozen=True, slots=True)
class ReaderOptions:
    """``Streams``: which streams it reads, how many at once, and how it commits them."""

    patterns: tuple[Pattern, ...]
    max_readers: int
    # A reader with no data for this long closes its connection.
    idle_secs: float
    # Rows one commit takes, and a stream's reads waiting for one before its reader pauses.
    max_batch_rows: int
    commit_interval_secs: float


@dataclass(frozen=True, slots=True)
class LeaseOptions:
    """``ShardLeases``: the group and this process's name in it, the shards and their TTL."""

    group: str
    instance: str
    shards: int
    ttl_secs: float
