"""Event times as the sessions contract reads them (sessions.md §2): RFC 3339, strictly.

``YYYY-MM-DD``, then ``T``, ``t`` or a space, ``hh:mm:ss``, an optional
fraction (digits past microseconds are truncated), then ``Z``, ``z``,
``±hh:mm`` (at most ±18:00) or no zone (UTC). Anything else is unparsable
and gives None, never an error. The same grammar reads an event's
``timestamp`` and a presence or typing entry's ``expires_at``, here and in
the session viewer (``server/src/ds_server/viewer/js/session-state.js``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

# re.ASCII: \d must not match other scripts' digits.
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})"  # date, separator, time
    r"(?:\.(\d+))?"  # fraction
    r"(?:[Zz]|([+-])(\d{2}):(\d{2}))?",  # zone (none = UTC)
    re.ASCII,
)
_MAX_OFFSET_MINUTES = 18 * 60


def parse_time(value: object) -> datetime | None:
    """The instant ``value`` names, in UTC, or None when it is not an RFC 3339 date-time."""
    if not isinstance(value, str):
        return None
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, off_h, off_m = match.groups()
    micros = int((fraction or "")[:6].ljust(6, "0"))
    offset = 0
    if sign is not None:
        hours, minutes = int(off_h), int(off_m)
        if minutes > 59:
            return None
        offset = hours * 60 + minutes
        if offset > _MAX_OFFSET_MINUTES:
            return None
        offset = -offset if sign == "-" else offset
    try:
        # datetime rejects month 13, February 30, hour 24, minute or second 60.
        local = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            micros,
            tzinfo=timezone(timedelta(minutes=offset)),
        )
        return local.astimezone(UTC)
    except (ValueError, OverflowError):
        # Year 0000, or an offset pushing the instant past year 1 or 9999.
        return None


def format_time(instant: datetime) -> str:
    """``instant`` as the SDK writes times: UTC, milliseconds, ``Z`` (``2026-11-26T10:00:00.125Z``),
    the form JavaScript's ``Date.toISOString()`` writes too."""
    utc = instant.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def utc_now() -> datetime:
    """The current time, in UTC (the default clock of writers and readers)."""
    return datetime.now(UTC)
