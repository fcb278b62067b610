"""Token providers: what each sends, when a file is re-read, and the retry after a 401."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import httpx
import pytest
from durable_sessions.tokens import (
    CallableToken,
    FileToken,
    StaticToken,
    TokenAuth,
    token_provider,
)

if TYPE_CHECKING:
    from pathlib import Path


class Gate:
    """A server that accepts only ``valid`` tokens and records each Authorization."""

    def __init__(self, *valid: str) -> None:
        self.valid = set(valid)
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        header = request.headers.get("Authorization", "")
        self.seen.append(header)
        ok = header.removeprefix("Bearer ") in self.valid
        return httpx.Response(200 if ok else 401)


def _client(gate: Gate, auth: httpx.Auth) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(gate), auth=auth)


def test_sources_become_providers(tmp_path: Path) -> None:
    assert token_provider(None) is None
    assert isinstance(token_provider("t"), StaticToken)
    assert isinstance(token_provider(tmp_path / "t"), FileToken)
    assert isinstance(token_provider(lambda: "t"), CallableToken)
    static = StaticToken("t")
    assert token_provider(static) is static
    with pytest.raises(TypeError):
        token_provider(42)  # type: ignore[arg-type]


def test_a_static_token_on_every_request() -> None:
    gate = Gate("t")
    with _client(gate, TokenAuth(StaticToken("t"))) as http:
        assert http.get("http://x/a").status_code == 200
        assert http.get("http://x/b").status_code == 200
    assert gate.seen == ["Bearer t", "Bearer t"]


def test_a_file_token_is_reread_when_replaced(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("one\n")
    gate = Gate("one", "two")
    with _client(gate, TokenAuth(FileToken(path))) as http:
        http.get("http://x/")
        # The kubelet's way: write a new file, then rename it over the old one.
        fresh = tmp_path / "token.new"
        fresh.write_text("two")
        os.replace(fresh, path)
        http.get("http://x/")
    assert gate.seen == ["Bearer one", "Bearer two"]


def test_a_401_rereads_the_file_and_retries_once(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("old")
    provider = FileToken(path)
    gate = Gate("new")
    with _client(gate, TokenAuth(provider)) as http:
        assert provider.token() == "old"
        # Same size, same mtime possible: only the 401 makes it read again.
        path.write_text("new")
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert http.get("http://x/").status_code == 200
    assert gate.seen[-1] == "Bearer new"


def test_a_401_with_no_new_token_is_not_retried() -> None:
    gate = Gate()
    with _client(gate, TokenAuth(StaticToken("t"))) as http:
        assert http.get("http://x/").status_code == 401
    assert gate.seen == ["Bearer t"]


def test_a_callable_is_asked_every_time() -> None:
    issued = iter(["a", "b", "c"])
    gate = Gate("a", "c")
    with _client(gate, TokenAuth(CallableToken(lambda: next(issued)))) as http:
        assert http.get("http://x/").status_code == 200
        # "b" is refused; the retry asks again and gets "c".
        assert http.get("http://x/").status_code == 200
    assert gate.seen == ["Bearer a", "Bearer b", "Bearer c"]


async def test_an_async_callable_serves_async_clients() -> None:
    async def source() -> str:
        return "t"

    gate = Gate("t")
    transport = httpx.MockTransport(gate)
    auth = TokenAuth(CallableToken(source))
    async with httpx.AsyncClient(transport=transport, auth=auth) as http:
        assert (await http.get("http://x/")).status_code == 200
    with pytest.raises(TypeError):
        CallableToken(source).token()
