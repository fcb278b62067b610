"""``DurableChatGenerations``: the server half of ``@durable-streams/aisdk-transport``.

``createDurableChatTransport`` (the browser's ``useChat`` transport) POSTs a
chat's messages and expects, instead of the generated chunks, a pointer to
a durable stream that holds them: ``201``, ``Location: <read URL>`` and
``{"streamUrl": <read URL>}``. It then reads that stream (JSON, SSE) from
its beginning to its close. On a page reload it asks ``GET {api}/{chat
id}/stream``: ``200`` with the same pointer while a generation is in
flight, ``204`` when none is. So:

- `start` creates the generation's stream
  (``/v1/stream/{bucket}/{chat id}/{generation id}``), answers at once, and
  writes the chunks in the background (``mode="await"``: answers ``200``
  with ``finalOffset`` once they are written);
- `reconnect` answers the reload.

Read URLs point at the gateway (``public_url``) and carry, in
``?access_token=``, a token from ``read_token(stream name)``: make it
short-lived and read-only for that one stream (a scope naming the stream,
docs/security.md). Writes use ``token``. Framework-neutral: the adapters in
`durable_sessions.aisdk.litestar` and `durable_sessions.aisdk.starlette`
turn requests and `ChatResponse` into their framework's.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlencode

from durable_sessions._errors import http_error
from durable_sessions._http import auth_for, owned_client
from durable_sessions.aisdk.active import MemoryActiveGenerations
from durable_sessions.aisdk.requests import check_chat_id
from durable_sessions.aisdk.responses import NOTHING_IN_FLIGHT, pointer
from durable_sessions.aisdk.writing import ERROR_TEXT, write_chunks
from durable_sessions.protocol.content_types import JSON
from durable_sessions.protocol.headers import STREAM_TTL
from durable_sessions.protocol.urls import bucket_url, stream_url
from durable_sessions.streams import create
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, Awaitable, Callable
    from datetime import timedelta

    import httpx

    from durable_sessions.aisdk.active import ActiveGenerations
    from durable_sessions.aisdk.responses import ChatResponse
    from durable_sessions.tokens import TokenSource

    ReadToken = Callable[[str], str] | Callable[[str], Awaitable[str]]

log = logging.getLogger(__name__)
DEFAULT_BUCKET = "generations"
ACCESS_TOKEN = "access_token"


class DurableChatGenerations:
    """Generations of AI SDK chats written to durable streams, and pointers to them.

    ``base_url``: the gateway this process writes through (``DS_GATEWAY_URL``);
    ``public_url``: the gateway as browsers reach it (default: ``base_url``).
    ``bucket`` holds the generations' streams (created on first use unless
    ``create_bucket=False``); ``ttl`` lets each stream expire that long
    after its last write (None: never). ``active`` remembers the generation
    in flight per chat (in memory by default). ``client`` is an httpx
    client to share.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource | None = None,
        read_token: ReadToken | None = None,
        public_url: str | None = None,
        bucket: str = DEFAULT_BUCKET,
        create_bucket: bool = True,
        ttl: timedelta | None = None,
        active: ActiveGenerations | None = None,
        client: httpx.AsyncClient | None = None,
        error_text: str = ERROR_TEXT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.public_url = (public_url or base_url).rstrip("/")
        self.bucket = bucket
        self.active: ActiveGenerations = active if active is not None else MemoryActiveGenerations()
        self._token = token_provider(token)
        self._read_token = read_token
        self._bucket_ready = not create_bucket
        self._ttl = ttl
        self._client = client
        self._error_text = error_text
        self._writers: set[asyncio.Task[str]] = set()

    async def start(
        self,
        chat_id: str,
        chunks: AsyncIterable[dict[str, Any]],
        *,
        mode: Literal["immediate", "await"] = "immediate",
    ) -> ChatResponse:
        """Create a stream for a new generation of ``chat_id`` and write ``chunks`` to it.

        ``immediate``: answers ``201`` with the pointer at once, the chunks are
        written by a background task (`aclose` waits for those). ``await``:
        answers ``200`` with the pointer and ``finalOffset`` once written.
        Raises `BadChatRequest` for a chat id that cannot name a stream.
        """
        check_chat_id(chat_id)
        name = f"{self.bucket}/{chat_id}/{uuid.uuid4().hex}"
        url = stream_url(self.base_url, name)
        await self._create(url)
        await self.active.begin(chat_id, name)
        writer = asyncio.create_task(self._write(chat_id, name, url, chunks))
        self._writers.add(writer)
        writer.add_done_callback(self._writers.discard)
        if mode == "await":
            # Shielded: a client that hangs up does not stop the generation.
            final_offset = await asyncio.shield(writer)
            return pointer(200, await self.read_url(name), finalOffset=final_offset)
        return pointer(201, await self.read_url(name))

    async def reconnect(self, chat_id: str) -> ChatResponse:
        """The pointer to ``chat_id``'s generation in flight (``200``), or ``204``."""
        name = await self.active.current(check_chat_id(chat_id))
        if name is None:
            return NOTHING_IN_FLIGHT
        return pointer(200, await self.read_url(name))

    async def read_url(self, name: str) -> str:
        """The URL a browser reads stream ``name`` at, with a fresh read token."""
        url = stream_url(self.public_url, name)
        if self._read_token is None:
            return url
        token = self._read_token(name)
        if inspect.isawaitable(token):
            token = await token
        return f"{url}?{urlencode({ACCESS_TOKEN: token})}"

    async def aclose(self) -> None:
        """Wait for the generations still being written (call it at shutdown)."""
        if self._writers:
            await asyncio.gather(*self._writers, return_exceptions=True)

    async def _create(self, url: str) -> None:
        async with owned_client(self._client) as http:
            if not self._bucket_ready:
                created = await http.put(
                    bucket_url(self.base_url, self.bucket), auth=auth_for(self._token)
                )
                if created.status_code not in (201, 409):  # 409: it exists
                    raise http_error(created.status_code, str(created.url), created.text)
                self._bucket_ready = True
            headers = {} if self._ttl is None else {STREAM_TTL: str(int(self._ttl.total_seconds()))}
            await create(url, content_type=JSON, client=http, token=self._token, headers=headers)

    async def _write(
        self, chat_id: str, name: str, url: str, chunks: AsyncIterable[dict[str, Any]]
    ) -> str:
        try:
            return await write_chunks(
                chunks, url, token=self._token, client=self._client, error_text=self._error_text
            )
        except Exception:
            log.exception("generation %s of chat %s failed", name, chat_id)
            raise
        finally:
            await self.active.end(chat_id, name)
