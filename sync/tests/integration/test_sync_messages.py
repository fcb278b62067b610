"""What lands in session_events: both event shapes, bad messages, non-JSON streams."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx
from sync_support import count_events, rows, wait_until

if TYPE_CHECKING:
    from sync_support import Streams, SyncProcess


def test_both_shapes_and_bad_messages_are_stored_per_the_contract(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("room-1")
    first = streams.append(
        "room-1",
        {
            "type": "message",
            "key": "msg:42",
            "value": {"role": "user", "text": "hi", "author": "user:alice"},
            "headers": {"operation": "insert", "timestamp": "2026-11-26T10:00:00.125Z"},
        },
        {
            "type": "presence",
            "key": "user:alice",
            "operation": "set",
            "value": {"status": "online"},
            "timestamp": "2026-11-26T12:00:00+02:00",
        },
        42,  # not an object
        {"type": "typing", "operation": "set"},  # no key
        {"headers": {"control": "snapshot-start"}},  # a control message
        {"type": "t", "key": "k", "timestamp": "2026-11-26", "headers": {"timestamp": 7}},
    )
    sync.start()
    # A second read: its rows start at the offset the first append ended at.
    streams.append("room-1", {"type": "chunk", "key": "msg:43", "operation": "append"})
    wait_until(lambda: count_events(postgres_db, path) == 7, what="7 rows")
    found = rows(
        postgres_db,
        "SELECT ds_offset, event_index, event_type, event_key, operation, event_time, payload "
        "FROM session_events WHERE stream_name = %s ORDER BY ds_offset, event_index",
        path,
    )
    start = "0" * 20
    assert found[0] == (
        start,
        0,
        "message",
        "msg:42",
        "insert",
        datetime(2026, 11, 26, 10, 0, 0, 125000, tzinfo=UTC),
        {
            "type": "message",
            "key": "msg:42",
            "value": {"role": "user", "text": "hi", "author": "user:alice"},
            "headers": {"operation": "insert", "timestamp": "2026-11-26T10:00:00.125Z"},
        },
    )
    assert found[1][:6] == (
        start,
        1,
        "presence",
        "user:alice",
        "set",
        datetime(2026, 11, 26, 10, 0, 0, tzinfo=UTC),
    )
    assert found[2] == (start, 2, None, None, None, None, 42)
    assert found[3][:6] == (start, 3, None, None, None, None)  # no key: no session event
    assert found[4][:6] == (start, 4, None, None, None, None)
    assert found[5][:6] == (start, 5, "t", "k", None, None)
    assert found[6][:5] == (first, 0, "chunk", "msg:43", "append")
    # The checkpoint is the stream's tail: committed with the last rows.
    tail = httpx.head(streams.url("room-1")).headers["Stream-Next-Offset"]
    assert rows(postgres_db, "SELECT next_offset, status FROM sync_checkpoints") == [
        (tail, "active")
    ]


def test_messages_jsonb_refuses_are_kept_as_text(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("nul")
    # Valid JSON that jsonb cannot hold: a NUL character in a string.
    streams.append_raw("nul", b'[{"type":"message","key":"msg:1","value":{"text":"a\\u0000b"}}, 1]')
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 2, what="both rows")
    found = rows(
        postgres_db,
        "SELECT event_type, event_key, payload FROM session_events "
        "WHERE stream_name = %s ORDER BY event_index",
        path,
    )
    assert found == [
        ("message", "msg:1", '{"type":"message","key":"msg:1","value":{"text":"a\\u0000b"}}'),
        (None, None, 1),
    ]
    assert "jsonb refuses it" in sync.log()


def test_a_stream_that_is_not_json_is_left_alone_and_said_once(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    streams.create("bytes", content_type="application/octet-stream")
    body = b"raw bytes"
    headers = {"Content-Type": "application/octet-stream"}
    assert httpx.post(streams.url("bytes"), content=body, headers=headers).status_code == 204
    sync.env["DS_SYNC__RESCAN_SECS"] = "0.2"
    sync.start()
    path = streams.create("json")
    streams.append("json", {"type": "t", "key": "k"})
    assert httpx.post(streams.url("bytes"), content=body, headers=headers).status_code == 204
    wait_until(lambda: count_events(postgres_db, path) == 1, what="the JSON stream synced")
    wait_until(lambda: sync.metric("ds_sync_scans_total") >= 3, what="a few rescans")
    assert count_events(postgres_db) == 1
    assert sync.log().count(f"stream {streams.path('bytes')} is application/octet-stream") == 1
    assert sync.metric("ds_sync_streams_skipped") == 1
