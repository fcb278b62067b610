"""Snapshots and bootstrap of a top-level stream (one segment, such as ``pg-items``).

Such a stream has no /ds spelling, so its extensions are served below its
/v1/stream path, as the extensions spell them: ``{stream_url}/bootstrap``,
``{stream_url}/snapshot[/{offset}]``.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from ext_helpers import JSON_TYPE, Part, parse_bootstrap

if TYPE_CHECKING:
    import httpx

NO_STREAM_404 = 404


def _stream(http: httpx.Client) -> str:
    url = f"/v1/stream/top-{uuid.uuid4().hex[:12]}"
    assert http.put(url, headers={"Content-Type": JSON_TYPE}).status_code == 201
    return url


def _append(http: httpx.Client, url: str, *messages: object) -> str:
    response = http.post(url, json=list(messages), headers={"Content-Type": JSON_TYPE})
    assert response.status_code in (200, 204), response.text
    return response.headers["Stream-Next-Offset"]


def test_snapshot_then_bootstrap_of_a_top_level_stream(http: httpx.Client) -> None:
    url = _stream(http)
    middle = _append(http, url, {"n": 1}, {"n": 2})
    _append(http, url, {"n": 3})
    assert http.get(url + "/snapshot").status_code == NO_STREAM_404
    state = json.dumps([{"n": 1}, {"n": 2}]).encode()
    published = http.put(
        f"{url}/snapshot/{middle}", content=state, headers={"Content-Type": JSON_TYPE}
    )
    assert published.status_code == 204, published.text
    assert http.get(url, params={"offset": "-1"}).status_code == 410
    assert http.head(url).headers["Stream-Snapshot-Offset"] == middle

    latest = http.get(url + "/snapshot", follow_redirects=False)
    assert latest.status_code == 307
    assert latest.headers["Location"].endswith(f"{url}/snapshot/{middle}")
    blob = http.get(f"{url}/snapshot/{middle}")
    assert (blob.status_code, blob.content) == (200, state)

    booted = http.get(url + "/bootstrap")
    assert booted.status_code == 200
    assert booted.headers["Stream-Snapshot-Offset"] == middle
    assert parse_bootstrap(booted) == [
        Part(JSON_TYPE, state),
        Part(JSON_TYPE, b'{"n":3}'),
    ]
    # The latest snapshot is what a bootstrap needs: it stays.
    assert http.delete(f"{url}/snapshot/{middle}").status_code == 409


def test_a_stream_of_several_segments_keeps_its_reads(http: httpx.Client) -> None:
    # Only one-segment streams have their extensions below /v1/stream.
    url = f"/v1/stream/top-{uuid.uuid4().hex[:12]}/room"
    assert http.put(url, headers={"Content-Type": JSON_TYPE}).status_code == 201
    _append(http, url, {"n": 1})
    read = http.get(url, params={"offset": "-1"})
    assert (read.status_code, read.json()) == (200, [{"n": 1}])
    assert http.get(url + "/bootstrap", params={"offset": "-1"}).status_code == 404


def test_a_missing_top_level_stream_is_404(http: httpx.Client) -> None:
    missing = f"/v1/stream/none-{uuid.uuid4().hex[:12]}"
    assert http.get(missing + "/bootstrap").status_code == 404
    assert http.put(missing + "/snapshot/00000000000000000000", content=b"{}").status_code == 404
