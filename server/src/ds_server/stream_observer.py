"""Stream changes that features other than reading (subscriptions) react to."""

from __future__ import annotations


class StreamObserver:
    """Observer of stream changes; the default ignores them."""

    def data_arrived(self, path: str) -> None:
        """Data was written to ``path`` (create with a body, or an append)."""

    def stream_deleted(self, path: str) -> None:
        """``path`` was deleted."""
