"""Batches as State Protocol messages (sessions.md §4), in POST bodies of bounded size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ds_sync.mirror.model import Change, Control

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ds_sync.mirror.model import Item

_encode = msgspec.json.Encoder().encode


def encode_item(table_type: str, item: Item) -> bytes:
    """One message: a change of ``table_type`` rows, or a control message."""
    if isinstance(item, Control):
        return _encode({"headers": {"control": item.value}})
    return _encode(_change(table_type, item))


def _change(table_type: str, change: Change) -> dict[str, Any]:
    headers: dict[str, str] = {"operation": change.operation}
    if change.txid is not None:
        headers["txid"] = change.txid
    headers["timestamp"] = change.timestamp
    message: dict[str, Any] = {"type": table_type, "key": change.key, "value": change.value}
    if change.operation != "insert" and change.old_value is not None:
        message["old_value"] = change.old_value
    message["headers"] = headers
    return message


def bodies(messages: Iterable[bytes], max_bytes: int) -> list[bytes]:
    """JSON arrays of the messages, in order, each at most ``max_bytes`` (a larger message
    goes alone)."""
    found: list[bytes] = []
    current: list[bytes] = []
    size = 2  # the brackets
    for message in messages:
        if current and size + len(message) + 1 > max_bytes:
            found.append(b"[" + b",".join(current) + b"]")
            current, size = [], 2
        current.append(message)
        size += len(message) + 1
    if current:
        found.append(b"[" + b",".join(current) + b"]")
    return found
