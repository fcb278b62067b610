"""Presence and typing that expire when their writer goes away.

A writer that stops (a closed tab, a crashed process, a lost network) can't
say it left. So presence and typing entries carry a deadline, and the
writer keeps moving it while it is there:

- **Writers** put ``expires_at`` (an RFC 3339 time, §2's grammar) in the
  value of every presence and typing upsert: now + `PRESENCE_TTL` (60 s)
  for presence, now + `TYPING_TTL` (10 s) for typing. While present they
  upsert again every `PRESENCE_REFRESH` (20 s); while typing, at most every
  `TYPING_REFRESH` (3 s). Leaving is still said when it can be (presence
  ``offline``, typing deleted).
- **Readers** treat an entry whose ``expires_at`` is at or before *now*
  (their own clock) as gone: that user is offline and not typing. An
  entry without ``expires_at``, or with one that does not parse, never
  expires (what writers wrote before this rule).

The folded state keeps such entries as they are (the fold of §6 is
unchanged, and snapshots with it); expiry is applied when the state is
read. The session viewer applies the same rule with the same numbers.
Clocks: a writer's deadline is compared with a reader's clock, so skew
between them shifts expiry by as much; a refresh every third of the TTL
leaves room for two lost refreshes and some seconds of skew.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from durable_sessions.sessions.timestamps import format_time, parse_time

if TYPE_CHECKING:
    from datetime import datetime

EXPIRES_AT = "expires_at"
PRESENCE_TTL = timedelta(seconds=60)
PRESENCE_REFRESH = timedelta(seconds=20)
TYPING_TTL = timedelta(seconds=10)
TYPING_REFRESH = timedelta(seconds=3)


def deadline(now: datetime, ttl: timedelta) -> str:
    """The ``expires_at`` a writer puts in an entry it writes at ``now``."""
    return format_time(now + ttl)


def expires_at(value: Any) -> datetime | None:
    """When an entry's value says it expires, None when it says nothing usable."""
    return parse_time(value.get(EXPIRES_AT)) if isinstance(value, dict) else None


def is_expired(value: Any, now: datetime) -> bool:
    """Whether the presence or typing entry ``value`` has expired at ``now``."""
    deadline_ = expires_at(value)
    return deadline_ is not None and deadline_ <= now
