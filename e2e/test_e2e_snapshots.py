"""Snapshots published by ``ds-spark snapshots`` against the running stack."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from durable_sessions import bootstrap
from e2e_clients import append, create, read_all, wait_until
from e2e_events import chunk, deleted, fold, message, presence
from e2e_stack import E2E, unique

# Only against a hang: a SparkSession alone takes 7-30 s to start on these machines,
# and `make test` runs the Spark suite and the rest beside this one on two cores.
_SPARK_TIMEOUT_SECS = 800


def _bootstrapped(e2e: E2E, path: str) -> tuple[dict[str, Any], str, list[Any], str]:
    """The snapshot's document, its offset, the messages after it, and the tail."""
    headers = {"Authorization": f"Bearer {e2e.token()}"}
    state = asyncio.run(bootstrap(f"{e2e.url}{path}", headers=headers))
    assert state.snapshot is not None
    after: list[Any] = []
    for _, body in state.messages:
        parsed = json.loads(body)
        after += parsed if isinstance(parsed, list) else [parsed]
    return json.loads(state.snapshot), state.snapshot_offset, after, state.next_offset


def _run_snapshots(e2e: E2E, stream: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DS_SERVER_URL": e2e.url,
        "POSTGRES_URL": e2e.postgres_url,
        "DS_SPARK__TOKEN": e2e.token("ds-spark"),
        # This session only: the run must not fold every other test's sessions.
        "DS_SPARK__STREAMS": stream,
        "DS_SPARK__MASTER": "local[2]",
        # One session: a couple of shuffle partitions, not Spark's 200 tasks per stage.
        "PYSPARK_SUBMIT_ARGS": "--conf spark.sql.shuffle.partitions=2 pyspark-shell",
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    return subprocess.run(
        [sys.executable, "-m", "ds_spark", "snapshots"],
        env=env,
        capture_output=True,
        text=True,
        timeout=_SPARK_TIMEOUT_SECS,
    )


@pytest.mark.timeout(900)
def test_bootstrap_after_spark_snapshots_equals_full_replay(e2e: E2E) -> None:
    """After ``ds-spark snapshots``, a client that bootstraps (snapshot + the messages after
    it) holds exactly the state of replaying the whole session; history before the snapshot
    leaves the stream (410) but stays in session_events."""
    session = unique("snap")
    path, stream = f"/ds/sessions/{session}", f"sessions/{session}"
    history = [
        presence("alice", "online", t=0),
        message("msg:1", "user", "what is a durable stream?", t=1),
        chunk("msg:2", "An append-only ", 0, t=2),
        chunk("msg:2", "log over HTTP.", 1, t=3),
        {"type": "reaction", "key": "reaction:msg:2:alice:+1", "operation": "set", "value": {}},
        message("msg:1", "user", "what is a durable stream, exactly?", operation="update", t=4),
        presence("bob", "online", t=5),
        message("msg:3", "user", "typo", t=6),
        deleted("message", "msg:3", t=7),
        presence("bob", "offline", t=8),
    ]
    with e2e.client() as http:
        create(http, path, *history[:4])
        append(http, path, *history[4:])
        tail = read_all(http, path)[1]
    wait_until(
        lambda: (
            e2e.sql("SELECT next_offset FROM sync_checkpoints WHERE stream_name = %s", stream)
            == [(tail,)]
        ),
        what="ds-sync's checkpoint at the tail",
    )

    run = _run_snapshots(e2e, stream)
    assert run.returncode == 0, run.stderr[-3000:]

    document, offset, after, _ = _bootstrapped(e2e, path)
    assert document["format"] == "ds-session-state/1"
    assert offset == document["offset"] == tail  # at ds-sync's checkpoint, never beyond
    assert after == []
    assert document["state"] == fold(history)
    with e2e.client() as http:
        assert http.get(path, params={"offset": "0" * 20}).status_code == 410
    assert e2e.sql("SELECT count(*) FROM session_events WHERE stream_name = %s", stream) == [
        (len(history),)
    ]

    # Written after the snapshot: a bootstrap returns it after the snapshot.
    more = [chunk("msg:2", " Resumable.", 2, t=9), presence("alice", "away", t=10)]
    with e2e.client() as http:
        append(http, path, *more)
    document, offset, after, _ = _bootstrapped(e2e, path)
    assert offset == tail
    assert after == more
    assert fold(after, document["state"]) == fold(history + more)
