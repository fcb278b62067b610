"""Live reads and big bodies through Envoy: no route timeout, no buffering.

The stack's ds-server closes SSE connections every second and answers
long-polls after one second, so a few seconds cover several cycles.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from ds_proxy.tokens import bucket_token
from gateway_stack import SSE_RECONNECT_SECS, GatewayStack, bearer, unique
from httpx_sse import connect_sse

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def bucket() -> str:
    return unique("live")


@pytest.fixture
def token(bucket: str) -> str:
    return bucket_token("streamer", read=(bucket,), write=(bucket,))


def _create(client: httpx.Client, path: str, token: str, content_type: str) -> None:
    response = client.put(path, headers={**bearer(token), "Content-Type": content_type})
    assert response.status_code == 201


def test_sse_delivers_live_appends_across_server_reconnects(
    stack: GatewayStack, client: httpx.Client, bucket: str, token: str
) -> None:
    path = f"/v1/stream/{bucket}/chat"
    _create(client, path, token, "application/json")
    total = 16
    stop = threading.Event()

    def produce() -> None:
        with httpx.Client(base_url=stack.url, timeout=10.0) as writer:
            for index in range(total):
                if stop.wait(0.3):
                    return
                response = writer.post(
                    path, headers={**bearer(token), **JSON}, content=json.dumps({"i": index})
                )
                assert response.status_code == 204

    producer = threading.Thread(target=produce, daemon=True)
    received: list[int] = []
    offset = "-1"
    reconnects = 0
    durations: list[float] = []
    deadline = time.monotonic() + 30
    producer.start()
    try:
        while len(received) < total and time.monotonic() < deadline:
            started = time.monotonic()
            params = {"offset": offset, "live": "sse"}
            with connect_sse(client, "GET", path, params=params, headers=bearer(token)) as source:
                assert source.response.status_code == 200
                for event in source.iter_sse():
                    if event.event == "data":
                        received.extend(item["i"] for item in json.loads(event.data))
                    elif event.event == "control":
                        offset = json.loads(event.data)["streamNextOffset"]
            # The server ended the response; resume from the last control offset.
            durations.append(time.monotonic() - started)
            reconnects += 1
    finally:
        stop.set()
        producer.join(timeout=10)
    assert received == list(range(total))
    assert reconnects >= 3
    # Each connection lasted about the server's interval: Envoy cut none of them short.
    assert all(d >= SSE_RECONNECT_SECS * 0.8 for d in durations[:-1]), durations


def test_long_poll_waits_and_wakes_through_the_gateway(
    stack: GatewayStack, client: httpx.Client, bucket: str, token: str
) -> None:
    path = f"/v1/stream/{bucket}/poll"
    _create(client, path, token, "text/plain")
    offset = client.head(path, headers=bearer(token)).headers["Stream-Next-Offset"]
    for cycle in range(3):
        # Nothing new: the server (not Envoy) ends the wait with 204.
        idle = client.get(
            path, params={"offset": offset, "live": "long-poll"}, headers=bearer(token)
        )
        assert idle.status_code == 204
        assert idle.headers["Stream-Next-Offset"] == offset
        # Data appended during the wait wakes the poll with 200.
        body = f"cycle-{cycle}"
        timer = threading.Timer(
            0.3,
            lambda body=body: httpx.post(
                stack.url + path,
                headers={**bearer(token), "Content-Type": "text/plain"},
                content=body.encode(),
            ),
        )
        timer.start()
        try:
            woken = client.get(
                path, params={"offset": offset, "live": "long-poll"}, headers=bearer(token)
            )
            # On a loaded machine the append can land after the 1 s wait ended
            # (204, offset unchanged); the next poll must then return it.
            if woken.status_code == 204:
                assert woken.headers["Stream-Next-Offset"] == offset
                timer.join()
                woken = client.get(
                    path, params={"offset": offset, "live": "long-poll"}, headers=bearer(token)
                )
        finally:
            timer.join()
        assert woken.status_code == 200
        assert woken.text == body
        offset = woken.headers["Stream-Next-Offset"]


def test_a_10_mib_append_passes(client: httpx.Client, bucket: str, token: str) -> None:
    path = f"/v1/stream/{bucket}/big"
    _create(client, path, token, "application/octet-stream")
    size = 10 * 1024 * 1024
    body = bytes(range(256)) * (size // 256)
    response = client.post(
        path, headers={**bearer(token), "Content-Type": "application/octet-stream"}, content=body
    )
    assert response.status_code == 204, response.text
    assert int(response.headers["Stream-Next-Offset"]) == size
    received = bytearray()
    offset = "-1"
    while len(received) < size:
        chunk = client.get(path, params={"offset": offset}, headers=bearer(token))
        assert chunk.status_code == 200
        received += chunk.content
        offset = chunk.headers["Stream-Next-Offset"]
    assert bytes(received) == body
