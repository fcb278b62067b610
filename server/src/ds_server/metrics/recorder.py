"""What the rest of the server calls to record a metric, wherever it runs.

Stores and subscriptions call these plain functions rather than holding
metric objects, so a backend (or a feature) only ever needs this module:
a durable backend's writer calls ``observe_commit`` after each commit, from
whichever thread commits. When metrics are off (``DS_METRICS__ENABLED``)
each call is one global read.
"""

from __future__ import annotations

from ds_server.metrics.families import COMMIT_LATENCY, COMMIT_SIZE, DELIVERIES
from ds_server.metrics.tallies import APPENDS

_enabled = True
_DELIVERY_CHILDREN = {
    (kind, delivered): DELIVERIES.labels(kind, "delivered" if delivered else "failed")
    for kind in ("webhook", "wake-stream")
    for delivered in (True, False)
}


def enable(on: bool) -> None:
    """Record (the default) or not; process-wide, set when the app is made."""
    global _enabled
    _enabled = on


def observe_commit(seconds: float, writes: int) -> None:
    """A durable backend committed ``writes`` writes together in ``seconds``."""
    if _enabled:
        COMMIT_LATENCY.observe(seconds)
        COMMIT_SIZE.observe(writes)


def appended(messages: tuple[bytes, ...]) -> None:
    """``messages`` were appended to a stream (by a POST, or a PUT with a body)."""
    if _enabled:
        size = 0
        for message in messages:
            size += len(message)
        appends = APPENDS
        appends.messages += len(messages)
        appends.size += size


def delivery(kind: str, *, delivered: bool) -> None:
    """One subscription delivery attempt: ``webhook`` or ``wake-stream``."""
    if _enabled:
        _DELIVERY_CHILDREN[kind, delivered].inc()
