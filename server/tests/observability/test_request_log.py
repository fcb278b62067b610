"""One log line per request, text or JSON, and never a credential in it.

Off by default (Envoy's access log is the stack's); these servers turn it on.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import httpx
import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import LoggedServer

SECRET = "eyJhbGciOi.secret-token.signature"


@pytest.fixture
def start_logging(start_server: Callable[..., LoggedServer]) -> Callable[..., LoggedServer]:
    """``start_server`` with the request log switched on."""

    def start(**env: str) -> LoggedServer:
        return start_server(DS_LOG__REQUESTS="true", **env)

    return start


def test_no_request_is_logged_by_default(start_server: Callable[..., LoggedServer]) -> None:
    server = start_server()
    stream = f"{server.url}/v1/stream/unlogged"
    assert httpx.put(stream, headers={"Content-Type": "text/plain"}).status_code == 201
    assert (
        httpx.post(stream, content=b"x", headers={"Content-Type": "text/plain"}).status_code == 204
    )
    server.process.stop()
    assert "ds_server.access" not in server.log()
    # The server did log at info: only the request lines are off.
    assert "INFO" in server.log()


def test_json_lines_carry_method_path_status_duration_and_request_id(
    start_logging: Callable[..., LoggedServer],
) -> None:
    server = start_logging(DS_LOG__FORMAT="json")
    stream = f"{server.url}/v1/stream/logged/room"
    headers = {"Content-Type": "text/plain", "x-request-id": "req-from-envoy-1"}
    assert httpx.put(stream, headers=headers).status_code == 201
    assert httpx.get(f"{stream}/nothing", params={"offset": "-1"}).status_code == 404
    server.wait_for_log(r'"status": 404')
    lines = [json.loads(line) for line in server.log().splitlines()]
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    requests = [line for line in lines if line["logger"] == "ds_server.access"]
    created = next(line for line in requests if line["request_id"] == "req-from-envoy-1")
    assert created["level"] == "info"
    assert (created["method"], created["path"], created["status"]) == (
        "PUT",
        "/v1/stream/logged/room",
        201,
    )
    assert created["duration_ms"] >= 0
    missing = next(line for line in requests if line["status"] == 404)
    # No x-request-id sent: one is made, so every line can be followed.
    assert len(missing["request_id"]) == 32


def test_no_token_is_ever_logged(start_logging: Callable[..., LoggedServer]) -> None:
    server = start_logging()  # text lines, the default
    stream = f"{server.url}/v1/stream/private/room"
    bearer = {"Authorization": f"Bearer {SECRET}", "Content-Type": "text/plain"}
    assert httpx.put(stream, headers=bearer).status_code == 201
    # The viewer's EventSource sends its token in the query.
    read = httpx.get(stream, params={"offset": "-1", "access_token": SECRET, "token": SECRET})
    assert read.status_code == 200
    line = server.wait_for_log(r"^INFO ds_server\.access GET /v1/stream/private/room 200 .*$")
    assert "?" not in line.group(0)
    assert SECRET not in server.log()
    assert "secret-token" not in server.log()


def test_a_control_character_in_a_path_cannot_forge_a_log_line(
    start_logging: Callable[..., LoggedServer],
) -> None:
    server = start_logging()
    forged = "INFO ds_server.access GET /forged 200"
    httpx.get(f"{server.url}/v1/stream/x%0A{forged.replace(' ', '%20')}")
    server.wait_for_log(r"ds_server\.access GET /v1/stream/x\\n")
    assert not any(line.startswith(forged) for line in server.log().splitlines())


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_every_line_is_written_in_order_when_the_server_is_stopped_with_sigterm(
    start_logging: Callable[..., LoggedServer], fmt: str
) -> None:
    server = start_logging(DS_LOG__FORMAT=fmt)
    stream = f"{server.url}/v1/stream/terminated"
    count = 300
    with httpx.Client(headers={"Content-Type": "text/plain"}) as client:
        assert client.put(stream, headers={"x-request-id": "create"}).status_code == 201
        for i in range(count):
            response = client.post(stream, content=b"x", headers={"x-request-id": f"seq-{i}"})
            assert response.status_code == 204
    # At once: the last lines are still waiting for their batch to be written.
    server.process.stop()
    ids = _request_ids(server.log(), fmt, "/v1/stream/terminated")
    assert ids == ["create", *(f"seq-{i}" for i in range(count))]


def test_a_burst_over_many_connections_logs_every_request_once(
    start_logging: Callable[..., LoggedServer],
) -> None:
    server = start_logging(DS_LOG__FORMAT="json")
    stream = f"{server.url}/v1/stream/burst"
    count, connections = 2000, 50

    async def burst() -> None:
        limits = httpx.Limits(max_connections=connections)
        async with httpx.AsyncClient(limits=limits) as client:
            created = await client.put(stream, headers={"Content-Type": "text/plain"})
            assert created.status_code == 201
            gate = asyncio.Semaphore(connections)

            async def post(i: int) -> None:
                async with gate:
                    response = await client.post(
                        stream,
                        content=b"x",
                        headers={"Content-Type": "text/plain", "x-request-id": f"burst-{i}"},
                    )
                    assert response.status_code == 204

            await asyncio.gather(*(post(i) for i in range(count)))

    asyncio.run(burst())
    server.process.stop()
    ids = _request_ids(server.log(), "json", "/v1/stream/burst")
    # The PUT, then every POST once (in the order they finished).
    assert len(ids) == count + 1
    assert sorted(ids[1:]) == sorted(f"burst-{i}" for i in range(count))


def _request_ids(log: str, fmt: str, path: str) -> list[str]:
    """The request ids of the lines logged for requests to ``path``, in the log's order."""
    if fmt == "json":
        return [
            line["request_id"]
            for line in map(json.loads, log.splitlines())
            if line["logger"] == "ds_server.access" and line["path"] == path
        ]
    prefix = "INFO ds_server.access "
    return [
        line.rsplit("id=", 1)[1]
        for line in log.splitlines()
        if line.startswith(prefix) and line.split()[3] == path
    ]
