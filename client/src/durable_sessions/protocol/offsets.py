"""Stream offsets: 20-digit zero-padded byte positions, and the two request sentinels.

Offsets are opaque to clients in the base protocol; this stack's servers
hand out 20-digit decimal byte positions (extensions §2.1 lets clients do
arithmetic on them), so every real offset sorts lexicographically in stream
order. ``-1`` (the beginning) and ``now`` (the tail) are only ever sent.
"""

from __future__ import annotations

import re

OFFSET_DIGITS = 20
BEGINNING = "-1"
NOW = "now"
# The first real offset: where a read from ``-1`` starts.
START = "0" * OFFSET_DIGITS
_OFFSET = re.compile(r"[0-9]{20}", re.ASCII)


class OffsetError(ValueError):
    """Not an offset this server hands out (nor ``-1`` where that is allowed)."""


def format_offset(position: int) -> str:
    """The offset of byte ``position``."""
    if not 0 <= position < 10**OFFSET_DIGITS:
        raise OffsetError(f"byte position out of range: {position}")
    return str(position).zfill(OFFSET_DIGITS)


def parse_offset(token: str) -> int:
    """The byte position an offset names; ``-1`` is the beginning (0).

    Raises `OffsetError` for anything else, ``now`` included (it
    names no fixed position).
    """
    if token == BEGINNING:
        return 0
    if _OFFSET.fullmatch(token) is None:
        raise OffsetError(f"{token!r} is not a 20-digit stream offset")
    return int(token)


def normal_offset(token: str) -> str:
    """The 20-digit form of an offset (``-1`` becomes `START`)."""
    return format_offset(parse_offset(token))


def is_offset(token: str) -> bool:
    """Whether ``token`` is a real (20-digit) offset."""
    return _OFFSET.fullmatch(token) is not None
