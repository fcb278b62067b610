"""Parsing of Stream-TTL and Stream-Expires-At (protocol section 5.1)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

# Non-negative decimal without sign, leading zeros, point or exponent.
_TTL_RE = re.compile(r"0|[1-9][0-9]{0,11}")
# RFC 3339 date-time: a full date, 'T' (any case), a time, and a zone.
_RFC3339_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


class InvalidExpiryError(ValueError):
    """A malformed Stream-TTL or Stream-Expires-At value."""


def parse_ttl(text: str) -> int:
    """Seconds of a Stream-TTL header."""
    if _TTL_RE.fullmatch(text) is None:
        raise InvalidExpiryError("Stream-TTL must be a non-negative integer without leading zeros")
    return int(text)


def parse_expires_at(text: str) -> float:
    """Unix seconds of a Stream-Expires-At header (an RFC 3339 timestamp)."""
    if _RFC3339_RE.fullmatch(text) is None:
        raise InvalidExpiryError("Stream-Expires-At must be an RFC 3339 timestamp")
    normalised = text.upper().replace("Z", "+00:00")
    # fromisoformat takes at most 6 fractional digits.
    normalised = re.sub(r"(\.[0-9]{6})[0-9]+", r"\1", normalised)
    try:
        moment = datetime.fromisoformat(normalised).timestamp()
        # Must also be representable in UTC, since HEAD reports it that way.
        datetime.fromtimestamp(moment, tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise InvalidExpiryError("Stream-Expires-At is not a representable date and time") from None
    return moment


def format_expires_at(unix_seconds: float) -> str:
    """Render an instant as RFC 3339 in UTC with millisecond precision."""
    moment = datetime.fromtimestamp(unix_seconds, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
