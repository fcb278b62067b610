"""A stream's life as ds-sync follows it: found, parked and woken, closed, deleted, resumed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
from sync_support import checkpoint, count_events, rows, wait_until

if TYPE_CHECKING:
    from sync_support import Streams, SyncProcess

EVENT = {"type": "message", "key": "msg:1", "operation": "set", "value": {"text": "hi"}}


def test_streams_made_after_start_are_found_by_wakes(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    sync.start()  # rescans are 10 minutes apart: only a wake can find these
    paths = [streams.create(f"new-{n}") for n in range(3)]
    for n in range(3):
        streams.append(f"new-{n}", EVENT)
    for path in paths:
        wait_until(lambda path=path: count_events(postgres_db, path) == 1, what=path)
    assert sync.metric("ds_sync_scans_total") == 1


def test_an_idle_stream_holds_no_reader_and_a_wake_brings_it_back(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("quiet")
    streams.append("quiet", EVENT)
    sync.start()  # idle after 1 s
    wait_until(lambda: count_events(postgres_db, path) == 1, what="the first row")
    wait_until(lambda: 'ds_sync_streams{state="reading"} 0.0' in sync.metrics(), what="parked")
    for n in range(3):
        streams.append("quiet", {**EVENT, "key": f"msg:{n + 2}"})
    wait_until(lambda: count_events(postgres_db, path) == 4, what="rows after the wake")
    assert sync.metric("ds_sync_wakes_total") >= 1


def test_a_closed_stream_is_finished_and_marked_done(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("ending")
    streams.append("ending", EVENT)
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 1, what="the first row")
    streams.append("ending", {**EVENT, "key": "msg:2"})
    streams.close("ending")
    tail = httpx.head(streams.url("ending")).headers["Stream-Next-Offset"]
    wait_until(lambda: checkpoint(postgres_db, path) == (tail, "done"), what="done")
    assert count_events(postgres_db, path) == 2


def test_a_stream_closed_while_ds_sync_was_away_is_finished_on_start(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("closed-early")
    streams.append("closed-early", EVENT, EVENT)
    streams.close("closed-early")
    sync.start()
    wait_until(lambda: (checkpoint(postgres_db, path) or ("", ""))[1] == "done", what="done")
    assert count_events(postgres_db, path) == 2


def test_a_deleted_stream_stops_being_synced(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    sync.env["DS_SYNC__IDLE_SECS"] = "30"  # its reader is connected when it goes
    path = streams.create("doomed")
    streams.append("doomed", EVENT)
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 1, what="the first row")
    streams.delete("doomed")
    wait_until(lambda: (checkpoint(postgres_db, path) or ("", ""))[1] == "deleted", what="deleted")
    assert count_events(postgres_db, path) == 1  # its history stays


def test_a_parked_stream_deleted_is_noticed_by_a_rescan(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    sync.env["DS_SYNC__RESCAN_SECS"] = "0.5"
    path = streams.create("gone-quietly")
    streams.append("gone-quietly", EVENT)
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 1, what="the first row")
    wait_until(lambda: 'ds_sync_streams{state="reading"} 0.0' in sync.metrics(), what="parked")
    streams.delete("gone-quietly")
    wait_until(lambda: (checkpoint(postgres_db, path) or ("", ""))[1] == "deleted", what="deleted")


def test_restart_resumes_from_the_checkpoint(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("resumed")
    streams.append("resumed", *[{**EVENT, "key": f"msg:{n}"} for n in range(5)])
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 5, what="5 rows")
    assert sync.stop() == 0  # SIGTERM: a clean exit
    assert "stopped" in sync.log()
    second = streams.append("resumed", *[{**EVENT, "key": f"msg:{n}"} for n in range(5, 8)])
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 8, what="8 rows")
    found = rows(
        postgres_db,
        "SELECT ds_offset, event_index, event_key FROM session_events "
        "WHERE stream_name = %s ORDER BY ds_offset, event_index",
        path,
    )
    first_read = [("0" * 20, n, f"msg:{n}") for n in range(5)]
    assert found[:5] == first_read
    # Read again from the checkpoint, not from -1: one new read, at the old tail.
    old_tail = found[5][0]
    assert found[5:] == [(old_tail, n - 5, f"msg:{n}") for n in range(5, 8)]
    assert old_tail != "0" * 20
    assert second > old_tail


def test_history_dropped_before_it_was_synced_is_a_recorded_gap(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("snapshotted")
    streams.append("snapshotted", {**EVENT, "key": "msg:1"})
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 1, what="the first row")
    assert sync.stop() == 0
    # While ds-sync is away, two more messages arrive and a snapshot drops them.
    snapshot_at = streams.append(
        "snapshotted", {**EVENT, "key": "msg:2"}, {**EVENT, "key": "msg:3"}
    )
    bucket_url = f"{streams.server_url}/ds/{streams.path('snapshotted')}"
    response = httpx.put(
        f"{bucket_url}/snapshot/{snapshot_at}",
        content=b'{"state": {}}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 204, response.text
    streams.append("snapshotted", {**EVENT, "key": "msg:4"})
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 2, what="the row after the snapshot")
    before = rows(postgres_db, "SELECT next_offset FROM sync_checkpoints")[0][0]
    gaps = rows(postgres_db, "SELECT stream_name, from_offset, to_offset FROM sync_gaps")
    first_tail = rows(
        postgres_db,
        "SELECT ds_offset FROM session_events WHERE event_key = 'msg:4' AND stream_name = %s",
        path,
    )[0][0]
    assert first_tail == snapshot_at  # a read after a bootstrap starts at the snapshot
    assert len(gaps) == 1
    assert gaps[0][0] == path
    assert gaps[0][2] == snapshot_at
    assert gaps[0][1] < snapshot_at
    assert before == httpx.head(streams.url("snapshotted")).headers["Stream-Next-Offset"]
    assert "was dropped by a snapshot before it was synced" in sync.log()
    assert sync.metric("ds_sync_gaps_total") == 1
