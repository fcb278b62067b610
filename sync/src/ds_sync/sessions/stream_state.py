"""One synced stream as ds-sync knows it: checkpoint, what the server reported, and the
chain of reads handed over but not yet committed.

A reader does not wait for commits: its reads queue up here, each
beginning where the one before ended, and the writer takes the whole
queue (a ``Chain``) once per tick. The chain applies only on top of the
committed checkpoint, and only one chain per stream is in a transaction at
a time, so a stream's rows still commit in stream order.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from durable_sessions.protocol.offsets import parse_offset

from ds_sync.backoff import Backoff
from ds_sync.sessions.model import Status

if TYPE_CHECKING:
    from ds_sync.sessions.model import Read
    from ds_sync.sessions.tailer import Reader


@dataclass(frozen=True, slots=True, eq=False)
class Chain:
    """Consecutive reads of one stream, committed together: the checkpoint moves from
    ``begins_at`` to the last read's end."""

    state: StreamState
    reads: list[Read]
    # Resolved once the writer has said whether the chain committed.
    settled: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def stream(self) -> str:
        return self.state.path

    @property
    def begins_at(self) -> str:
        return self.reads[0].begins_at

    @property
    def next_offset(self) -> str:
        return self.reads[-1].next_offset

    @property
    def closed(self) -> bool:
        return self.reads[-1].closed

    @property
    def rows(self) -> int:
        return sum(len(read.messages) for read in self.reads)


@dataclass(slots=True, eq=False)
class StreamState:
    """One stream: its committed checkpoint, what the server reported, reads not yet committed."""

    path: str
    status: Status
    next_offset: str  # the committed checkpoint: every message before it is in session_events
    created_ms: int | None
    known_tail: int = -1  # the largest tail the server reported; -1 unknown
    closed_seen: bool = False
    reader: Reader | None = None
    task: asyncio.Task[None] | None = None
    backoff: Backoff = field(default_factory=Backoff)
    # While behind: when the checkpoint last moved, or when it fell behind.
    behind_since: float | None = None
    # Reads handed over and not yet in a transaction; where reading goes on.
    queued: list[Read] = field(default_factory=list)
    queued_rows: int = 0
    read_offset: str = ""
    read_closed: bool = False  # the stream's closing read is handed over
    committing: Chain | None = None
    recovering: bool = False  # a failure is being handled: reads are dropped meanwhile

    def __post_init__(self) -> None:
        self.read_offset = self.read_offset or self.next_offset

    @property
    def behind(self) -> bool:
        """Whether the server has reported data past the checkpoint (or a closure not yet seen)."""
        return self.known_tail > parse_offset(self.next_offset) or (
            self.closed_seen and self.status is Status.ACTIVE
        )

    @property
    def unread(self) -> bool:
        """Whether there is data (or a closure) past what was read: a reader is needed."""
        if self.read_closed:
            return False
        return self.known_tail > parse_offset(self.read_offset) or self.closed_seen

    def queue(self, read: Read) -> None:
        """A reader handed over ``read`` (it begins where the previous one ended)."""
        self.queued.append(read)
        self.queued_rows += len(read.messages)
        self.read_offset = read.next_offset
        self.read_closed = self.read_closed or read.closed

    def take(self, max_rows: int) -> Chain | None:
        """The queued reads, up to ``max_rows`` rows (at least one read), for one transaction;
        None while a chain of this stream is in one, or nothing is queued."""
        if self.committing is not None or not self.queued:
            return None
        count, rows = 0, 0
        for read in self.queued:
            if count and rows + len(read.messages) > max_rows:
                break
            count += 1
            rows += len(read.messages)
        chain = Chain(self, self.queued[:count])
        del self.queued[:count]
        self.queued_rows -= rows
        self.committing = chain
        return chain

    def committed(self, chain: Chain) -> None:
        """The chain's transaction committed: the checkpoint stands at its end."""
        self.committing = None
        self.next_offset = chain.next_offset
        self.backoff.reset()
        if chain.closed:
            self.status = Status.DONE
        self.behind_since = time.monotonic() if self.behind else None

    def drop_reads(self) -> None:
        """Forget every read not committed (after a failure: read again from the checkpoint).
        What they showed stays known, so the stream still counts as unread."""
        self.known_tail = max(self.known_tail, parse_offset(self.read_offset))
        self.closed_seen = self.closed_seen or self.read_closed
        self.queued.clear()
        self.queued_rows = 0
        self.read_offset = self.next_offset
        self.read_closed = False
