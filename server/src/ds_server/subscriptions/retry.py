"""Backoff between failed deliveries of the same wake."""

from __future__ import annotations

import random

BASE_DELAY_MS = 1_000
MAX_DELAY_MS = 60_000
JITTER = 0.2


def backoff_seconds(retry_count: int, jitter: float | None = None) -> float:
    """Delay before retry number ``retry_count`` (1-based): doubling, capped, +-20 %.

    ``jitter`` in [-1, 1] scales the spread; random when omitted. Jitter keeps
    many subscriptions that failed together from retrying in lockstep.
    """
    exponent = max(retry_count - 1, 0)
    # Cap the exponent first so a long outage cannot overflow the float.
    base = min(BASE_DELAY_MS << min(exponent, 16), MAX_DELAY_MS)
    spread = random.uniform(-1.0, 1.0) if jitter is None else jitter
    return base * (1 + JITTER * spread) / 1000
