"""Which streams are synced: glob patterns over stream paths (``DS_SYNC__STREAMS``).

The grammar is the server's subscription patterns', so the same pattern
means the same streams in a pull-wake subscription and here: segments split
on ``/``, ``*`` is exactly one segment, ``**`` zero or more, anything else
literal; partial wildcards (``room-*``) are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

WILDCARDS = ("*", "**")
RESERVED_SEGMENT = "__ds"


class PatternError(ValueError):
    """A pattern that the server would refuse, or that could never match."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """One glob, with how its streams can be listed."""

    text: str

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.text.split("/"))

    @property
    def literal(self) -> bool:
        """No wildcard: the pattern names exactly one stream."""
        return not any(segment in WILDCARDS for segment in self.segments)

    @property
    def bucket(self) -> str | None:
        """The bucket whose listing holds every match (``bucket/*``), or None.

        Bucket streams are ``{bucket}/{stream}`` with no ``/`` in the stream
        id, so a pattern of two segments, the first literal, is listable.
        """
        segments = self.segments
        if len(segments) == 2 and segments[0] not in WILDCARDS and segments[1] != "**":
            return segments[0]
        return None

    def matches(self, path: str) -> bool:
        """Whether the stream ``path`` (no leading ``/``) falls under this pattern."""
        return _match(self.segments, tuple(path.strip("/").split("/")))


def parse_patterns(text: str) -> tuple[Pattern, ...]:
    """Comma-separated patterns, checked; PatternError names the first bad one."""
    patterns = []
    for raw in text.split(","):
        pattern = raw.strip().strip("/")
        if not pattern:
            continue
        for segment in pattern.split("/"):
            if segment in ("", ".", ".."):
                raise PatternError(f"{raw.strip()!r}: empty, '.' or '..' segment")
            if segment == RESERVED_SEGMENT:
                raise PatternError(f"{raw.strip()!r}: the __ds namespace is reserved")
            if "*" in segment and segment not in WILDCARDS:
                raise PatternError(f"{raw.strip()!r}: '*' and '**' must be whole segments")
        patterns.append(Pattern(pattern))
    if not patterns:
        raise PatternError("no stream pattern given")
    return tuple(dict.fromkeys(patterns))


def any_matches(patterns: tuple[Pattern, ...], path: str) -> bool:
    """Whether any of ``patterns`` matches ``path``."""
    return any(pattern.matches(path) for pattern in patterns)


@lru_cache(maxsize=4096)
def _match(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return _match(rest, path) or (bool(path) and _match(pattern, path[1:]))
    if not path:
        return False
    return head in ("*", path[0]) and _match(rest, path[1:])
