"""What a session event says (sessions.md §2): type, key, operation, kind and event time.

Each field is taken on its own: from ``headers`` when ``headers`` is an
object holding that field with a non-null value, else from the top level.
The value is chosen first and checked after, so an unusable
``headers.timestamp`` does not fall back to the top level. A message that
is not an object, or lacks a string ``type`` or ``key``, has no type, key or
operation (an object's event time still counts). ``set``, ``insert`` and
``update`` are upserts, ``remove`` and ``delete`` deletes, ``append`` an
append; any other operation (compared case-sensitively) is none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import msgspec

from durable_sessions.sessions.timestamps import parse_time

if TYPE_CHECKING:
    from datetime import datetime

Kind: TypeAlias = Literal["upsert", "delete", "append"]
UPSERT: Kind = "upsert"
DELETE: Kind = "delete"
APPEND: Kind = "append"
OPERATION_KINDS: dict[str, Kind] = {
    "set": UPSERT,
    "insert": UPSERT,
    "update": UPSERT,
    "remove": DELETE,
    "delete": DELETE,
    "append": APPEND,
}


@dataclass(frozen=True, slots=True)
class EventFields:
    """The fields of one message; None where the message doesn't say."""

    type: str | None
    key: str | None
    operation: str | None
    time: datetime | None

    @property
    def kind(self) -> Kind | None:
        """Upsert, delete or append; None for any other operation."""
        return None if self.operation is None else OPERATION_KINDS.get(self.operation)


NO_FIELDS = EventFields(None, None, None, None)


def fields_of(message: Any) -> EventFields:
    """The §2 fields of a decoded message (any JSON value)."""
    if not isinstance(message, dict):
        return NO_FIELDS
    headers = message.get("headers")
    if not isinstance(headers, dict):
        headers = {}
    time = parse_time(_choose("timestamp", headers, message))
    kind = _string(_choose("type", headers, message))
    key = _string(_choose("key", headers, message))
    if kind is None or key is None:
        # Without both it is no session event: no type, key or operation at all.
        return EventFields(None, None, None, time)
    return EventFields(kind, key, _string(_choose("operation", headers, message)), time)


def fields_of_json(raw: bytes) -> EventFields:
    """The §2 fields of one message as a stream stores it (its JSON text); text that
    is not JSON has none."""
    try:
        return fields_of(_decoder.decode(raw))
    except msgspec.DecodeError:
        return NO_FIELDS


_decoder = msgspec.json.Decoder()


def _choose(name: str, headers: dict[str, Any], message: dict[str, Any]) -> Any:
    value = headers.get(name)
    return message.get(name) if value is None else value


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None
