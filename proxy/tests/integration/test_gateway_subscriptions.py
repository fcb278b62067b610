"""Subscription endpoints through the gateway.

Managing subscriptions needs a wildcard user token; the signing JWKS is
public, and ack/release present the subscription's own callback token,
which Envoy must pass through untouched (it is not a user JWT).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gateway_stack import ADMIN, GatewayStack, bearer, unique

if TYPE_CHECKING:
    import httpx

JSON = {"Content-Type": "application/json"}


def test_jwks_is_public(client: httpx.Client) -> None:
    response = client.get("/v1/stream/__ds/jwks.json")
    assert response.status_code == 200
    assert "application/jwk-set+json" in response.headers["content-type"]


def test_managing_subscriptions_needs_a_token(client: httpx.Client) -> None:
    response = client.put(
        f"/v1/stream/__ds/subscriptions/{unique('sub')}",
        json={"type": "pull-wake", "pattern": "x/*", "wake_stream": "w/x"},
    )
    assert response.status_code == 401


def test_pull_wake_claim_and_ack_through_the_gateway(
    stack: GatewayStack, client: httpx.Client
) -> None:
    bucket = unique("pw")
    wake_stream = f"{bucket}/wake"
    sub = unique("sub")
    admin = {**bearer(ADMIN), **JSON}
    assert client.put(f"/v1/stream/{wake_stream}", headers=admin, content=b"[]").status_code == 201
    created = client.put(
        f"/v1/stream/__ds/subscriptions/{sub}",
        headers=admin,
        json={"type": "pull-wake", "pattern": f"{bucket}/*", "wake_stream": wake_stream},
    )
    assert created.status_code == 201
    path = f"{bucket}/events"
    assert client.put(f"/v1/stream/{path}", headers=admin, content=b'{"n":1}').status_code == 201

    deadline = time.monotonic() + 5
    claimed = None
    while time.monotonic() < deadline:
        response = client.post(
            f"/v1/stream/__ds/subscriptions/{sub}/claim", headers=admin, json={"worker": "w1"}
        )
        if response.status_code == 200:
            claimed = response.json()
            break
        time.sleep(0.1)
    assert claimed is not None, "no wake to claim"

    tail = next(s["tail_offset"] for s in claimed["streams"] if s["path"] == path)
    ack = client.post(
        f"/v1/stream/__ds/subscriptions/{sub}/ack",
        headers={**bearer(claimed["token"]), **JSON},
        json={
            "wake_id": claimed["wake_id"],
            "generation": claimed["generation"],
            "acks": [{"stream": path, "offset": tail}],
            "done": True,
        },
    )
    assert ack.status_code == 200
    assert ack.json() == {"ok": True, "next_wake": False}
    assert client.delete(f"/v1/stream/__ds/subscriptions/{sub}", headers=admin).status_code == 204
