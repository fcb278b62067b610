"""State Protocol messages: change messages and control messages, checked.

Stream content is untrusted (the State Protocol's security section): a
message that is neither a well-formed change nor a known control is refused
with `StateMessageError`, and the caller decides whether to skip it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

OPERATIONS = ("insert", "update", "delete", "upsert")
CONTROLS = ("snapshot-start", "snapshot-end", "reset")
Operation: TypeAlias = Literal["insert", "update", "delete", "upsert"]
Control: TypeAlias = Literal["snapshot-start", "snapshot-end", "reset"]
Message: TypeAlias = dict[str, Any]
"""One decoded message: ``{"type", "key", "value", "old_value"?, "headers": {...}}``,
or ``{"headers": {"control": ...}}``."""


class StateMessageError(ValueError):
    """A message that is not a State Protocol change or control message."""


def control_of(message: Message) -> Control | None:
    """The control a control message carries, None for a change message."""
    headers = message.get("headers") if isinstance(message, dict) else None
    if not isinstance(headers, dict) or "control" not in headers:
        return None
    control = headers["control"]
    if control not in CONTROLS:
        raise StateMessageError(f"unknown control {control!r}")
    return control  # type: ignore[no-any-return]


def check_change(message: Message) -> tuple[str, str, Operation]:
    """The (type, key, operation) of a change message; raises what is wrong with it."""
    if not isinstance(message, dict):
        raise StateMessageError(f"a message is a JSON object, not {type(message).__name__}")
    headers = message.get("headers")
    if not isinstance(headers, dict):
        raise StateMessageError("a change message has a headers object")
    operation = headers.get("operation")
    if operation not in OPERATIONS:
        raise StateMessageError(f"unknown operation {operation!r}")
    kind, key = message.get("type"), message.get("key")
    if not isinstance(kind, str) or not kind:
        raise StateMessageError("a change message has a non-empty string type")
    if not isinstance(key, str) or not key:
        raise StateMessageError("a change message has a non-empty string key")
    return kind, key, operation


def change(
    type: str,
    key: str,
    value: Any = None,
    *,
    operation: Operation = "upsert",
    old_value: Any = None,
    txid: str | None = None,
    timestamp: str | None = None,
) -> Message:
    """A change message, ready to append (e.g. with an idempotent producer)."""
    headers: dict[str, Any] = {"operation": operation}
    if txid is not None:
        headers["txid"] = txid
    if timestamp is not None:
        headers["timestamp"] = timestamp
    message: Message = {"type": type, "key": key, "value": value, "headers": headers}
    if old_value is not None:
        message["old_value"] = old_value
    return message


def control(kind: Control, *, offset: str | None = None) -> Message:
    """A control message (``snapshot-start``, ``snapshot-end`` or ``reset``)."""
    headers: dict[str, Any] = {"control": kind}
    if offset is not None:
        headers["offset"] = offset
    return {"headers": headers}
