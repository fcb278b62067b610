"""Subscription configuration and live state.

The configuration is an immutable value; the live state is owned by the
manager and changed only under the subscription's lock. What outlives the
process (``storage``): the configuration, the links with their ack positions
and the last wake generation. An outstanding wake, its token holder and lease
live only in memory: after a restart, pending work wakes again under a new
generation.
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ds_server.protocol.offsets import BEGINNING_SENTINEL, format_offset

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_LEASE_TTL_MS = 30_000
MIN_LEASE_TTL_MS = 1_000
MAX_LEASE_TTL_MS = 600_000
# Acked position of a stream linked before any of its data was seen: renders as "-1".
NOTHING_ACKED = -1


class SubscriptionType(enum.Enum):
    WEBHOOK = "webhook"
    PULL_WAKE = "pull-wake"


@dataclass(frozen=True, slots=True)
class SubscriptionSpec:
    """What a client configured; two PUTs are identical when their specs are equal."""

    id: str
    type: SubscriptionType
    pattern: str | None
    streams: tuple[str, ...]  # explicit paths, sorted and deduplicated
    webhook_url: str | None
    wake_stream: str | None
    lease_ttl_ms: int
    description: str | None


@dataclass(slots=True)
class Link:
    """Why a stream belongs to a subscription, and how far it is acknowledged."""

    explicit: bool
    glob: bool
    acked: int  # byte position, or NOTHING_ACKED

    @property
    def link_type(self) -> str:
        return "explicit" if self.explicit else "glob"


@dataclass(frozen=True, slots=True)
class StreamState:
    """A linked stream as of one moment: its ack position and current tail."""

    path: str
    link_type: str
    acked: int
    tail: int | None  # None: the stream does not exist (right now)

    @property
    def has_pending(self) -> bool:
        return self.tail is not None and self.tail > max(self.acked, 0)


@dataclass(frozen=True, slots=True)
class Wake:
    """One outstanding wake: a generation, its stream snapshot and who holds it."""

    wake_id: str
    generation: int
    snapshot: Mapping[str, int]  # path -> tail when the wake was made (or claimed)
    trigger: str  # the stream that caused it
    token: str | None = None  # webhook: minted at wake time; pull-wake: at claim
    holder: str | None = None  # pull-wake worker


@dataclass(slots=True, eq=False)
class Subscription:
    spec: SubscriptionSpec
    # Public URL of the stream root the client used, e.g. "http://host:4437/v1/stream".
    root_url: str
    created_at: float
    links: dict[str, Link] = field(default_factory=dict)
    generation: int = 0
    # What storage holds: the generation, and paths whose link changed since.
    saved_generation: int = 0
    unsaved: set[str] = field(default_factory=set)
    wake: Wake | None = None
    failed: bool = False  # the last webhook delivery / wake append failed; retrying
    retry_count: int = 0
    lease_nonce: int = 0
    lease_task: asyncio.Task[None] | None = None
    poke_scheduled: bool = False
    wake_retrying: bool = False  # a background retry of the next wake is running
    deleted: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def status(self) -> str:
        return "failed" if self.failed else "active"

    @property
    def dirty(self) -> bool:
        """Whether the live state differs from what storage holds."""
        return bool(self.unsaved) or self.generation != self.saved_generation


def offset_text(position: int) -> str:
    """A position as a protocol offset; NOTHING_ACKED is ``-1``."""
    return BEGINNING_SENTINEL if position < 0 else format_offset(position)
