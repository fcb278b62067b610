"""Stream offsets: 20-digit zero-padded byte positions, compared as numbers."""

from __future__ import annotations

OFFSET_DIGITS = 20
START = "0" * OFFSET_DIGITS
# Read requests may say -1 for "the beginning"; never stored.
BEGINNING = "-1"


def position(offset: str) -> int:
    """The byte position an offset names (``-1`` is 0)."""
    return 0 if offset == BEGINNING else int(offset)


def normal(offset: str) -> str:
    """The 20-digit form of an offset (``-1`` becomes the start)."""
    return format(position(offset), f"0{OFFSET_DIGITS}d")
