"""The CDN cursor rule (protocol section 8.1).

Time is cut into 20-second intervals counted from 2024-10-09T00:00:00Z; the
cursor is the interval number. A client echoing a cursor at or ahead of the
current interval gets one strictly greater (plus 1-3600 s of jitter), so a
CDN can never loop on one cached empty response.
"""

from __future__ import annotations

import random
import time

CURSOR_EPOCH_SECS = 1728432000  # 2024-10-09T00:00:00Z
CURSOR_INTERVAL_SECS = 20
_MAX_JITTER_SECS = 3600


def current_interval(now: float | None = None) -> int:
    """The interval number for ``now`` (seconds since the Unix epoch)."""
    moment = time.time() if now is None else now
    return int((moment - CURSOR_EPOCH_SECS) // CURSOR_INTERVAL_SECS)


def next_cursor(client_cursor: str | None, now: float | None = None) -> str:
    """The cursor to send on a live response, given the one the client echoed."""
    interval = current_interval(now)
    echoed = _parse(client_cursor)
    if echoed is not None and echoed >= interval:
        jitter_secs = random.randint(1, _MAX_JITTER_SECS)
        interval = echoed + max(1, jitter_secs // CURSOR_INTERVAL_SECS)
    return str(interval)


def _parse(cursor: str | None) -> int | None:
    if cursor is None or not cursor.isascii() or not cursor.isdigit() or len(cursor) > 18:
        return None
    return int(cursor)
