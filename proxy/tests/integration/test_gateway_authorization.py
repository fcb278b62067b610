"""Authorization through the gateway: a token's ``ds`` claim decides its buckets.

Envoy authenticates; ds-server (DS_AUTH__MODE=gateway) checks the bucket
scopes from the forwarded payload. Statuses are asserted end to end, and
"passed" requests are also checked to have reached the server.
"""

from __future__ import annotations

import httpx
import pytest
from ds_proxy.tokens import TokenSpec, bucket_token, mint
from gateway_stack import ADMIN, GatewayStack, bearer, tag, unique

TEXT = {"Content-Type": "text/plain"}
DENIED = (401, 403)


@pytest.fixture(scope="module")
def buckets(stack: GatewayStack) -> dict[str, str]:
    """Three buckets, each with a stream holding data: mine (rw), shared (r), theirs (none)."""
    names = {role: unique(role) for role in ("mine", "shared", "theirs")}
    with httpx.Client(base_url=stack.url) as http:
        for bucket in names.values():
            path = f"/v1/stream/{bucket}/s"
            assert http.put(path, headers={**bearer(ADMIN), **TEXT}).status_code == 201
            response = http.post(path, headers={**bearer(ADMIN), **TEXT}, content=b"data")
            assert response.status_code == 204
    return names


@pytest.fixture(scope="module")
def token(buckets: dict[str, str]) -> str:
    return bucket_token(
        "scoped", read=(buckets["mine"], buckets["shared"]), write=(buckets["mine"],)
    )


def _read(client: httpx.Client, path: str, token: str, **params: str) -> httpx.Response:
    with client.stream(
        "GET", path, params={"offset": "-1", **params}, headers=bearer(token)
    ) as response:
        # A live SSE answer does not end soon; its status is all these tests need.
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            response.read()
        return response


class TestStreamSurface:
    """``/v1/stream/{bucket}/...``: the first path segment is the bucket."""

    @pytest.mark.parametrize("live", [None, "long-poll", "sse"])
    def test_reads_of_granted_buckets_pass(
        self, live: str | None, client: httpx.Client, buckets: dict[str, str], token: str
    ) -> None:
        params = {"live": live} if live else {}
        for role in ("mine", "shared"):
            response = _read(client, f"/v1/stream/{buckets[role]}/s", token, **params)
            assert response.status_code == 200

    @pytest.mark.parametrize("live", [None, "long-poll", "sse"])
    def test_reads_of_other_buckets_are_403(
        self, live: str | None, client: httpx.Client, buckets: dict[str, str], token: str
    ) -> None:
        params = {"live": live} if live else {}
        response = _read(client, f"/v1/stream/{buckets['theirs']}/s", token, **params)
        assert response.status_code == 403
        assert "read access" in response.text

    def test_head_follows_read_scope(
        self, client: httpx.Client, buckets: dict[str, str], token: str
    ) -> None:
        assert client.head(f"/v1/stream/{buckets['shared']}/s", headers=bearer(token)).is_success
        theirs = client.head(f"/v1/stream/{buckets['theirs']}/s", headers=bearer(token))
        assert theirs.status_code == 403

    def test_writes_need_write_scope(
        self, stack: GatewayStack, client: httpx.Client, buckets: dict[str, str], token: str
    ) -> None:
        auth = {**bearer(token), **TEXT}
        mine = f"/v1/stream/{buckets['mine']}"
        assert client.put(f"{mine}/new", headers=auth).status_code == 201
        assert client.post(f"{mine}/new", headers=auth, content=b"x").status_code == 204
        assert client.delete(f"{mine}/new", headers=auth).status_code == 204
        for role in ("shared", "theirs"):  # readable, or not even that
            path = f"/v1/stream/{buckets[role]}/s"
            request_id, tagged = tag()
            headers = {**auth, **tagged}
            assert client.post(path, headers=headers, content=b"x").status_code == 403
            assert client.put(f"/v1/stream/{buckets[role]}/new", headers=auth).status_code == 403
            assert client.delete(path, headers=auth).status_code == 403
            # Denied by the server's authorization, before any handler ran.
            assert stack.reached_server(request_id)
        # Nothing was appended to the buckets the token may not write.
        shared = client.get(f"/v1/stream/{buckets['shared']}/s?offset=-1", headers=bearer(token))
        assert shared.text == "data"

    def test_write_scope_does_not_grant_read(
        self, client: httpx.Client, buckets: dict[str, str]
    ) -> None:
        writer = bucket_token("writer-only", write=(buckets["mine"],))
        path = f"/v1/stream/{buckets['mine']}/s"
        assert client.post(path, headers={**bearer(writer), **TEXT}, content=b"w").is_success
        assert _read(client, path, writer).status_code == 403

    def test_wildcard_grants_every_bucket(
        self, client: httpx.Client, buckets: dict[str, str]
    ) -> None:
        everything = bucket_token("root", read=("*",), write=("*",))
        assert _read(client, f"/v1/stream/{buckets['theirs']}/s", everything).status_code == 200

    def test_a_token_without_the_claim_gets_nothing(
        self, client: httpx.Client, buckets: dict[str, str]
    ) -> None:
        bare = mint(TokenSpec(sub="nobody", read=None, write=None))
        assert _read(client, f"/v1/stream/{buckets['mine']}/s", bare).status_code == 403

    def test_fork_needs_read_on_the_source_bucket(
        self, client: httpx.Client, buckets: dict[str, str], token: str
    ) -> None:
        mine = f"/v1/stream/{buckets['mine']}"
        stolen = client.put(
            f"{mine}/{unique('fork')}",
            headers={**bearer(token), "Stream-Forked-From": f"/v1/stream/{buckets['theirs']}/s"},
        )
        assert stolen.status_code == 403
        allowed = client.put(
            f"{mine}/{unique('fork')}",
            headers={**bearer(token), "Stream-Forked-From": f"/v1/stream/{buckets['shared']}/s"},
        )
        assert allowed.status_code == 201

    def test_server_owned_segments_need_the_wildcard(
        self, client: httpx.Client, token: str
    ) -> None:
        response = client.get("/v1/stream/__ds/subscriptions/x", headers=bearer(token))
        assert response.status_code == 403

    @pytest.mark.parametrize("path", ["/metrics", "/v1/stream", "/anything-else"])
    def test_paths_without_a_bucket_need_the_wildcard(
        self, path: str, client: httpx.Client, token: str
    ) -> None:
        assert client.get(path, headers=bearer(token)).status_code == 403


