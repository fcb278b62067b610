"""Readiness probes: an HTTP status from a loopback URL, text in a log."""

from __future__ import annotations

import http.client
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from pathlib import Path


def http_status(url: str, timeout: float = 1.0) -> int | None:
    """The status a GET of ``url`` answers, or None if nothing answers.

    Plain ``http.client``: no proxy settings from the environment apply.
    """
    parts = urlsplit(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    connection = http.client.HTTPConnection(
        parts.hostname or "127.0.0.1", parts.port, timeout=timeout
    )
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def http_ok(url: str) -> bool:
    """Whether ``url`` answers 200."""
    return http_status(url) == 200


def logged_since(path: Path, offset: int, text: str) -> bool:
    """Whether ``path`` holds ``text`` past byte ``offset`` (what one start of a child wrote)."""
    try:
        with path.open("rb") as log:
            log.seek(offset)
            return text.encode() in log.read()
    except OSError:
        return False


def tail(path: Path, lines: int = 8) -> list[str]:
    """The last ``lines`` lines of ``path`` (none if it can't be read)."""
    try:
        with path.open("rb") as log:
            log.seek(0, 2)
            size = log.tell()
            log.seek(max(0, size - 16384))
            text = log.read().decode(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]
