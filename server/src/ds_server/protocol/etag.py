"""ETags for catch-up reads: ``"{stream-id}:{start}:{end}"``, plus ``:c`` once closed.

The closure marker makes a stream's closing change the ETag even when no
bytes were added, so a 304 can never hide the EOF signal.
"""

from __future__ import annotations


def read_etag(stream_id: str, start: str, end: str, *, closed: bool) -> str:
    """The ETag of a catch-up response covering ``start``..``end``."""
    suffix = ":c" if closed else ""
    return f'"{stream_id}:{start}:{end}{suffix}"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """True when an If-None-Match header names ``etag`` (or is ``*``)."""
    if not if_none_match:
        return False
    candidates = [tag.strip() for tag in if_none_match.split(",")]
    return "*" in candidates or etag in candidates or f"W/{etag}" in candidates
