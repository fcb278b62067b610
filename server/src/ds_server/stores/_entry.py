"""A stream as the engine holds it: its state, its fork source, and what readers may see."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ds_server.stores import _rules

if TYPE_CHECKING:
    from ds_server.stores._quotas import Usage
    from ds_server.stores._rules import StreamState
    from ds_server.stores.base import StreamInfo


@dataclass(slots=True, eq=False)
class Entry:
    """A stream as the engine holds it: its state, its fork source, what readers may see."""

    state: StreamState
    base: Entry | None
    visible_tail: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # The newest write still waiting for its group commit, if any.
    pending: asyncio.Future[None] | None = None
    # Bumped when a failed write rewinds the state; writes decided before are void.
    generation: int = 0
    # Another process changed the stream (shared backends): reload before use.
    stale: bool = False
    # The totals of the bucket the stream counts against (None: it counts against none).
    usage: Usage | None = None

    def info(self) -> StreamInfo:
        info = self.state.info()
        if self.visible_tail == self.state.tail:
            return info
        # Data (and a close) still in flight is not visible yet.
        return _rules.with_tail(info, self.visible_tail)
