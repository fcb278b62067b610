"""Values passed between readers and the writer (what the server says about a stream is
``durable_sessions.protocol.listing.StreamInfo``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Status(enum.Enum):
    """A stream's sync status, as stored in ``sync_checkpoints.status``."""

    ACTIVE = "active"
    DONE = "done"
    DELETED = "deleted"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Read:
    """One read's messages, to be committed with the checkpoint move they imply.

    ``start`` is the offset the read began at (every row's ``ds_offset``),
    ``next_offset`` where the next read begins. ``gap_from`` is set when the
    read followed a 410: history from there to ``start`` was never synced.
    ``caught_up``: the read reached the stream's tail (what follows is live).
    """

    start: str
    next_offset: str
    messages: list[bytes]
    closed: bool = False
    gap_from: str | None = None
    caught_up: bool = False

    @property
    def begins_at(self) -> str:
        """Where the checkpoint must stand for this read to apply."""
        return self.start if self.gap_from is None else self.gap_from
