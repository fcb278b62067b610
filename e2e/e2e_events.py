"""Session events (sessions.md §2) and the §6 fold, written apart from ds-sync and ds-spark.

The e2e suite checks the stack against this independent reading of the
contract rather than against the code under test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

UPSERTS = {"set", "insert", "update"}
DELETES = {"remove", "delete"}
_EPOCH = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)


def at(seconds: float) -> str:
    """An RFC 3339 timestamp ``seconds`` after a fixed start."""
    return (_EPOCH + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def message(key: str, role: str, text: str, *, operation: str = "insert", t: float = 0) -> Any:
    """A State Protocol change message of type ``message``."""
    return {
        "type": "message",
        "key": key,
        "value": {"role": role, "text": text, "author": f"{role}:e2e"},
        "headers": {"operation": operation, "timestamp": at(t)},
    }


def deleted(type_: str, key: str, *, t: float = 0) -> Any:
    return {"type": type_, "key": key, "headers": {"operation": "delete", "timestamp": at(t)}}


def presence(user: str, status: str, *, t: float = 0) -> Any:
    """The reference stack's flat shape."""
    return {
        "type": "presence",
        "key": f"user:{user}",
        "operation": "set",
        "value": {"status": status},
        "timestamp": at(t),
    }


def chunk(key: str, text: str, index: int, *, t: float = 0) -> Any:
    return {
        "type": "chunk",
        "key": key,
        "operation": "append",
        "value": {"role": "assistant", "text": text, "index": index},
        "timestamp": at(t),
    }


def _field(event: dict[str, Any], name: str) -> Any:
    headers = event.get("headers")
    if isinstance(headers, dict) and headers.get(name) is not None:
        return headers[name]
    return event.get(name)


def fold(messages: list[Any], state: dict[str, Any] | None = None) -> dict[str, Any]:
    """§6: the session state after ``messages``, starting from ``state``."""
    result: dict[str, dict[str, Any]] = {t: dict(keys) for t, keys in (state or {}).items()}
    for event in messages:
        if not isinstance(event, dict):
            continue
        type_, key, operation = event.get("type"), event.get("key"), _field(event, "operation")
        if not isinstance(type_, str) or not isinstance(key, str):
            continue
        if operation in UPSERTS:
            result.setdefault(type_, {})[key] = event.get("value")
        elif operation in DELETES:
            entries = result.get(type_, {})
            entries.pop(key, None)
            if not entries:
                result.pop(type_, None)
        elif operation == "append" and type_ == "chunk":
            value = event.get("value") if isinstance(event.get("value"), dict) else {}
            text = value.get("text") if isinstance(value.get("text"), str) else ""
            messages_state = result.setdefault("message", {})
            entry = messages_state.get(key)
            if key not in messages_state:
                messages_state[key] = {"role": value.get("role"), "text": text}
            elif isinstance(entry, dict):
                previous = entry.get("text") if isinstance(entry.get("text"), str) else ""
                messages_state[key] = {**entry, "text": previous + text}
    return result
