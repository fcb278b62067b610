"""Who may read what: tenants in their own buckets, and a token that expires mid-session."""

from __future__ import annotations

import contextlib
import json
import time

import httpx
from durable_sessions import DurableStreamError, sse_session
from e2e_clients import JSON, Reader, append, create, read_all
from e2e_events import message
from e2e_stack import E2E, SSE_RECONNECT_SECS, unique


def _requests_into(bucket: str) -> list[tuple[str, str, dict[str, str], bytes]]:
    """Every kind of request a tenant could aim at another tenant's bucket."""
    room = f"/ds/{bucket}/room"
    body = json.dumps([message("msg:x", "user", "intruder")]).encode()
    return [
        ("GET", room + "?offset=-1", {}, b""),
        ("GET", room + "?offset=-1&live=sse", {}, b""),
        ("GET", room + "?offset=-1&live=long-poll", {}, b""),
        ("HEAD", room, {}, b""),
        ("GET", room + "/bootstrap", {}, b""),
        ("GET", f"/ds/{bucket}", {}, b""),
        ("GET", f"/ds/{bucket}/streams", {}, b""),
        ("GET", f"/v1/stream/{bucket}/room?offset=-1", {}, b""),
        ("POST", room, JSON, body),
        ("PUT", f"/ds/{bucket}/planted", JSON, b""),
        ("DELETE", room, {}, b""),
        ("DELETE", f"/ds/{bucket}", {}, b""),
    ]


def test_two_tenants_in_two_buckets_never_see_each_other(e2e: E2E) -> None:
    """Two tenants, each with a token for its own bucket only: every read, listing, write,
    delete or fork aimed at the other's bucket is refused (403) and changes nothing."""
    buckets = {"alice": unique("tenant-a"), "bob": unique("tenant-b")}
    tokens = {who: e2e.token(who, read=b, write=b) for who, b in buckets.items()}
    for who, bucket in buckets.items():
        with e2e.client(tokens[who]) as http:
            assert http.put(f"/ds/{bucket}").status_code == 201
            create(http, f"/ds/{bucket}/room", message("msg:1", "user", f"{who}'s secret"))

    for who, other in (("alice", "bob"), ("bob", "alice")):
        target = buckets[other]
        with e2e.client(tokens[who]) as http:
            for method, url, headers, body in _requests_into(target):
                response = http.request(method, url, headers=headers, content=body)
                assert response.status_code == 403, (method, url, response.status_code)
            fork = http.put(
                f"/ds/{buckets[who]}/copy",
                headers={**JSON, "Stream-Forked-From": f"/ds/{target}/room"},
            )
            assert fork.status_code == 403
            listing = http.get(f"/ds/{buckets[who]}/streams").json()
            assert [entry["stream_id"] for entry in listing["streams"]] == ["room"]

    for who, bucket in buckets.items():
        with e2e.client(tokens[who]) as http:
            [only] = read_all(http, f"/ds/{bucket}/room")[0]
            assert only["value"]["text"] == f"{who}'s secret"


async def test_a_token_expiring_during_an_sse_session(e2e: E2E) -> None:
    """The server ends an SSE session when its token expires (sooner than its reconnect
    interval); the reconnect with that token gets 401 (expired); a fresh token resumes from
    the saved offset and gets exactly what was written meanwhile."""
    bucket = unique("expiry")
    url = f"{e2e.url}/ds/{bucket}/room"
    with e2e.client() as admin:
        assert admin.put(f"/ds/{bucket}").status_code == 201
        create(admin, f"/ds/{bucket}/room", message("msg:1", "user", "one"))
    valid_secs = SSE_RECONNECT_SECS - 1
    seen: list[str] = []
    saved = "-1"
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=30.0)) as http:
        # A loaded machine may take longer than the token's few seconds to open the read;
        # such a token is refused before the session starts, and a new one is tried.
        for _attempt in range(3):
            short, exp = e2e.expiring_token("viewer", bucket, valid_secs)
            headers = {"Authorization": f"Bearer {short}"}
            session = sse_session(
                http, url, saved, content_type="application/json", headers=headers
            )
            try:
                async with contextlib.aclosing(session):
                    # Read until the server ends the connection: at exp, before the
                    # reconnect interval.
                    async for update in session:
                        seen += [json.loads(m)["value"]["text"] for m in update.messages]
                        saved = update.next_offset
                        if seen == ["one"]:
                            with e2e.client() as admin:
                                message_two = message("msg:2", "user", "two")
                                append(admin, f"/ds/{bucket}/room", message_two)
            except DurableStreamError as refused_at_start:
                if seen or refused_at_start.status != 401:
                    raise
                continue
            break
        else:
            raise AssertionError("three short tokens expired before their reads could start")
        assert time.time() >= exp
        # On a loaded machine the token may run out before "two" is delivered; then the
        # fresh token below must bring it: nothing is lost either way.
        assert seen in (["one"], ["one", "two"])

        with e2e.client() as admin:
            append(admin, f"/ds/{bucket}/room", message("msg:3", "user", "three"))
        refused = await http.get(url, params={"offset": saved, "live": "sse"}, headers=headers)
        assert refused.status_code == 401
        assert "expired" in refused.text.lower()

    fresh = e2e.token("viewer", read=bucket, write=bucket)
    reader = Reader(url, {"Authorization": f"Bearer {fresh}"}, offset=saved)
    rest = ["one", "two", "three"][len(seen) :]
    await reader.read_until(lambda got: len(got) >= len(rest))
    assert [m["value"]["text"] for m in reader.messages] == rest
