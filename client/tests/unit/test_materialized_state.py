"""MaterializedState: the State Protocol's fold, controls, and what is refused."""

from __future__ import annotations

import pytest
from durable_sessions.state import MaterializedState, StateMessageError, change, control


def test_operations_fold_per_type_and_key() -> None:
    state = MaterializedState()
    state.apply_batch(
        [
            change("user", "1", {"name": "Ann"}, operation="insert"),
            change("user", "2", {"name": "Bo"}, operation="insert"),
            change("user", "1", {"name": "Ann B"}, operation="update", old_value={"name": "Ann"}),
            change("room", "r", {"topic": "x"}),  # upsert
            change("user", "2", None, operation="delete"),
            change("user", "9", None, operation="delete"),  # deleting nothing is fine
        ]
    )
    assert state.get("user", "1") == {"name": "Ann B"}
    assert state.get("user", "2") is None
    assert state.get_type("user") == {"1": {"name": "Ann B"}}
    assert state.get_type("none") == {}
    assert state.types == ["user", "room"]
    assert state.type_count == 2
    assert state.to_dict() == {"user": {"1": {"name": "Ann B"}}, "room": {"r": {"topic": "x"}}}


def test_reset_clears_and_snapshots_are_marked() -> None:
    state = MaterializedState()
    state.apply(change("t", "a", 1))
    state.apply(control("reset"))
    assert state.to_dict() == {}
    assert state.resets == 1
    state.apply(control("snapshot-start", offset="0" * 20))
    assert state.in_snapshot
    state.apply(change("t", "b", 2, operation="insert"))
    state.apply(control("snapshot-end"))
    assert not state.in_snapshot
    assert state.to_dict() == {"t": {"b": 2}}


@pytest.mark.parametrize(
    "message",
    [
        [1, 2],
        {"type": "t", "key": "k"},
        {"type": "t", "key": "k", "headers": {"operation": "append"}},
        {"type": "", "key": "k", "headers": {"operation": "insert"}},
        {"type": "t", "key": 5, "headers": {"operation": "insert"}},
        {"headers": {"control": "rewind"}},
    ],
)
def test_malformed_messages_are_refused_and_change_nothing(message: object) -> None:
    state = MaterializedState()
    state.apply(change("t", "a", 1))
    with pytest.raises(StateMessageError):
        state.apply(message)  # type: ignore[arg-type]
    assert state.to_dict() == {"t": {"a": 1}}


def test_load_replaces_the_state() -> None:
    state = MaterializedState()
    state.apply(change("t", "a", 1))
    state.load({"u": {"b": 2}})
    assert state.to_dict() == {"u": {"b": 2}}
    with pytest.raises(StateMessageError):
        state.load({"u": 3})  # type: ignore[dict-item]
