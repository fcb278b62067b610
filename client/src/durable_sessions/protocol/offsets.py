"""Stream offsets: 20-digit zero-padded byte positions, and the two request sentinels.

Offsets are opaque to clients in the base protocol; this stack's servers
hand out 20-digit decimal byte positions (extensions §2.1 lets clients do
arithmetic on them), so every real offset sorts lexicographically in stream
order. ``-1`` (the beginning) and ``now`` (the tail) are only ever sent.
"""

from __future__ import annotations

OFFSET_DIGITS = 20
BEGINNING = "-1"
NOW = "now"
# The first real offset: where a read from ``-1`` starts.
START = "0" * OFFSET_DIGITS
_POSITIONS = 10**OFFSET_DIGITS


class OffsetError(ValueError):
    """Not an offset this server hands out (nor ``-1`` where that is allowed)."""


def format_offset(position: int) -> str:
    """The offset of byte ``position``."""
    if not 0 <= position < _POSITIONS:
        raise OffsetError(f"byte position out of range: {position}")
    return str(position).zfill(OFFSET_DIGITS)


def parse_offset(token: str) -> int:
    """The byte position an offset names; ``-1`` is the beginning (0).

    Raises `OffsetError` for anything else, ``now`` included (it
    names no fixed position).
    """
    if is_offset(token):
        return int(token)
    if token == BEGINNING:
        return 0
    raise OffsetError(f"{token!r} is not a 20-digit stream offset")


def normal_offset(token: str) -> str:
    """The 20-digit form of an offset (``-1`` becomes `START`)."""
    return format_offset(parse_offset(token))


def is_offset(token: str) -> bool:
    """Whether ``token`` is a real (20-digit) offset."""
    # isascii: isdigit alone takes other scripts' digits. Cheaper than a regex on hot paths.
    return len(token) == OFFSET_DIGITS and token.isascii() and token.isdigit()
