"""Content types the protocol treats specially."""

from __future__ import annotations

JSON = "application/json"
OCTET_STREAM = "application/octet-stream"
SSE = "text/event-stream"


def media_type(content_type: str | None) -> str:
    """The media type alone, in lower case (no parameters such as ``charset``)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    """Whether a stream of this content type is in JSON mode (messages, not bytes)."""
    return media_type(content_type) == JSON
