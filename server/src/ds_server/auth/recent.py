"""A bounded map of recent results, for work the guard would otherwise redo per request.

Behind the gateway every request of a client carries the same token payload
and most go to a few paths: decoding the payload (base64, JSON, the scope
sets) and working out the accesses a path needs cost more than the rest of
the guard together. Both are pure functions of their inputs, so a result
computed once serves every later request with the same input. The map holds
at most ``max_entries``; past that the oldest entry goes (inputs are the
client's, so they must not grow the map without bound).
"""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class RecentResults(Generic[K, V]):
    """Results by input, the ``max_entries`` most recently added."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._results: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        """The result kept for ``key``, or None."""
        return self._results.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``, letting the oldest result go when full."""
        results = self._results
        if len(results) >= self.max_entries:
            del results[next(iter(results))]
        results[key] = value

    def __len__(self) -> int:
        return len(self._results)
