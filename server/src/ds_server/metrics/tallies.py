"""What is counted on every append, as plain integers (compiled with the hot path).

Bumped on the event loop only, so no lock: prometheus-client's metric
objects take one per update. ``families`` exports them when scraped.
"""

from __future__ import annotations


class Appends:
    """Appends so far."""

    def __init__(self) -> None:
        self.messages = 0
        self.size = 0


APPENDS = Appends()
