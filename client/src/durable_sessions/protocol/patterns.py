"""Stream-name glob patterns: which streams a reader, a sync or a subscription takes.

The grammar is the server's subscription patterns': segments split on
``/``; ``*`` is exactly one segment, ``**`` zero or more, anything else is
literal; partial wildcards (``room-*``) are refused, as are empty, ``.``,
``..`` and ``__ds`` (reserved) segments. The same pattern names the same
streams in a pull-wake subscription, in ds-sync and in ds-spark.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

ONE_SEGMENT = "*"
ANY_SEGMENTS = "**"
WILDCARDS = (ONE_SEGMENT, ANY_SEGMENTS)
RESERVED_SEGMENT = "__ds"


class PatternError(ValueError):
    """A pattern that the server would refuse, or that could never match."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """One glob over stream paths (no leading ``/``)."""

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
        """The bucket whose listing holds every match, or None.

        Bucket streams are ``{bucket}/{stream}`` with no ``/`` in the stream
        id, so a pattern of two segments, the first literal and the second
        not ``**``, is answered by one bucket listing.
        """
        segments = self.segments
        if len(segments) == 2 and segments[0] not in WILDCARDS and segments[1] != ANY_SEGMENTS:
            return segments[0]
        return None

    @property
    def listable(self) -> bool:
        """Whether a client can enumerate the matches: one HEAD, or one bucket listing.

        The server lists buckets, not its whole namespace; other patterns
        are only usable where streams announce themselves (subscriptions).
        """
        return self.literal or self.bucket is not None

    def matches(self, path: str) -> bool:
        """Whether the stream ``path`` (a leading ``/`` is ignored) falls under this pattern."""
        return _match(self.segments, tuple(path.strip("/").split("/")))


def parse_pattern(text: str) -> Pattern:
    """One pattern, checked (surrounding spaces and slashes are dropped)."""
    pattern = text.strip().strip("/")
    if not pattern:
        raise PatternError("empty stream pattern")
    for segment in pattern.split("/"):
        if segment in ("", ".", ".."):
            raise PatternError(f"{text.strip()!r}: empty, '.' or '..' segment")
        if segment == RESERVED_SEGMENT:
            raise PatternError(f"{text.strip()!r}: the __ds namespace is reserved")
        if "*" in segment and segment not in WILDCARDS:
            raise PatternError(f"{text.strip()!r}: '*' and '**' must be whole segments")
    return Pattern(pattern)


def parse_patterns(text: str, *, listable: bool = False) -> tuple[Pattern, ...]:
    """Comma-separated patterns, checked and deduplicated; PatternError names the first bad one.

    With ``listable``, every pattern must be one a client can enumerate
    (`Pattern.listable`): readers that find their streams by listing,
    not by subscription, need that.
    """
    patterns = [parse_pattern(raw) for raw in text.split(",") if raw.strip().strip("/")]
    if not patterns:
        raise PatternError("no stream pattern given")
    for pattern in patterns if listable else ():
        if not pattern.listable:
            raise PatternError(
                f"stream pattern {pattern.text!r} cannot be listed: use a stream path "
                "or '{bucket}/*'"
            )
    return tuple(dict.fromkeys(patterns))


def any_matches(patterns: tuple[Pattern, ...], path: str) -> bool:
    """Whether any of ``patterns`` matches ``path``."""
    return any(pattern.matches(path) for pattern in patterns)


@lru_cache(maxsize=4096)
def _match(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == ANY_SEGMENTS:
        return _match(rest, path) or (bool(path) and _match(pattern, path[1:]))
    if not path:
        return False
    return head in (ONE_SEGMENT, path[0]) and _match(rest, path[1:])