class TestBucketSurface:
    """``/ds/{bucket}/...`` (the extension surface): the decision only.

    Requests that pass reach the server (which may answer 404 while the
    extension surface is being built); refused ones are 403.
    """

    CASES = [
        ("GET", "/ds/{b}/s?offset=-1", "read"),
        ("GET", "/ds/{b}/s?offset=-1&live=sse", "read"),
        ("GET", "/ds/{b}/s?offset=-1&live=long-poll", "read"),
        ("GET", "/ds/{b}/s/bootstrap", "read"),
        ("GET", "/ds/{b}/s/snapshot", "read"),
        ("GET", "/ds/{b}/s/snapshot/00000000000000000004", "read"),
        ("HEAD", "/ds/{b}/s", "read"),
        ("GET", "/ds/{b}", "read"),
        ("GET", "/ds/{b}/streams?prefix=a", "read"),
        ("PUT", "/ds/{b}/s", "write"),
        ("POST", "/ds/{b}/s", "write"),
        ("DELETE", "/ds/{b}/s", "write"),
        ("PUT", "/ds/{b}/s/snapshot/00000000000000000004", "write"),
        ("DELETE", "/ds/{b}/s/snapshot/00000000000000000004", "write"),
        ("PUT", "/ds/{b}", "write"),
        ("DELETE", "/ds/{b}", "write"),
    ]

    @pytest.mark.parametrize(("method", "template", "mode"), CASES)
    def test_scope_decides(
        self,
        method: str,
        template: str,
        mode: str,
        stack: GatewayStack,
        client: httpx.Client,
        buckets: dict[str, str],
        token: str,
    ) -> None:
        granted = buckets["mine"]
        refused = buckets["theirs"] if mode == "read" else buckets["shared"]
        outcomes = {}
        for bucket in (granted, refused):
            request_id, headers = tag()
            response = client.request(
                method,
                template.format(b=bucket),
                headers={**headers, **bearer(token), **TEXT},
                content=b"x" if method in ("PUT", "POST") else None,
            )
            outcomes[bucket] = (response.status_code, stack.reached_server(request_id))
        granted_status, granted_reached = outcomes[granted]
        assert granted_status not in DENIED
        assert granted_reached
        assert outcomes[refused][0] == 403


class TestStreamScopes:
    """A scope naming one stream (``bucket/stream``): that stream and nothing else,
    e.g. a short-lived read URL token handed to a browser."""

    def test_a_read_token_for_one_stream_reads_it_in_the_url_and_nothing_else(
        self, client: httpx.Client
    ) -> None:
        bucket = unique("scoped")
        one, other = f"{bucket}/s", f"{bucket}/other"
        assert client.put(f"/ds/{bucket}", headers=bearer(ADMIN)).status_code == 201
        for name in (one, other):
            created = client.put(f"/v1/stream/{name}", headers={**bearer(ADMIN), **TEXT})
            assert created.status_code == 201
        written = client.post(
            f"/v1/stream/{one}", headers={**bearer(ADMIN), **TEXT}, content=b"data"
        )
        assert written.status_code == 204
        token = bucket_token("reader", read=(one,), expires_in=120)
        for path in (f"/v1/stream/{one}", f"/ds/{one}"):
            query = {"offset": "-1", "access_token": token}
            assert client.get(path, params=query).content == b"data"
            with client.stream("GET", path, params={**query, "live": "sse"}) as live:
                assert live.status_code == 200
        assert client.get(f"/ds/{one}/bootstrap", headers=bearer(token)).status_code == 200
        # Not its neighbour, not the bucket's listing, not a write.
        assert _read(client, f"/v1/stream/{other}", token).status_code == 403
        assert client.get(f"/ds/{bucket}/streams", headers=bearer(token)).status_code == 403
        assert client.get(f"/ds/{bucket}", headers=bearer(token)).status_code == 403
        post = client.post(f"/v1/stream/{one}", headers={**bearer(token), **TEXT}, content=b"x")
        assert post.status_code == 403
        assert "write access" in post.text

    def test_a_write_token_for_one_stream_appends_to_it_alone(
        self, client: httpx.Client, buckets: dict[str, str]
    ) -> None:
        bucket = buckets["mine"]
        fresh = f"{bucket}/{unique('gen')}"
        token = bucket_token("writer", write=(fresh,))
        headers = {**bearer(token), **TEXT}
        assert client.put(f"/v1/stream/{fresh}", headers=headers).status_code == 201
        assert client.post(f"/v1/stream/{fresh}", headers=headers, content=b"x").status_code == 204
        assert client.get(f"/v1/stream/{fresh}", headers=bearer(token)).status_code == 403
        sibling = client.post(f"/v1/stream/{bucket}/s", headers=headers, content=b"x")
        assert sibling.status_code == 403
