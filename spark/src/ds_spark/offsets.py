"""Stream offsets: 20-digit zero-padded byte positions (the server's ``Stream-Next-Offset``).

Positions of a JSON stream count the stored bytes of each message, so the
position of a message is its read's start plus the sizes of the messages
before it in that read (extensions §2.1 lets clients do this arithmetic).
"""

from __future__ import annotations

import re

OFFSET_DIGITS = 20
BEGINNING = "-1"
_OFFSET = re.compile(r"\d{20}", re.ASCII)


class OffsetError(ValueError):
    """Not an offset this server hands out."""


def format_offset(position: int) -> str:
    """The offset token of byte ``position``."""
    return str(position).zfill(OFFSET_DIGITS)


def parse_offset(token: str) -> int:
    """The byte position of an offset token; ``-1`` is the beginning (0)."""
    if token == BEGINNING:
        return 0
    if _OFFSET.fullmatch(token) is None:
        raise OffsetError(f"{token!r} is not a 20-digit stream offset")
    return int(token)
