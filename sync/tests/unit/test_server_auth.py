"""The server's token goes to the server only, and never over a request's own credentials."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import httpx
from ds_sync.server_auth import server_auth

if TYPE_CHECKING:
    from pathlib import Path


def _client(auth: httpx.Auth | None, seen: list[tuple[str, str | None]]) -> httpx.AsyncClient:
    def answer(request: httpx.Request) -> httpx.Response:
        sent = request.headers.get("authorization")
        seen.append((str(request.url), sent))
        # The server refuses the first token it sees; the renewed one passes.
        return httpx.Response(401 if sent == "Bearer old" else 200)

    return httpx.AsyncClient(transport=httpx.MockTransport(answer), auth=auth)


async def test_only_requests_to_the_server_carry_its_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("current\n")
    seen: list[tuple[str, str | None]] = []
    async with _client(server_auth(token, "http://envoy:8080"), seen) as http:
        await http.get("http://envoy:8080/v1/stream/a")
        await http.get("http://electric:3000/v1/shape")
        await http.get("http://envoy:8081/v1/stream/a")
        ack = "http://envoy:8080/v1/stream/__ds/subscriptions/s/ack"
        await http.post(ack, headers={"Authorization": "Bearer callback"})
    assert seen == [
        ("http://envoy:8080/v1/stream/a", "Bearer current"),
        ("http://electric:3000/v1/shape", None),
        ("http://envoy:8081/v1/stream/a", None),
        (ack, "Bearer callback"),
    ]


async def test_a_401_reads_the_file_again_and_retries_once(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent = request.headers.get("authorization")
        seen.append(sent)
        if sent == "Bearer old":
            # Renewed meanwhile, in a way a stat cannot see (same size, same mtime).
            before = token.stat()
            token.write_text("new")
            os.utime(token, ns=(before.st_atime_ns, before.st_mtime_ns))
            return httpx.Response(401)
        return httpx.Response(200)

    auth = server_auth(token, "http://envoy:8080")
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer), auth=auth) as http:
        assert (await http.get("http://envoy:8080/a")).status_code == 200
    assert seen == ["Bearer old", "Bearer new"]


async def test_no_token_means_no_auth() -> None:
    assert server_auth(None, "http://envoy:8080") is None
