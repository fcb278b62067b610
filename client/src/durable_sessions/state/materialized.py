"""``MaterializedState``: the State Protocol folded into memory, type by type.

``@durable-streams/state``'s ``MaterializedState`` in Python, with the same
fold for change messages: ``insert``, ``update`` and ``upsert`` store the
whole ``value`` at (type, key), ``delete`` removes it. Control messages,
which that class leaves to the application, are handled as the protocol
says: ``reset`` clears the state; ``snapshot-start`` and ``snapshot-end``
only mark where a complete state begins and ends (`in_snapshot`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from durable_sessions.state.messages import StateMessageError, check_change, control_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from durable_sessions.state.messages import Message


class MaterializedState:
    """An in-memory view of a State Protocol stream: ``type → key → value``."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self.in_snapshot = False
        self.resets = 0

    def apply(self, message: Message) -> None:
        """Apply one change or control message (a decoded JSON object).

        Raises `StateMessageError` for a message of neither kind; the
        state is then unchanged.
        """
        control = control_of(message)
        if control is not None:
            if control == "reset":
                self.clear()
                self.resets += 1
            self.in_snapshot = control == "snapshot-start"
            return
        kind, key, operation = check_change(message)
        # As in the TypeScript class, any change makes its type known, even a delete.
        values = self._data.setdefault(kind, {})
        if operation == "delete":
            values.pop(key, None)
        else:
            values[key] = message.get("value")

    def apply_batch(self, messages: Iterable[Message]) -> None:
        """Apply messages in order."""
        for message in messages:
            self.apply(message)

    def get(self, type: str, key: str) -> Any:
        """The value at (``type``, ``key``), None when there is none."""
        values = self._data.get(type)
        return None if values is None else values.get(key)

    def get_type(self, type: str) -> dict[str, Any]:
        """Every ``key → value`` of ``type`` (a copy; empty when there is none)."""
        return dict(self._data.get(type, {}))

    def clear(self) -> None:
        """Drop all state."""
        self._data.clear()

    @property
    def type_count(self) -> int:
        """How many types have held a value (a type emptied by deletes still counts)."""
        return len(self._data)

    @property
    def types(self) -> list[str]:
        """The type names, in the order they first appeared."""
        return list(self._data)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """The whole state, ``{type: {key: value}}`` (copies of the maps)."""
        return {kind: dict(values) for kind, values in self._data.items()}

    def load(self, state: dict[str, dict[str, Any]]) -> None:
        """Replace the state with ``{type: {key: value}}`` (e.g. from a snapshot)."""
        if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
            raise StateMessageError("a state is an object of objects: {type: {key: value}}")
        self._data = {kind: dict(values) for kind, values in state.items()}
