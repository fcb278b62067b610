"""What a session message says, per sessions.md §2: type, key, operation, event time.

Each field is taken on its own: from ``headers`` when ``headers`` is an
object holding that field with a non-null value, else from the top level.
A message that is not an object, or lacks a string ``type`` or ``key``, has
no type, key or operation; an object's event time counts all the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# The §2 event-time rule, as ds-sync applies it when it fills session_events.
from ds_sync.timestamps import parse_event_time

if TYPE_CHECKING:
    from datetime import datetime


@dataclass(frozen=True, slots=True)
class EventFields:
    """The normalised columns of one message; None where the message doesn't say."""

    type: str | None
    key: str | None
    operation: str | None
    event_time: datetime | None


NO_FIELDS = EventFields(None, None, None, None)


def event_fields(message: Any) -> EventFields:
    """The §2 fields of a decoded message (any JSON value)."""
    if not isinstance(message, dict):
        return NO_FIELDS
    headers = message.get("headers")
    if not isinstance(headers, dict):
        headers = {}
    event_time = parse_event_time(_choose("timestamp", headers, message))
    event_type = _choose("type", headers, message)
    key = _choose("key", headers, message)
    if not isinstance(event_type, str) or not isinstance(key, str):
        return EventFields(None, None, None, event_time)
    operation = _choose("operation", headers, message)
    return EventFields(
        event_type, key, operation if isinstance(operation, str) else None, event_time
    )


def _choose(name: str, headers: dict[str, Any], message: dict[str, Any]) -> Any:
    # Chosen before it is checked: an unusable headers value does not fall back.
    value = headers.get(name)
    return message.get(name) if value is None else value
