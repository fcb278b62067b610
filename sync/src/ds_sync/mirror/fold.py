"""A mirror stream's messages folded into the table's state, and that state as a snapshot.

The fold is the State Protocol's materialisation (sessions.md §4): an
insert or update stores the row under its key, a delete removes it, a
``reset`` clears everything. Each row keeps the headers of the change that
last wrote it (its ``txid`` and ``timestamp``), so the snapshot says where
each row came from.

The snapshot is itself State Protocol messages, a JSON array: ``snapshot-start``,
one ``insert`` per row (in key order), ``snapshot-end``; both controls carry
the snapshot offset (``headers.offset``). Applying it, then the messages
after the offset, gives the same state as the whole history. When the fold
ends inside a ``snapshot-start`` … ``snapshot-end`` run (a first sync still
being written), the snapshot leaves that run open: the ``snapshot-end``
still to come in the stream closes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode

SNAPSHOT_START = "snapshot-start"
SNAPSHOT_END = "snapshot-end"
RESET = "reset"


class FoldError(ValueError):
    """A message the fold can't apply (not a State Protocol message)."""


@dataclass(slots=True)
class TableState:
    """``(type, key)`` → the message that last wrote the row; whether a snapshot run is open."""

    rows: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    open_run: bool = False

    def apply(self, message: Any) -> None:
        """Apply one decoded message."""
        if not isinstance(message, dict):
            raise FoldError(f"not a State Protocol message: {message!r}"[:200])
        headers = message.get("headers")
        if not isinstance(headers, dict):
            raise FoldError("a message without headers")
        control = headers.get("control")
        if control is not None:
            if control == RESET:
                self.rows.clear()
                self.open_run = False
            elif control == SNAPSHOT_START:
                self.open_run = True
            elif control == SNAPSHOT_END:
                self.open_run = False
            return
        key = (message.get("type"), message.get("key"))
        if not all(isinstance(part, str) for part in key):
            raise FoldError("a change without a string type and key")
        operation = headers.get("operation")
        if operation in ("insert", "update", "upsert"):
            self.rows[key] = message  # type: ignore[index]
        elif operation == "delete":
            self.rows.pop(key, None)  # type: ignore[arg-type]
        else:
            raise FoldError(f"unknown operation {operation!r}")

    def apply_raw(self, raw: bytes) -> None:
        try:
            self.apply(_decode(raw))
        except msgspec.DecodeError as exc:
            raise FoldError(f"not JSON: {exc}") from None

    def apply_snapshot(self, blob: bytes) -> None:
        """Apply a snapshot this module wrote (a JSON array of messages)."""
        try:
            messages = _decode(blob)
        except msgspec.DecodeError as exc:
            raise FoldError(f"the snapshot is not JSON: {exc}") from None
        if not isinstance(messages, list):
            raise FoldError("the snapshot is not a JSON array of messages")
        for message in messages:
            self.apply(message)

    def snapshot(self, offset: str) -> bytes:
        """The state as a snapshot at ``offset`` (a JSON array of State Protocol messages)."""
        parts = [_encode({"headers": {"control": SNAPSHOT_START, "offset": offset}})]
        for key in sorted(self.rows):
            message = self.rows[key]
            headers = {**message["headers"], "operation": "insert"}
            row = {"type": key[0], "key": key[1], "value": message.get("value"), "headers": headers}
            parts.append(_encode(row))
        if not self.open_run:
            parts.append(_encode({"headers": {"control": SNAPSHOT_END, "offset": offset}}))
        return b"[" + b",".join(parts) + b"]"
