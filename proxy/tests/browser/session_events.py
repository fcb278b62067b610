"""Session events in both shapes the sessions contract accepts (§2)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def _now() -> str:
    return datetime.now(UTC).isoformat()


def change(type_: str, key: str, operation: str, value: Any = None) -> dict[str, Any]:
    """A State Protocol change message (``headers.operation``)."""
    message: dict[str, Any] = {
        "type": type_,
        "key": key,
        "headers": {"operation": operation, "timestamp": _now()},
    }
    if value is not None:
        message["value"] = value
    return message


def flat(type_: str, key: str, operation: str, value: Any = None) -> dict[str, Any]:
    """The reference stack's flat shape (top-level ``operation``)."""
    message: dict[str, Any] = {
        "type": type_,
        "key": key,
        "operation": operation,
        "timestamp": _now(),
    }
    if value is not None:
        message["value"] = value
    return message


def said(key: str, user: str, text: str, operation: str = "insert") -> dict[str, Any]:
    return change(
        "message", key, operation, {"role": "user", "text": text, "author": f"user:{user}"}
    )


def replied(key: str, text: str) -> dict[str, Any]:
    return change("message", key, "update", {"role": "assistant", "text": text, "author": "agent"})


def chunk(key: str, text: str, index: int) -> dict[str, Any]:
    return flat("chunk", key, "append", {"role": "assistant", "text": text, "index": index})


def presence(user: str, status: str) -> dict[str, Any]:
    return flat("presence", f"user:{user}", "set", {"status": status})
