"""Event times per sessions.md §2: RFC 3339 ``date-time`` strings, strictly, or nothing.

``YYYY-MM-DD``, then ``T``, ``t`` or a space, ``hh:mm:ss``, an optional
fraction (digits past microseconds are truncated), then ``Z``, ``z``,
``±hh:mm`` (at most ±18:00) or no zone (UTC). Anything else is unparsable
and gives None, never an error; so are instants a timestamp cannot hold
(outside years 1 to 9999 in UTC).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

# re.ASCII: \d must not match other scripts' digits.
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})"
    r"(?:\.(\d+))?"
    r"(?:[Zz]|([+-])(\d{2}):(\d{2}))?",
    re.ASCII,
)
_MAX_ZONE_MINUTES = 18 * 60


def parse_event_time(value: object) -> datetime | None:
    """The instant ``value`` names, as an aware UTC datetime, or None."""
    if not isinstance(value, str):
        return None
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, zone_h, zone_m = match.groups()
    zone = 0
    if sign is not None:
        if int(zone_m) > 59:
            return None
        zone = int(zone_h) * 60 + int(zone_m)
        if zone > _MAX_ZONE_MINUTES:
            return None
        zone = -zone if sign == "-" else zone
    micros = int((fraction or "")[:6].ljust(6, "0"))
    try:
        # datetime refuses month 13, February 30, hour 24, minute or second 60.
        local = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            micros,
            tzinfo=timezone(timedelta(minutes=zone)),
        )
        return local.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
