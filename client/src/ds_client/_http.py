"""The HTTP client a call uses: the caller's, or one of its own for the call's duration."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

# Live reads wait up to the server's long-poll timeout (30 s by default) and
# SSE connections stay quiet up to its keep-alive interval (15 s).
DEFAULT_TIMEOUT = httpx.Timeout(10.0, read=60.0)


@contextlib.asynccontextmanager
async def owned_client(client: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """``client`` as is, or a new client that is closed on exit."""
    if client is not None:
        yield client
        return
    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as own:
        yield own
