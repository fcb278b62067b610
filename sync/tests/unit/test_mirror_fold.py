"""Folding a mirror stream into the table's state, and that state as a snapshot."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from ds_sync.mirror.fold import FoldError, TableState


def change(op: str, key: str, value: Any = None, txid: str = "7") -> dict[str, Any]:
    headers = {"operation": op, "txid": txid, "timestamp": "2026-11-27T10:00:00Z"}
    return {"type": "items", "key": key, "value": value, "headers": headers}


def control(name: str) -> dict[str, Any]:
    return {"headers": {"control": name}}


def replay(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The materialisation a reader computes (reset clears, controls do nothing else)."""
    rows: dict[str, Any] = {}
    for message in messages:
        headers = message["headers"]
        if headers.get("control") == "reset":
            rows.clear()
        elif "control" not in headers:
            if headers["operation"] == "delete":
                rows.pop(message["key"], None)
            else:
                rows[message["key"]] = message["value"]
    return rows


HISTORY = [
    control("snapshot-start"),
    change("insert", "1", {"id": 1}),
    change("insert", "2", {"id": 2}),
    control("snapshot-end"),
    change("update", "1", {"id": 1, "t": "x"}, txid="8"),
    change("delete", "2"),
    change("insert", "3", {"id": 3}),
]


def test_the_snapshot_replays_to_the_same_state_as_the_history() -> None:
    state = TableState()
    for message in HISTORY:
        state.apply_raw(msgspec.json.encode(message))
    blob = state.snapshot("00000000000000000420")
    snapshot = msgspec.json.decode(blob)
    assert replay(snapshot) == replay(HISTORY) == {"1": {"id": 1, "t": "x"}, "3": {"id": 3}}
    assert [m["headers"].get("control") for m in snapshot] == [
        "snapshot-start",
        None,
        None,
        "snapshot-end",
    ]
    assert snapshot[0]["headers"]["offset"] == "00000000000000000420"
    # Each row keeps where it came from, as an insert.
    assert snapshot[1]["headers"] == {
        "operation": "insert",
        "txid": "8",
        "timestamp": "2026-11-27T10:00:00Z",
    }
    # Folding the snapshot again, then what followed, is folding everything.
    again = TableState()
    again.apply_snapshot(blob)
    again.apply(change("delete", "1"))
    assert {key[1] for key in again.rows} == {"3"}


def test_a_reset_clears_and_an_open_snapshot_run_stays_open() -> None:
    state = TableState()
    for message in [
        *HISTORY,
        control("reset"),
        control("snapshot-start"),
        change("insert", "9", 9),
    ]:
        state.apply(message)
    snapshot = msgspec.json.decode(state.snapshot("00000000000000000900"))
    # The run's snapshot-end is still to come in the stream: the snapshot must not close it.
    assert [m["headers"].get("control") for m in snapshot] == ["snapshot-start", None]
    assert replay(snapshot) == {"9": 9}


def test_an_empty_table_is_an_empty_snapshot() -> None:
    snapshot = msgspec.json.decode(TableState().snapshot("00000000000000000000"))
    assert [m["headers"]["control"] for m in snapshot] == ["snapshot-start", "snapshot-end"]


@pytest.mark.parametrize(
    "message",
    [b"[1]", b"not json", b'{"type": "items", "key": "1"}', b'{"headers": {"operation": "x"}}'],
)
def test_what_is_not_a_state_protocol_message_is_an_error(message: bytes) -> None:
    with pytest.raises(FoldError):
        TableState().apply_raw(message)
