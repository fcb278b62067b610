"""The heartbeat's events reuse a bounded set of keys, so a session-events snapshot stays small."""

from __future__ import annotations

from ds_stack.heartbeat.producer import session_event


def test_events_cycle_over_keep_keys() -> None:
    # Even ticks write events: 2, 4, 6, ...
    keys = [session_event("hb", tick, keep=3)["key"] for tick in range(2, 2 * 10, 2)]
    assert set(keys) == {"msg:hb-0", "msg:hb-1", "msg:hb-2"}
    assert keys[:4] == ["msg:hb-1", "msg:hb-2", "msg:hb-0", "msg:hb-1"]
    event = session_event("hb", 4, keep=3)
    assert event["headers"]["operation"] == "insert"  # type: ignore[index]
