"""Which streams a reader takes: glob patterns over stream paths.

The grammar is the server's subscription patterns' (and ds-sync's
``DS_SYNC__STREAMS``): segments split on ``/``, ``*`` is exactly one
segment, anything else literal. A pattern must be listable: a literal
path (one HEAD) or ``{bucket}/*`` (the bucket's listing), because the
server lists buckets, not its whole namespace.
"""

from __future__ import annotations

from dataclasses import dataclass

from ds_spark.errors import DsSparkError


class PatternError(DsSparkError):
    """A pattern that names no listable set of streams."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """One glob: a literal stream path, or every stream of a bucket."""

    text: str

    @property
    def bucket(self) -> str | None:
        """The bucket of a ``{bucket}/*`` pattern, None for a literal path."""
        head, _, tail = self.text.partition("/")
        return head if tail == "*" else None

    def matches(self, path: str) -> bool:
        """Whether the stream ``path`` is one this pattern names."""
        if self.bucket is None:
            return path == self.text
        head, _, stream = path.partition("/")
        return head == self.bucket and bool(stream) and "/" not in stream


def parse_patterns(text: str) -> tuple[Pattern, ...]:
    """Comma-separated patterns; PatternError names the first one that cannot be listed."""
    patterns: list[Pattern] = []
    for raw in text.split(","):
        pattern = raw.strip().strip("/")
        if not pattern:
            continue
        segments = pattern.split("/")
        if any(segment in ("", ".", "..") for segment in segments):
            raise PatternError(f"stream pattern {raw.strip()!r} has an empty, '.' or '..' segment")
        wildcards = [i for i, segment in enumerate(segments) if "*" in segment]
        listable = not wildcards or (len(segments) == 2 and wildcards == [1] and segments[1] == "*")
        if not listable:
            raise PatternError(
                f"stream pattern {raw.strip()!r} cannot be listed: use a stream path "
                "or '{bucket}/*'"
            )
        patterns.append(Pattern(pattern))
    if not patterns:
        raise PatternError("no stream pattern given")
    return tuple(dict.fromkeys(patterns))
