"""Exponential backoff with full jitter, for retries against the server or the database."""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(slots=True)
class Backoff:
    """Delays of ``uniform(0, min(cap, base * 2**n))``; ``reset()`` after a success.

    Full jitter spreads the retries of many streams (or many ds-sync
    processes) that failed at the same moment, instead of retrying in step.
    """

    base: float = 0.1
    cap: float = 10.0
    attempts: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        """The delay before the next attempt; each call doubles the ceiling up to ``cap``."""
        ceiling = min(self.cap, self.base * (2 ** min(self.attempts, 30)))
        self.attempts += 1
        return self.rng.uniform(0, ceiling)

    def reset(self) -> None:
        self.attempts = 0
