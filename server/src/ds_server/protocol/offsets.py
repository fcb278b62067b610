"""Stream offsets: 20-digit zero-padded decimal cumulative byte positions.

``-1`` (the beginning) and ``now`` (the tail) are request sentinels and are
never generated, so every real offset sorts lexicographically in stream order.
"""

from __future__ import annotations

import enum
import re

OFFSET_WIDTH = 20
MAX_OFFSET = 10**OFFSET_WIDTH - 1
BEGINNING_SENTINEL = "-1"
NOW_SENTINEL = "now"

_OFFSET_RE = re.compile(rf"[0-9]{{{OFFSET_WIDTH}}}")


class Sentinel(enum.Enum):
    BEGINNING = BEGINNING_SENTINEL
    NOW = NOW_SENTINEL


class InvalidOffsetError(ValueError):
    """The text is neither a sentinel nor a well-formed offset."""


def format_offset(position: int) -> str:
    """Render a byte position as a protocol offset."""
    if not 0 <= position <= MAX_OFFSET:
        raise ValueError(f"offset out of range: {position}")
    # Every append renders one: zfill is ~3x cheaper than a zero-padded format spec.
    return str(position).zfill(OFFSET_WIDTH)


def parse_offset(text: str) -> int | Sentinel:
    """Parse a client-supplied offset into a byte position or a sentinel."""
    if text == BEGINNING_SENTINEL:
        return Sentinel.BEGINNING
    if text == NOW_SENTINEL:
        return Sentinel.NOW
    if _OFFSET_RE.fullmatch(text) is None:
        raise InvalidOffsetError("offset must be -1, now or a 20-digit offset")
    return int(text)


def parse_position(text: str) -> int:
    """Parse an offset that must name a real position (no sentinels)."""
    if _OFFSET_RE.fullmatch(text) is None:
        raise InvalidOffsetError("offset must be a 20-digit offset")
    return int(text)


_LEGACY_OFFSET_RE = re.compile(r"[0-9]{1,20}_([0-9]{1,20})")


def parse_fork_offset(text: str) -> int | None:
    """Parse a Stream-Fork-Offset: a position, or None for the source's tail.

    Besides our own offsets it accepts ``-1``/``now`` and the Node reference
    server's ``<seq>_<byte position>`` form, whose second half is the byte
    position, so offsets written for that server keep meaning the same place.
    """
    if text == BEGINNING_SENTINEL:
        return 0
    if text == NOW_SENTINEL:
        return None
    legacy = _LEGACY_OFFSET_RE.fullmatch(text)
    if legacy is not None:
        return int(legacy.group(1))
    return parse_position(text)
