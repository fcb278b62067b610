"""Bearer tokens for every request: static, read from a file, or from a callable.

A `TokenProvider` is asked for the token on every request and asked
to `TokenProvider.refresh` it when the server (or the gateway in
front of it) answers 401; the request is then sent once more with the new
token. `FileToken` follows the Kubernetes projected-token pattern:
the kubelet replaces the file before the token expires, and the provider
re-reads it whenever the file changed (a ``stat`` per request).

Every SDK entry point takes ``token=``: a string (static), a
`pathlib.Path` (a file), a callable returning a string (sync or
async), or any `TokenProvider`.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import httpx

from durable_sessions.protocol.headers import AUTHORIZATION

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Generator

UNAUTHORIZED = 401


class TokenProvider:
    """Where tokens come from. Subclasses implement `token`; the rest has defaults."""

    def token(self) -> str:
        """The token to send now."""
        raise NotImplementedError

    def refresh(self, rejected: str) -> str:
        """A token to try after ``rejected`` was answered 401 (the same one if there is none)."""
        return self.token()

    async def atoken(self) -> str:
        """`token` for async callers (override when getting one awaits)."""
        return self.token()

    async def arefresh(self, rejected: str) -> str:
        """`refresh` for async callers."""
        return self.refresh(rejected)


class StaticToken(TokenProvider):
    """One token for the provider's life."""

    def __init__(self, token: str) -> None:
        self._token = token

    def token(self) -> str:
        return self._token


class FileToken(TokenProvider):
    """A token kept in a file, re-read whenever the file changes (and after a 401).

    Change is seen by the file's identity, size and modification time, so an
    atomic replacement (a rename, or Kubernetes' symlink swap) is picked up
    on the next request. Surrounding whitespace is stripped.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int, int] | None = None
        self._token = ""

    def token(self) -> str:
        stat = os.stat(self.path)
        seen = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if seen != self._seen:
            self._read(seen)
        return self._token

    def refresh(self, rejected: str) -> str:
        # Read even if the file looks unchanged: a same-second, same-size
        # rewrite keeps the size and may keep a coarse mtime.
        stat = os.stat(self.path)
        self._read((stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns))
        return self._token

    def _read(self, seen: tuple[int, int, int, int]) -> None:
        with self._lock:
            self._token = self.path.read_text(encoding="utf-8").strip()
            self._seen = seen


class CallableToken(TokenProvider):
    """A token from ``source()``, called for every request (cache inside it if that costs).

    ``source`` may be a coroutine function; such a provider only serves
    async clients.
    """

    def __init__(self, source: Callable[[], str] | Callable[[], Awaitable[str]]) -> None:
        self._source = source

    def token(self) -> str:
        value = self._source()
        if inspect.isawaitable(value):
            # Close the coroutine so Python does not warn that it was never awaited.
            getattr(value, "close", lambda: None)()
            raise TypeError("an async token callable serves async clients only")
        return value

    async def atoken(self) -> str:
        value = self._source()
        return await value if inspect.isawaitable(value) else value

    async def arefresh(self, rejected: str) -> str:
        return await self.atoken()


TokenSource: TypeAlias = (
    str | os.PathLike[str] | Callable[[], str] | Callable[[], Awaitable[str]] | TokenProvider
)
"""What ``token=`` accepts: see `token_provider`."""


def token_provider(source: TokenSource | None) -> TokenProvider | None:
    """The provider for ``source``: a string is static, a path is a `FileToken`,
    a callable a `CallableToken`; None stays None (no ``Authorization``)."""
    if source is None or isinstance(source, TokenProvider):
        return source
    if isinstance(source, str):
        return StaticToken(source)
    if isinstance(source, os.PathLike):
        return FileToken(source)
    if callable(source):
        return CallableToken(source)
    raise TypeError(f"not a token source: {type(source).__name__}")


class TokenAuth(httpx.Auth):
    """httpx authentication from a `TokenProvider`: ``Authorization: Bearer``
    on every request; on 401 one retry with a refreshed token, if it differs."""

    def __init__(self, provider: TokenProvider) -> None:
        self.provider = provider

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        token = self.provider.token()
        request.headers[AUTHORIZATION] = f"Bearer {token}"
        response = yield request
        if response.status_code == UNAUTHORIZED:
            fresh = self.provider.refresh(token)
            if fresh != token:
                request.headers[AUTHORIZATION] = f"Bearer {fresh}"
                yield request

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self.provider.atoken()
        request.headers[AUTHORIZATION] = f"Bearer {token}"
        response = yield request
        if response.status_code == UNAUTHORIZED:
            fresh = await self.provider.arefresh(token)
            if fresh != token:
                request.headers[AUTHORIZATION] = f"Bearer {fresh}"
                yield request


def token_auth(source: TokenSource | None) -> httpx.Auth | None:
    """A `TokenAuth` for ``source``, or None when there is no token."""
    provider = token_provider(source)
    return None if provider is None else TokenAuth(provider)
