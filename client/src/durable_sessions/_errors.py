"""HTTP failures as the official client's exceptions, so callers catch one family."""

from __future__ import annotations

from durable_streams import DurableStreamError, RetentionGoneError, StreamNotFoundError


def http_error(status: int, url: str, body: str = "") -> DurableStreamError:
    """The exception for an unexpected response status."""
    if status == 404:
        return StreamNotFoundError(url=url)
    if status == 410:
        return RetentionGoneError(details=body)
    return DurableStreamError(
        f"HTTP {status} from {url}: {body[:200]}", status=status, details=body
    )
