"""``/metrics`` on its own loopback listener, scraped from a running server."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
from ds_stack.ports import free_port
from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import LoggedServer

JSON = {"Content-Type": "application/json"}


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(url, timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def test_a_scrape_shows_requests_live_readers_and_stored_streams(
    start_server: Callable[..., LoggedServer],
) -> None:
    port = free_port()
    server = start_server(DS_METRICS__PORT=str(port))
    metrics = f"http://127.0.0.1:{port}/metrics"
    stream = f"{server.url}/v1/stream/chat/room"
    assert httpx.put(stream, headers=JSON).status_code == 201
    assert httpx.post(stream, headers=JSON, content=b'[{"a":1},{"b":2}]').status_code == 204
    with (
        httpx.Client(timeout=10) as client,
        client.stream("GET", stream, params={"offset": "now", "live": "sse"}) as sse,
    ):
        assert sse.status_code == 200
        during = scrape(metrics)
    assert during["ds_server_live_readers", (("kind", "sse"),)] == 1
    assert during["ds_server_requests_total", (("operation", "append"), ("status", "204"))] == 1
    assert during["ds_server_appended_messages_total", ()] == 2
    assert during["ds_server_streams", ()] == 1
    assert during["ds_server_stored_bytes", ()] == len(b'{"a":1}{"b":2}')
    # The SSE request ends on the server once it notices the client left.
    for _ in range(100):
        after = scrape(metrics)
        if after["ds_server_live_readers", (("kind", "sse"),)] == 0:
            break
    assert after["ds_server_live_readers", (("kind", "sse"),)] == 0
    assert after["ds_server_requests_total", (("operation", "read_sse"), ("status", "200"))] == 1


def test_the_listener_serves_metrics_only_and_the_app_has_no_metrics_route(
    start_server: Callable[..., LoggedServer],
) -> None:
    server = start_server()  # DS_METRICS__PORT=0: a free port, logged
    address = server.wait_for_log(r"metrics at (http://127\.0\.0\.1:\d+)/metrics").group(1)
    assert httpx.get(f"{address}/metrics").status_code == 200
    assert httpx.get(f"{address}/").status_code == 404
    assert httpx.post(f"{address}/metrics").status_code == 405
    assert httpx.get(f"{server.url}/metrics").status_code == 404


def test_metrics_off_means_no_listener(start_server: Callable[..., LoggedServer]) -> None:
    port = free_port()
    server = start_server(DS_METRICS__ENABLED="false", DS_METRICS__PORT=str(port))
    assert httpx.get(f"{server.url}/healthz").status_code == 200
    try:
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)
    except httpx.ConnectError:
        pass
    else:
        raise AssertionError("a /metrics listener answered with metrics off")
    assert "metrics at" not in server.log()
