"""Subscriptions survive SIGKILL of a real ds-server, on the durable backends.

A webhook and a pull-wake subscription each get a wake acknowledged and a
second one left outstanding; the server is killed and started again on the
same data directory and port. After the restart: both are listed with their
acks, the unacknowledged work wakes again under a newer generation, tokens
from before are refused (FENCED), and new ones are accepted.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from support.server_process import ServerProcess
from support.webhook_receiver import WebhookReceiver

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

JSON = {"content-type": "application/json"}
LEASE_MS = 60_000  # no lease expires during the test: every wake is one we made
KID_RE = re.compile(r"kid=([^,]+)")


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    endpoint = WebhookReceiver()
    yield endpoint
    endpoint.close()


def _sub(client: httpx.Client, sub_id: str, suffix: str = "") -> str:
    return f"/__ds/subscriptions/{sub_id}{suffix}"


def _settle(
    client: httpx.Client, sub_id: str, verb: str, token: str, wake: dict[str, Any], offset: str
) -> httpx.Response:
    body = {
        "wake_id": wake["wake_id"],
        "generation": wake["generation"],
        "acks": [{"stream": "events/a", "offset": offset}],
        "done": True,
    }
    return client.post(
        _sub(client, sub_id, f"/{verb}"),
        content=json.dumps(body),
        headers={**JSON, "authorization": f"Bearer {token}"},
    )


def _claim(client: httpx.Client) -> dict[str, Any]:
    response = client.post(_sub(client, "pull", "/claim"), content=b'{"worker":"w"}', headers=JSON)
    assert response.status_code == 200, response.text
    claimed: dict[str, Any] = response.json()
    return claimed


def _tail(wake: dict[str, Any]) -> str:
    (entry,) = [item for item in wake["streams"] if item["path"] == "events/a"]
    return str(entry["tail_offset"])


def _acked(client: httpx.Client, sub_id: str) -> dict[str, str]:
    view = client.get(_sub(client, sub_id)).json()
    return {item["path"]: item["acked_offset"] for item in view["streams"]}


def _wake_generations(client: httpx.Client) -> list[int]:
    events = client.get("/wakes/w", params={"offset": "-1"}).json()
    return [event["generation"] for event in events if event["subscription_id"] == "pull"]


@pytest.mark.parametrize("backend", ["file-durable", "sqlite"])
def test_subscriptions_survive_sigkill(
    backend: str, tmp_path: Path, receiver: WebhookReceiver
) -> None:
    env = {"DS_STORAGE__MODE": backend, "DS_STORAGE__DATA_DIR": str(tmp_path)}
    server = ServerProcess(env=env)
    server.start()
    clients: list[httpx.Client] = []
    try:
        client = httpx.Client(base_url=f"{server.url}/v1/stream", timeout=10)
        clients.append(client)
        for path in ("events/a", "wakes/w"):
            assert client.put(f"/{path}", headers=JSON).status_code == 201
        hook = {"type": "webhook", "pattern": "events/*", "webhook": {"url": receiver.url}}
        pull = {"type": "pull-wake", "streams": ["events/a"], "wake_stream": "wakes/w"}
        for sub_id, body in (("hook", hook), ("pull", pull)):
            body["lease_ttl_ms"] = LEASE_MS
            created = client.put(_sub(client, sub_id), content=json.dumps(body), headers=JSON)
            assert created.status_code == 201, created.text

        # First wake of each: acknowledged.
        assert client.post("/events/a", content=b'{"n":1}', headers=JSON).status_code == 204
        first = receiver.wait_for(1).body
        tail1 = _tail(first)
        assert _settle(client, "hook", "callback", first["callback_token"], first, tail1).is_success
        claimed = _claim(client)
        assert _settle(client, "pull", "ack", claimed["token"], claimed, tail1).is_success

        # Second wake of each: outstanding when the server dies.
        assert client.post("/events/a", content=b'{"n":2}', headers=JSON).status_code == 204
        second = receiver.wait_for(2)
        stale_hook = second.body
        stale_pull = _claim(client)
        views = {sub_id: client.get(_sub(client, sub_id)).json() for sub_id in ("hook", "pull")}
        server.kill()

        server = ServerProcess(env=env, port=server.port)
        server.start()
        client = httpx.Client(base_url=f"{server.url}/v1/stream", timeout=10)
        clients.append(client)
        for sub_id, body in (("hook", hook), ("pull", pull)):
            assert client.get(_sub(client, sub_id)).json() == views[sub_id]
            assert _acked(client, sub_id) == {"events/a": tail1}
            # The same PUT again (as ds-sync does on reconnecting) confirms it.
            again = client.put(_sub(client, sub_id), content=json.dumps(body), headers=JSON)
            assert again.status_code == 200, again.text

        # The outstanding work wakes again, newer than anything handed out before,
        # signed with the same key.
        third = receiver.wait_for(3)
        assert third.body["generation"] > stale_hook["generation"]
        assert KID_RE.findall(third.signature or "") == KID_RE.findall(second.signature or "")
        assert max(_wake_generations(client)) > stale_pull["generation"]

        # Tokens from before the kill are refused; the new wakes' are accepted.
        tail2 = _tail(third.body)
        for sub_id, verb, token, wake in (
            ("hook", "callback", stale_hook["callback_token"], stale_hook),
            ("pull", "ack", stale_pull["token"], stale_pull),
        ):
            refused = _settle(client, sub_id, verb, token, wake, tail2)
            assert refused.status_code == 409
            assert refused.json()["error"]["code"] == "FENCED"
        fresh = _claim(client)
        assert fresh["generation"] > stale_pull["generation"]
        assert _settle(client, "pull", "ack", fresh["token"], fresh, tail2).is_success
        body = third.body
        assert _settle(client, "hook", "callback", body["callback_token"], body, tail2).is_success
        assert _acked(client, "hook") == _acked(client, "pull") == {"events/a": tail2}
    finally:
        for opened in clients:
            opened.close()
        server.stop()
