"""The reserved ``__ds`` subscription API, in process, with a real webhook receiver.

The app runs on the test's event loop (Litestar's AsyncTestClient) so its
background delivery and lease tasks run too; webhooks go over real TCP to a
small threaded receiver on a free loopback port.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from ds_server.app import create_app
from ds_server.protocol.offsets import format_offset
from litestar.testing import AsyncTestClient

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator

    from ds_server.settings import Settings

BASE = "http://testserver.local"
ROOT = f"{BASE}/v1/stream"
JSON_HEADERS = {"content-type": "application/json"}
SIGNATURE_RE = re.compile(r"^t=(\d+),kid=([^,]+),ed25519=([A-Za-z0-9_-]+)$")

Client = AsyncTestClient[Any]


@dataclass(frozen=True)
class Delivery:
    body: dict[str, Any]
    raw: bytes
    signature: str | None


class Receiver:
    """A webhook endpoint answering from a script of (status, body) replies."""

    def __init__(self, replies: list[tuple[int, bytes]] | None = None) -> None:
        self.deliveries: list[Delivery] = []
        self._replies = list(replies or [])
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["content-length"]))
                status, reply = receiver._replies.pop(0) if receiver._replies else (200, b"{}")
                receiver.deliveries.append(
                    Delivery(json.loads(raw), raw, self.headers.get("webhook-signature"))
                )
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/webhook"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    async def wait_for(self, count: int, within: float = 5.0) -> Delivery:
        """The ``count``-th delivery, once it has arrived."""
        deadline = time.monotonic() + within
        while len(self.deliveries) < count:
            assert time.monotonic() < deadline, f"only {len(self.deliveries)} deliveries"
            await asyncio.sleep(0.01)
        return self.deliveries[count - 1]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture
async def client(settings_factory: Callable[..., Settings]) -> AsyncIterator[Client]:
    app = create_app(settings_factory())
    async with AsyncTestClient(app=app, base_url=BASE) as test_client:
        yield test_client


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


@pytest.fixture
def done_receiver() -> Iterator[Receiver]:
    endpoint = Receiver([(200, b'{"done":true}')] * 10)
    yield endpoint
    endpoint.close()


def sub_url(sub_id: str, suffix: str = "") -> str:
    return f"/v1/stream/__ds/subscriptions/{sub_id}{suffix}"


async def put_sub(client: Client, sub_id: str, **body: object) -> Any:
    return await client.put(sub_url(sub_id), content=json.dumps(body), headers=JSON_HEADERS)


async def write(client: Client, path: str, event: str, *, create: bool = False) -> None:
    send = client.put if create else client.post
    response = await send(
        f"/v1/stream/{path}", content=json.dumps({"event": event}), headers=JSON_HEADERS
    )
    assert response.status_code in (201, 204)


async def wait_until(predicate: Any, within: float = 3.0) -> None:
    deadline = time.monotonic() + within
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_signature(delivery: Delivery, jwks: dict[str, Any]) -> None:
    assert delivery.signature is not None
    match = SIGNATURE_RE.fullmatch(delivery.signature)
    assert match is not None
    timestamp, kid, signature = match.groups()
    assert abs(time.time() - int(timestamp)) <= 300
    (jwk,) = [key for key in jwks["keys"] if key["kid"] == kid]
    public = Ed25519PublicKey.from_public_bytes(_b64url_decode(jwk["x"]))
    public.verify(_b64url_decode(signature), f"{timestamp}.".encode() + delivery.raw)


def stream_entry(delivery: Delivery, path: str) -> dict[str, Any]:
    entries: list[dict[str, Any]] = delivery.body["streams"]
    (entry,) = [item for item in entries if item["path"] == path]
    return entry


async def test_create_confirm_get_and_jwks(client: Client, receiver: Receiver) -> None:
    body = {
        "type": "webhook",
        "pattern": "events/*",
        "webhook": {"url": receiver.url},
        "lease_ttl_ms": 1000,
        "description": "test subscription",
    }
    created = await put_sub(client, "sub-1", **body)
    assert created.status_code == 201
    assert created.headers["content-type"].startswith("application/json")
    view = created.json()
    assert "webhook_secret" not in view
    assert view["webhook"]["url"] == receiver.url
    signing = view["webhook"]["signing"]
    assert signing["alg"] == "ed25519"
    assert signing["kid"].startswith("ds_")
    assert signing["jwks_url"] == f"{ROOT}/__ds/jwks.json"
    assert (view["status"], view["lease_ttl_ms"], view["description"]) == (
        "active",
        1000,
        body["description"],
    )

    jwks = await client.get("/v1/stream/__ds/jwks.json")
    assert jwks.status_code == 200
    assert "application/jwk-set+json" in jwks.headers["content-type"]
    assert any(
        key["kid"] == signing["kid"] and key["kty"] == "OKP" and key["alg"] == "EdDSA"
        for key in jwks.json()["keys"]
    )

    confirmed = await put_sub(client, "sub-1", **body)
    assert confirmed.status_code == 200
    assert "webhook_secret" not in confirmed.json()

    conflict = await put_sub(client, "sub-1", **{**body, "lease_ttl_ms": 2000})
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "SUBSCRIPTION_ALREADY_EXISTS"

    got = await client.get(sub_url("sub-1"))
    assert got.status_code == 200
    assert (got.json()["id"], got.json()["type"]) == ("sub-1", "webhook")
    assert got.json()["webhook"]["url"] == receiver.url

    assert (await client.delete(sub_url("sub-1"))).status_code == 204
    assert (await client.get(sub_url("sub-1"))).json()["error"]["code"] == "SUBSCRIPTION_NOT_FOUND"
    assert (await client.delete(sub_url("sub-1"))).status_code == 204


async def test_urls_follow_forwarded_headers(client: Client, receiver: Receiver) -> None:
    headers = {**JSON_HEADERS, "x-forwarded-proto": "https", "x-forwarded-host": "streams.example"}
    body = {"type": "webhook", "pattern": "e/*", "webhook": {"url": receiver.url}}
    response = await client.put(sub_url("fwd"), content=json.dumps(body), headers=headers)
    signing = response.json()["webhook"]["signing"]
    assert signing["jwks_url"] == "https://streams.example/v1/stream/__ds/jwks.json"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (
            {"type": "webhook", "pattern": "e/*", "webhook": {"url": "http://10.0.0.1/hook"}},
            400,
            "WEBHOOK_URL_REJECTED",
        ),
        ({"type": "webhook", "pattern": "e/*"}, 400, "INVALID_REQUEST"),
        (
            {
                "type": "webhook",
                "pattern": "e/*",
                "webhook": {"url": "http://127.0.0.1/h"},
                "lease_ttl_ms": 5,
            },
            400,
            "INVALID_REQUEST",
        ),
        (
            {"type": "pull-wake", "pattern": "e/*", "wake_stream": "missing/wake"},
            409,
            "WAKE_STREAM_INVALID",
        ),
    ],
)
async def test_bad_subscriptions(
    client: Client, body: dict[str, Any], status: int, code: str
) -> None:
    response = await put_sub(client, "bad", **body)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert (await client.get(sub_url("bad"))).status_code == 404


async def test_malformed_requests(client: Client) -> None:
    invalid_json = await client.put(sub_url("x"), content=b"{", headers=JSON_HEADERS)
    assert invalid_json.json()["error"]["code"] == "INVALID_REQUEST"
    no_type = await client.put(sub_url("x"), content=b"{}", headers={"content-type": "text/plain"})
    assert no_type.status_code == 415
    bad_id = await put_sub(client, "bad%20id", type="webhook", pattern="e/*")
    assert bad_id.status_code == 400


async def test_reserved_segment_never_reaches_streams(client: Client) -> None:
    for method, path in [
        ("GET", "/v1/stream/__ds/nothing-here"),
        ("PUT", "/v1/stream/__ds"),
        ("PUT", "/v1/stream/app/__ds/subscriptions/x"),
        ("POST", "/v1/stream/app%2F__ds"),
    ]:
        response = await client.request(method, path, content=b"[]", headers=JSON_HEADERS)
        assert response.status_code == 404, (method, path)
        assert response.json()["error"]["code"] == "SUBSCRIPTION_NOT_FOUND"
    assert (await client.head("/v1/stream/app/__ds/subscriptions/x")).status_code == 404
    assert (await client.post(sub_url("x"))).status_code == 405


async def test_sync_done_acks_the_snapshot(client: Client, done_receiver: Receiver) -> None:
    await put_sub(
        client,
        "sync",
        type="webhook",
        pattern="events/*",
        webhook={"url": done_receiver.url},
        lease_ttl_ms=1000,
    )
    jwks = (await client.get("/v1/stream/__ds/jwks.json")).json()
    await write(client, "events/sync-1", "created", create=True)

    delivery = await done_receiver.wait_for(1)
    verify_signature(delivery, jwks)
    assert delivery.body["subscription_id"] == "sync"
    assert delivery.body["callback_url"] == f"{ROOT}/__ds/subscriptions/sync/callback"
    assert delivery.body["generation"] == 1
    entry = stream_entry(delivery, "events/sync-1")
    assert (entry["has_pending"], entry["acked_offset"], entry["link_type"]) == (True, "-1", "glob")

    async def acked() -> bool:
        streams = (await client.get(sub_url("sync"))).json()["streams"]
        return {
            "path": "events/sync-1",
            "link_type": "glob",
            "acked_offset": entry["tail_offset"],
        } in streams

    await wait_until(acked)
    # Nothing new: no second wake.
    await asyncio.sleep(0.2)
    assert len(done_receiver.deliveries) == 1


async def test_callback_acks_then_fences(client: Client, receiver: Receiver) -> None:
    await put_sub(
        client,
        "cb",
        type="webhook",
        pattern="events/*",
        webhook={"url": receiver.url},
        lease_ttl_ms=1000,
    )
    await write(client, "events/cb-1", "created", create=True)
    delivery = await receiver.wait_for(1)
    body = delivery.body
    tail = stream_entry(delivery, "events/cb-1")["tail_offset"]
    ack = {
        "wake_id": body["wake_id"],
        "generation": body["generation"],
        "acks": [{"stream": "events/cb-1", "offset": tail}],
        "done": True,
    }
    auth = {**JSON_HEADERS, "authorization": f"Bearer {body['callback_token']}"}
    callback = body["callback_url"].removeprefix(BASE)

    first = await client.post(callback, content=json.dumps(ack), headers=auth)
    assert first.status_code == 200
    assert first.json() == {"ok": True, "next_wake": False}

    stale = await client.post(callback, content=json.dumps(ack), headers=auth)
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "FENCED"

    no_token = await client.post(callback, content=json.dumps(ack), headers=JSON_HEADERS)
    assert (no_token.status_code, no_token.json()["error"]["code"]) == (401, "TOKEN_INVALID")
    forged = {**JSON_HEADERS, "authorization": "Bearer 1.9999999999.0123456789abcdef." + "0" * 64}
    assert (await client.post(callback, content=json.dumps(ack), headers=forged)).status_code == 401
    streams = (await client.get(sub_url("cb"))).json()["streams"]
    assert {"path": "events/cb-1", "link_type": "glob", "acked_offset": tail} in streams


async def test_bad_ack_changes_nothing(client: Client, receiver: Receiver) -> None:
    await put_sub(
        client, "badack", type="webhook", pattern="events/*", webhook={"url": receiver.url}
    )
    await write(client, "events/ba", "created", create=True)
    body = (await receiver.wait_for(1)).body
    auth = {**JSON_HEADERS, "authorization": f"Bearer {body['callback_token']}"}
    ack = {
        "wake_id": body["wake_id"],
        "generation": body["generation"],
        "acks": [{"stream": "events/ba", "offset": format_offset(10**6)}],
    }
    response = await client.post(
        sub_url("badack", "/callback"), content=json.dumps(ack), headers=auth
    )
    assert (response.status_code, response.json()["error"]["code"]) == (409, "INVALID_OFFSET")
    streams = (await client.get(sub_url("badack"))).json()["streams"]
    assert streams == [{"path": "events/ba", "link_type": "glob", "acked_offset": "-1"}]


async def test_lease_expiry_rewakes_and_fences_the_old_wake(
    client: Client, receiver: Receiver
) -> None:
    await put_sub(
        client,
        "lease",
        type="webhook",
        pattern="events/*",
        webhook={"url": receiver.url},
        lease_ttl_ms=1000,
    )
    await write(client, "events/lease-1", "created", create=True)
    first = (await receiver.wait_for(1)).body
    second = (await receiver.wait_for(2, within=4.0)).body
    assert second["generation"] == first["generation"] + 1
    assert second["wake_id"] != first["wake_id"]
    late = {"wake_id": first["wake_id"], "generation": first["generation"], "done": True}
    auth = {**JSON_HEADERS, "authorization": f"Bearer {first['callback_token']}"}
    response = await client.post(
        first["callback_url"].removeprefix(BASE), content=json.dumps(late), headers=auth
    )
    assert response.json()["error"]["code"] == "FENCED"
    await client.delete(sub_url("lease"))


async def test_failed_delivery_is_retried(client: Client) -> None:
    flaky = Receiver([(500, b"oops"), (200, b'{"done":true}')])
    try:
        await put_sub(
            client, "retry", type="webhook", pattern="events/*", webhook={"url": flaky.url}
        )
        await write(client, "events/r", "created", create=True)
        await flaky.wait_for(1)
        await asyncio.sleep(0.05)
        assert (await client.get(sub_url("retry"))).json()["status"] == "failed"
        retried = await flaky.wait_for(2, within=3.0)
        assert retried.body["wake_id"] == flaky.deliveries[0].body["wake_id"]

        async def recovered() -> bool:
            return bool((await client.get(sub_url("retry"))).json()["status"] == "active")

        await wait_until(recovered)
    finally:
        flaky.close()


async def test_explicit_streams_add_and_remove(client: Client, receiver: Receiver) -> None:
    created = await put_sub(
        client, "ex", type="webhook", streams=["manual/a"], webhook={"url": receiver.url}
    )
    assert created.status_code == 201
    added = await client.post(
        sub_url("ex", "/streams"),
        content=json.dumps({"streams": ["manual/b"]}),
        headers=JSON_HEADERS,
    )
    assert added.status_code == 204
    streams = (await client.get(sub_url("ex"))).json()["streams"]
    assert {
        "path": "manual/b",
        "link_type": "explicit",
        "acked_offset": format_offset(0),
    } in streams

    assert (await client.delete(sub_url("ex", "/streams/manual%2Fb"))).status_code == 204
    assert (await client.delete(sub_url("ex", "/streams/never%2Flinked"))).status_code == 204
    streams = (await client.get(sub_url("ex"))).json()["streams"]
    assert streams == [
        {"path": "manual/a", "link_type": "explicit", "acked_offset": format_offset(0)}
    ]
    empty = await client.post(
        sub_url("ex", "/streams"), content=b'{"streams":[]}', headers=JSON_HEADERS
    )
    assert empty.status_code == 400
    missing = await client.post(
        sub_url("nope", "/streams"), content=b'{"streams":["a"]}', headers=JSON_HEADERS
    )
    assert missing.status_code == 404


async def test_existing_data_is_not_pending_for_a_new_pattern(
    client: Client, receiver: Receiver
) -> None:
    await write(client, "events/old", "before", create=True)
    await put_sub(client, "late", type="webhook", pattern="events/*", webhook={"url": receiver.url})
    streams = (await client.get(sub_url("late"))).json()["streams"]
    (entry,) = streams
    assert entry["path"] == "events/old"
    assert entry["acked_offset"] != "-1"
    await asyncio.sleep(0.1)
    assert receiver.deliveries == []
    await write(client, "events/old", "after")
    delivery = await receiver.wait_for(1)
    assert stream_entry(delivery, "events/old")["acked_offset"] == entry["acked_offset"]


async def test_deleted_stream_leaves_glob_links(client: Client, done_receiver: Receiver) -> None:
    await put_sub(
        client,
        "del",
        type="webhook",
        pattern="events/*",
        streams=["manual/a"],
        webhook={"url": done_receiver.url},
    )
    await write(client, "events/gone", "x", create=True)
    await done_receiver.wait_for(1)
    assert (await client.delete("/v1/stream/events/gone")).status_code == 204
    paths = [entry["path"] for entry in (await client.get(sub_url("del"))).json()["streams"]]
    assert paths == ["manual/a"]


async def _wake_events(client: Client, wake_stream: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = (await client.get(f"/v1/stream/{wake_stream}")).json()
    return events


async def test_pull_wake_claim_ack_release(client: Client) -> None:
    wake_stream = "wake/pool"
    assert (
        await client.put(f"/v1/stream/{wake_stream}", content=b"[]", headers=JSON_HEADERS)
    ).status_code == 201
    created = await put_sub(
        client,
        "pull",
        type="pull-wake",
        pattern="events/*",
        wake_stream=wake_stream,
        lease_ttl_ms=1000,
    )
    assert created.status_code == 201
    assert created.json()["wake_stream"] == wake_stream
    assert "webhook" not in created.json()
    await write(client, "events/pull-1", "created", create=True)

    async def announced() -> bool:
        return any(
            event["subscription_id"] == "pull" for event in await _wake_events(client, wake_stream)
        )

    await wait_until(announced)
    (event,) = await _wake_events(client, wake_stream)
    assert {k: event[k] for k in ("type", "stream", "generation")} == {
        "type": "wake",
        "stream": "events/pull-1",
        "generation": 1,
    }

    claim = await client.post(
        sub_url("pull", "/claim"), content=b'{"worker":"worker-1"}', headers=JSON_HEADERS
    )
    assert claim.status_code == 200
    claimed = claim.json()
    assert (claimed["generation"], claimed["lease_ttl_ms"]) == (1, 1000)
    (entry,) = claimed["streams"]
    assert (entry["path"], entry["has_pending"]) == ("events/pull-1", True)

    busy = await client.post(
        sub_url("pull", "/claim"), content=b'{"worker":"worker-2"}', headers=JSON_HEADERS
    )
    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "ALREADY_CLAIMED"
    assert busy.json()["error"]["current_holder"] == "worker-1"

    auth = {**JSON_HEADERS, "authorization": f"Bearer {claimed['token']}"}
    ack = {
        "wake_id": claimed["wake_id"],
        "generation": 1,
        "acks": [{"stream": "events/pull-1", "offset": entry["tail_offset"]}],
        "done": True,
    }
    acked = await client.post(sub_url("pull", "/ack"), content=json.dumps(ack), headers=auth)
    assert (acked.status_code, acked.json()) == (200, {"ok": True, "next_wake": False})

    idle = await client.post(
        sub_url("pull", "/claim"), content=b'{"worker":"worker-1"}', headers=JSON_HEADERS
    )
    assert idle.json()["error"]["code"] == "NO_PENDING_WORK"

    await write(client, "events/pull-1", "second")
    claim2 = await client.post(
        sub_url("pull", "/claim"), content=b'{"worker":"worker-1"}', headers=JSON_HEADERS
    )
    assert claim2.status_code == 200
    claimed2 = claim2.json()
    assert claimed2["generation"] == 2
    auth2 = {**JSON_HEADERS, "authorization": f"Bearer {claimed2['token']}"}
    release = {"wake_id": claimed2["wake_id"], "generation": 2}
    released = await client.post(
        sub_url("pull", "/release"), content=json.dumps(release), headers=auth2
    )
    assert released.status_code == 204
    again = await client.post(
        sub_url("pull", "/release"), content=json.dumps(release), headers=auth2
    )
    assert again.json()["error"]["code"] == "FENCED"

    # Released with work pending: the next generation is announced at once.
    async def reannounced() -> bool:
        return any(event["generation"] == 3 for event in await _wake_events(client, wake_stream))

    await wait_until(reannounced)


async def test_endpoints_check_the_subscription_type(client: Client, receiver: Receiver) -> None:
    await put_sub(client, "hook", type="webhook", pattern="events/*", webhook={"url": receiver.url})
    claim = await client.post(
        sub_url("hook", "/claim"), content=b'{"worker":"w"}', headers=JSON_HEADERS
    )
    assert (claim.status_code, claim.json()["error"]["code"]) == (400, "INVALID_REQUEST")
    no_worker = await client.post(
        sub_url("hook", "/claim"), content=b'{"worker":""}', headers=JSON_HEADERS
    )
    assert no_worker.status_code == 400


async def test_wake_stream_appends_do_not_wake(client: Client) -> None:
    await client.put("/v1/stream/events/wake", content=b"[]", headers=JSON_HEADERS)
    await put_sub(client, "self", type="pull-wake", pattern="events/*", wake_stream="events/wake")
    await write(client, "events/wake", "from outside")
    await asyncio.sleep(0.1)
    events = await _wake_events(client, "events/wake")
    assert events == [{"event": "from outside"}]
    assert (await client.get(sub_url("self"))).json()["streams"] == []
