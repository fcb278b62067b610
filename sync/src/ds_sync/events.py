"""What a session event says, per sessions.md §2: type, key, operation and event time.

Each field is taken on its own: from ``headers`` when ``headers`` is an
object holding that field with a non-null value, else from the top level.
The value is chosen first and checked after, so an unusable
``headers.timestamp`` does not fall back to the top level. Messages that
are not objects, or lack a string ``type`` or ``key``, are kept with type,
key and operation None (an object's event time still counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

import msgspec

from ds_sync.timestamps import parse_event_time

if TYPE_CHECKING:
    from datetime import datetime

_decoder = msgspec.json.Decoder()


class OperationKind(Enum):
    """What an operation does to the (type, key) it names."""

    UPSERT = "upsert"
    DELETE = "delete"
    APPEND = "append"


OPERATION_KINDS: dict[str, OperationKind] = {
    "set": OperationKind.UPSERT,
    "insert": OperationKind.UPSERT,
    "update": OperationKind.UPSERT,
    "remove": OperationKind.DELETE,
    "delete": OperationKind.DELETE,
    "append": OperationKind.APPEND,
}


@dataclass(frozen=True, slots=True)
class EventFields:
    """The columns extracted from one message; None where the message doesn't say."""

    event_type: str | None
    event_key: str | None
    operation: str | None
    event_time: datetime | None

    @property
    def kind(self) -> OperationKind | None:
        """Upsert, delete or append; None for any other operation (compared case-sensitively)."""
        return None if self.operation is None else OPERATION_KINDS.get(self.operation)


NO_FIELDS = EventFields(None, None, None, None)


def extract(message: Any) -> EventFields:
    """The fields of a decoded message (any JSON value)."""
    if not isinstance(message, dict):
        return NO_FIELDS
    headers = message.get("headers")
    if not isinstance(headers, dict):
        headers = {}
    event_time = parse_event_time(_choose("timestamp", headers, message))
    event_type = _string(_choose("type", headers, message))
    event_key = _string(_choose("key", headers, message))
    if event_type is None or event_key is None:
        # Without both it is no session event: no type, key or operation at all.
        return EventFields(None, None, None, event_time)
    operation = _string(_choose("operation", headers, message))
    return EventFields(event_type, event_key, operation, event_time)


def extract_raw(raw: bytes) -> EventFields:
    """The fields of one message as the stream stores it (JSON text)."""
    try:
        return extract(_decoder.decode(raw))
    except msgspec.DecodeError:
        # The server only stores valid JSON; what msgspec still refuses has no fields.
        return NO_FIELDS


def _choose(name: str, headers: dict[str, Any], message: dict[str, Any]) -> Any:
    value = headers.get(name)
    return message.get(name) if value is None else value


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None
