"""What ``follow()`` yields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from durable_sessions.protocol.bootstrap import Bootstrap


@dataclass(frozen=True, slots=True)
class Bootstrapped:
    """State to start from. On every one after the first, drop what was applied before."""

    bootstrap: Bootstrap


@dataclass(frozen=True, slots=True)
class Update:
    """Data read live, and the offset after it (where to resume from).

    For JSON streams ``messages`` holds one entry per message, each the
    exact bytes the server stores (as in a bootstrap). For other streams it
    holds the bytes read, which need not end on an append boundary.
    ``closed`` is true on the last update of a closed stream.
    """

    messages: list[bytes]
    content_type: str
    next_offset: str
    up_to_date: bool
    closed: bool = False


Event = Bootstrapped | Update
