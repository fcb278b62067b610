"""Column values as JSON, per sessions.md §4, from their Postgres text form.

Both feeds see values as Postgres prints them (the native feed's session
and Electric use the same display settings: ``DateStyle=ISO``,
``TimeZone=UTC``, ``bytea_output=hex``, ``IntervalStyle=iso_8601``), so one
mapping serves both: integers and booleans natively, ``numeric`` as a
string, timestamps as RFC 3339 strings, ``json``/``jsonb`` as JSON,
``bytea`` as base64, everything else (arrays included) as its text form.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import msgspec

INTEGER_TYPES = frozenset({"int2", "int4", "int8"})
JSON_TYPES = frozenset({"json", "jsonb"})
# The text form the session settings give: "2026-11-26 10:00:00.125+00" (timestamptz,
# always +00 in UTC) or "2026-11-26 10:00:00.125" (timestamp). Years past 9999, BC
# dates and infinity don't match and stay as text: RFC 3339 has no form for them.
_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)(\+00)?")


class ValueFormatError(ValueError):
    """A value isn't the text form its type prints (the feed's data is not what it claims)."""


def to_json(type_name: str, text: str | None, *, is_array: bool = False) -> Any:
    """The JSON value of one column: ``text`` is Postgres's text form, None for NULL."""
    if text is None:
        return None
    if is_array:
        return text
    if type_name in INTEGER_TYPES:
        try:
            return int(text)
        except ValueError:
            raise ValueFormatError(f"{type_name} value {text!r} is not an integer") from None
    if type_name == "bool":
        if text in ("t", "true"):
            return True
        if text in ("f", "false"):
            return False
        raise ValueFormatError(f"bool value {text!r} is neither t nor f")
    if type_name in ("timestamptz", "timestamp"):
        return rfc3339(text)
    if type_name in JSON_TYPES:
        # Embedded as it is: Postgres checked it is JSON, and numbers keep every digit.
        return msgspec.Raw(text.encode())
    if type_name == "bytea":
        return base64.b64encode(_hex_bytes(text)).decode("ascii")
    return text


def rfc3339(text: str) -> str:
    """A timestamp's text form as RFC 3339 (a timestamp without time zone is read as UTC)."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return text
    return f"{match.group(1)}T{match.group(2)}Z"


def _hex_bytes(text: str) -> bytes:
    if not text.startswith("\\x"):
        raise ValueFormatError("bytea value is not in hex form (bytea_output = 'hex')")
    try:
        return bytes.fromhex(text[2:])
    except ValueError:
        raise ValueFormatError("bytea value has a character that is not hex") from None
