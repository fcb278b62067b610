"""Glob patterns over stream paths, matched segment by segment on ``/``.

``*`` matches exactly one segment, ``**`` zero or more, anything else
literally: ``events/*`` matches ``events/x`` but not ``events`` or ``events/x/y``.
"""

from __future__ import annotations

from functools import lru_cache

from ds_server.protocol.names import RESERVED_SEGMENT


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid glob, or None when it is."""
    if not pattern.strip("/"):
        return "pattern is empty"
    for segment in pattern.strip("/").split("/"):
        if segment in ("", ".", ".."):
            return "pattern contains an empty, '.' or '..' segment"
        if segment == RESERVED_SEGMENT:
            return "pattern must not reach into the reserved __ds namespace"
        # Partial wildcards ("ev*") would silently match only literally; refuse them.
        if "*" in segment and segment not in ("*", "**"):
            return "'*' and '**' must be whole segments"
    return None


def matches(pattern: str, path: str) -> bool:
    """Whether the relative stream ``path`` matches the glob ``pattern``."""
    return _match(tuple(pattern.strip("/").split("/")), tuple(path.strip("/").split("/")))


@lru_cache(maxsize=4096)
def _match(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        # Zero segments, or swallow one and try again.
        return _match(rest, path) or (bool(path) and _match(pattern, path[1:]))
    if not path:
        return False
    return (head in ("*", path[0])) and _match(rest, path[1:])
