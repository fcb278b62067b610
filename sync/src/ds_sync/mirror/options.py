"""What the Postgres → stream components read of the settings (built by ``ds_sync.options``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pydantic import SecretStr


@dataclass(frozen=True, slots=True)
class FeedOptions:
    """A change feed's: the native feed's slot and polling, or where Electric is."""

    # The consumer group's name: replication slots are named after it.
    group: str
    poll_secs: float
    batch_rows: int
    max_slot_wal_keep_size: str
    slot_warn_mb: int
    electric_url: str | None
    electric_secret: SecretStr | None


@dataclass(frozen=True, slots=True)
class MirrorOptions:
    """``TableMirror``'s: its database, this process's name, the feed and the stream's limits."""

    postgres_url: str
    instance: str
    feed: Literal["native", "electric"]
    post_max_bytes: int
    compact_after_bytes: int
    feed_options: FeedOptions
