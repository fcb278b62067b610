"""Streams live for months: what a stream has *ever* written is never capped by default.

The 413 these tests guard against: with default settings, a JSON stream got
1 MiB appends, a snapshot at its tail after the 8th, and still refused the
11th (``stream would exceed 10485760 bytes``), because the per-stream limit
was compared with the lifetime offset instead of the bytes the stream still
retains after its snapshot. Each test starts a server of its own with the
default limits (the shared suite servers run with small ones).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import httpx
import pytest
from ext_helpers import JSON_TYPE, Bucket
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

MiB = 1024 * 1024


def _message(n: int, size: int) -> bytes:
    """One JSON message of exactly ``size`` bytes."""
    head = json.dumps({"n": n, "pad": ""}).encode()
    return json.dumps({"n": n, "pad": "x" * (size - len(head))}).encode()


@pytest.fixture(params=["sqlite", "memory"])
def default_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[httpx.Client]:
    """A server with nothing but its backend and data directory set: every limit at its default."""
    env = {"DS_STORAGE__MODE": request.param, "DS_STORAGE__DATA_DIR": str(tmp_path / "streams")}
    with ServerProcess(env=env) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        yield http


def test_a_snapshot_frees_room_for_more_appends(default_server: httpx.Client) -> None:
    http = default_server
    assert http.put("/ds/capb").status_code == 201
    bucket = Bucket(http, "capb")
    bucket.create_stream("s1", content_type=JSON_TYPE)
    for n in range(1, 41):
        response = http.post(
            bucket.path("s1"), content=_message(n, MiB), headers={"Content-Type": JSON_TYPE}
        )
        assert response.status_code in (200, 204), (n, response.status_code, response.text)
        if n % 8 == 0:
            tail = response.headers["Stream-Next-Offset"]
            assert bucket.publish("s1", tail, b"{}", JSON_TYPE).status_code == 204
    # 40 MiB written in all; the stream retains only what followed its last snapshot.
    head = http.head(bucket.path("s1"))
    assert int(head.headers["Stream-Next-Offset"]) == 40 * MiB
