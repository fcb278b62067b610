"""Subscriptions outlive the replica that runs them.

Two replicas behind Envoy; one leads the subscriptions. A pull-wake
subscription is made through the gateway, the leader is SIGKILLed, and the
other replica takes the lead: the subscription is still there, a new
stream matching it wakes it (the wake is announced on its wake stream),
and a worker claims and acks the wake, all through the gateway.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TypeVar

import httpx
import psycopg
import pytest
from ds_settings.defaults import STORE_SCHEMA
from ds_stack.cluster import Cluster

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

T = TypeVar("T")
JSON = {"Content-Type": "application/json"}
SUB = "/v1/stream/__ds/subscriptions/failover"


@pytest.fixture
def cluster(postgres_db: str) -> Iterator[Cluster]:
    with Cluster(replicas=2, postgres_url=postgres_db) as running:
        yield running


def leader_url(cluster: Cluster) -> str | None:
    with psycopg.connect(cluster.postgres_url) as conn:
        row = conn.execute(f"SELECT url FROM {STORE_SCHEMA}.subscription_leader").fetchone()
    return str(row[0]) if row else None


def eventually(probe: Callable[[], T | None], what: str, seconds: float = 20.0) -> T:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_new_leader_runs_the_subscriptions(cluster: Cluster) -> None:
    http = httpx.Client(
        base_url=cluster.url, headers={"Authorization": f"Bearer {cluster.token}"}, timeout=10
    )
    with http:
        assert http.put("/v1/stream/wake/pool", headers=JSON, content=b"[]").status_code == 201
        created = http.put(
            SUB,
            headers=JSON,
            json={"type": "pull-wake", "pattern": "events/*", "wake_stream": "wake/pool"},
        )
        assert created.status_code == 201, created.text

        first = leader_url(cluster)
        assert first is not None
        cluster.kill([cluster.replica_url(i) for i in range(2)].index(first))

        def new_leader() -> str | None:
            url = leader_url(cluster)
            return url if url != first else None

        eventually(new_leader, "a new leader")

        def subscription() -> httpx.Response | None:
            # Through the gateway, whichever replica Envoy picks: served by the new leader.
            response = http.get(SUB)
            return response if response.status_code == 200 else None

        assert eventually(subscription, "the subscription").json()["type"] == "pull-wake"
        made = http.put("/v1/stream/events/a", headers=JSON, content=b'{"event":"created"}')
        assert made.status_code == 201

        def announced() -> bool:
            events = http.get("/v1/stream/wake/pool", params={"offset": "-1"}).json()
            return any(event.get("subscription_id") == "failover" for event in events)

        eventually(announced, "the wake on the wake stream")
        claim = http.post(f"{SUB}/claim", json={"worker": "w1"})
        assert claim.status_code == 200, claim.text
        claimed = claim.json()
        tail = next(s["tail_offset"] for s in claimed["streams"] if s["path"] == "events/a")
        ack = httpx.post(
            f"{cluster.url}{SUB}/ack",
            headers={"Authorization": f"Bearer {claimed['token']}"},
            json={
                "wake_id": claimed["wake_id"],
                "generation": claimed["generation"],
                "acks": [{"stream": "events/a", "offset": tail}],
                "done": True,
            },
            timeout=10,
        )
        assert ack.status_code == 200, ack.text
