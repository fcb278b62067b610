"""The metrics the app records, read from the process's registry (in-process app)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_server.metrics import REGISTRY
from ds_server.settings import MetricsSection, StorageSection

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from conftest import Api

JSON = "application/json"


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_requests_are_counted_by_operation_and_status(api: Api) -> None:
    created = value("ds_server_requests_total", operation="create", status="201")
    missing = value("ds_server_requests_total", operation="head", status="404")
    timed = value("ds_server_request_duration_seconds_count", operation="create")
    assert api.put("counted", Content_Type=JSON).status_code == 201
    assert api.head("absent").status_code == 404
    assert value("ds_server_requests_total", operation="create", status="201") == created + 1
    assert value("ds_server_requests_total", operation="head", status="404") == missing + 1
    assert value("ds_server_request_duration_seconds_count", operation="create") == timed + 1


def test_paths_outside_every_surface_count_as_other(api: Api) -> None:
    before = value("ds_server_requests_total", operation="other", status="404")
    assert api.client.get("/metrics").status_code == 404  # not a route: its own listener
    assert api.client.get("/no/such/thing").status_code == 404
    assert value("ds_server_requests_total", operation="other", status="404") == before + 2


def test_live_reads_are_timed_by_mode_and_leave_no_reader_open(api: Api) -> None:
    assert api.put("poll", Content_Type=JSON).status_code == 201
    polls = value("ds_server_request_duration_seconds_count", operation="read_long_poll")
    waiting = value("ds_server_live_readers", kind="long-poll")
    response = api.get("poll", "offset=-1&live=long-poll")
    assert response.status_code == 204  # waited out its (test) timeout
    assert value("ds_server_request_duration_seconds_count", operation="read_long_poll") == (
        polls + 1
    )
    # The wait is in the latency: at least the 0.2 s timeout of the test settings.
    assert (
        value("ds_server_request_duration_seconds_bucket", operation="read_long_poll", le="0.1")
        <= polls
    )
    assert value("ds_server_live_readers", kind="long-poll") == waiting


def test_appends_count_messages_and_payload_bytes(api: Api) -> None:
    assert api.put("appends", Content_Type=JSON).status_code == 201
    messages = value("ds_server_appended_messages_total")
    size = value("ds_server_appended_bytes_total")
    assert api.post("appends", b'[{"a":1}, {"bb":22}]', Content_Type=JSON).status_code == 204
    assert api.post("appends", b'{"c":3}', Content_Type=JSON).status_code == 204
    assert value("ds_server_appended_messages_total") == messages + 3
    assert value("ds_server_appended_bytes_total") == size + len(b'{"a":1}{"bb":22}{"c":3}')


def test_a_refused_append_counts_no_message(api: Api) -> None:
    assert api.put("refused", Content_Type=JSON).status_code == 201
    messages = value("ds_server_appended_messages_total")
    assert api.post("refused", b"[1,", Content_Type=JSON).status_code == 400
    assert value("ds_server_appended_messages_total") == messages


def test_streams_and_bytes_stored_are_counted_when_scraped(
    make_api: Callable[..., Api],
) -> None:
    api = make_api()  # the app started last is the one reported
    assert value("ds_server_streams") == 0
    assert api.put("one", b"abc", Content_Type="text/plain").status_code == 201
    assert api.put("two", b"[1,2]", Content_Type=JSON).status_code == 201
    assert api.post("one", b"defg", Content_Type="text/plain").status_code == 204
    assert value("ds_server_streams") == 2
    assert value("ds_server_stored_bytes") == len(b"abcdefg") + len(b"12")
    assert api.delete("two").status_code == 204
    assert value("ds_server_streams") == 1


def test_retained_bytes_are_summed_per_stream_family(make_api: Callable[..., Api]) -> None:
    # A dedicated app and store: the streams are named as a stack names its own.
    api = make_api(metrics=MetricsSection(stream_families=["sessions/", "pg-"]))
    streams = [
        ("sessions/a", b"[1]", JSON),
        ("sessions/b", b"[22,333]", JSON),
        ("pg-items", b"[4444]", JSON),
        ("elsewhere", b"12345", "text/plain"),
    ]
    for path, body, content_type in streams:
        created = api.client.put(
            f"/v1/stream/{path}", content=body, headers={"Content-Type": content_type}
        )
        assert created.status_code == 201
    assert value("ds_server_family_streams", family="sessions/") == 2
    assert value("ds_server_family_retained_bytes", family="sessions/") == len(b"122333")
    assert value("ds_server_family_max_retained_bytes", family="sessions/") == len(b"22333")
    assert value("ds_server_family_retained_bytes", family="pg-") == len(b"4444")
    assert value("ds_server_family_retained_bytes", family="other") == len(b"12345")
    # A snapshot: what it replaces is no longer retained; its own size is counted apart.
    published = api.client.put("/v1/stream/pg-items/snapshot/00000000000000000004", content=b"[]")
    assert published.status_code == 204, published.text
    assert value("ds_server_family_retained_bytes", family="pg-") == 0
    assert value("ds_server_family_snapshot_bytes", family="pg-") == len(b"[]")
    assert value("ds_server_retained_bytes_limit") == 64 * 1024


def test_with_metrics_off_requests_are_not_recorded(make_api: Callable[..., Api]) -> None:
    api = make_api(metrics=MetricsSection(enabled=False))
    before = value("ds_server_requests_total", operation="create", status="201")
    assert api.put("unseen", Content_Type=JSON).status_code == 201
    assert value("ds_server_requests_total", operation="create", status="201") == before


@pytest.mark.parametrize("mode", ["sqlite", "file-durable"])
def test_durable_backends_report_their_commits(
    make_api: Callable[..., Api], tmp_path: Path, mode: str
) -> None:
    api = make_api(storage=StorageSection(mode=mode, data_dir=tmp_path))
    assert api.put("durable", Content_Type=JSON).status_code == 201
    commits = value("ds_server_store_commit_duration_seconds_count")
    writes = value("ds_server_store_commit_writes_sum")
    for n in range(3):
        assert api.post("durable", b'{"n":%d}' % n, Content_Type=JSON).status_code == 204
    # One test client sends one request at a time: each append commits alone.
    assert value("ds_server_store_commit_duration_seconds_count") >= commits + 3
    assert value("ds_server_store_commit_writes_sum") >= writes + 3
