"""The example's Litestar app: ``POST /api/chat`` and ``GET /api/chat/{id}/stream``.

Each ``POST`` runs the fake model; its UI message chunks go to a durable
stream of their own (``/v1/stream/generations/{chat id}/{generation}``),
and the answer points the browser there with a read token for that stream.
The conversation is also written as a session (``/ds/sessions/{chat id}``):
the question, and the reply chunk by chunk as it is generated, so it shows
in the session viewer (``/ui/``) and in Postgres (``session_events``).

Settings come from the environment: ``DS_GATEWAY_URL`` and ``DS_TOKEN``
(``eval "$(.venv/bin/ds-dev env)"`` exports both), and optionally
``CHAT_EXAMPLE_PUBLIC_URL`` (the gateway as browsers reach it),
``CHAT_EXAMPLE_SESSION_BUCKET`` (``sessions``; empty: no session),
``CHAT_EXAMPLE_PAUSE_MS`` (between words, 60) and
``CHAT_EXAMPLE_HOLD_FILE`` (tests only: while this file exists, the model pauses
halfway).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from durable_sessions.aisdk import DurableChatGenerations
from durable_sessions.aisdk.litestar import chat_handlers
from durable_sessions.sessions import AsyncSessionWriter, create_session, session_url
from litestar import Litestar, get

from chat_example import model
from chat_example.read_tokens import read_token

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from durable_sessions.aisdk import ChatRequest


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """Where the stack is and how the example behaves (see the module's docstring)."""

    gateway_url: str
    token: str
    public_url: str | None = None
    session_bucket: str = "sessions"
    pause_secs: float = 0.06
    hold_file: Path | None = None

    @classmethod
    def from_env(cls) -> ChatSettings:
        missing = [name for name in ("DS_GATEWAY_URL", "DS_TOKEN") if not os.environ.get(name)]
        if missing:
            raise SystemExit(
                f"{' and '.join(missing)} not set: start `make dev`, then "
                '`eval "$(.venv/bin/ds-dev env)"` (or run `make example-chat`)'
            )
        hold = os.environ.get("CHAT_EXAMPLE_HOLD_FILE")
        return cls(
            gateway_url=os.environ["DS_GATEWAY_URL"],
            token=os.environ["DS_TOKEN"],
            public_url=os.environ.get("CHAT_EXAMPLE_PUBLIC_URL") or None,
            session_bucket=os.environ.get("CHAT_EXAMPLE_SESSION_BUCKET", "sessions"),
            pause_secs=float(os.environ.get("CHAT_EXAMPLE_PAUSE_MS", "60")) / 1000,
            hold_file=Path(hold) if hold else None,
        )


def create_app(settings: ChatSettings | None = None) -> Litestar:
    """The app, for uvicorn (``chat_example.app:create_app``, a factory)."""
    settings = settings or ChatSettings.from_env()
    generations = DurableChatGenerations(
        settings.gateway_url,
        token=settings.token,
        read_token=read_token,
        public_url=settings.public_url,
    )

    def respond(chat: ChatRequest) -> AsyncIterator[dict[str, Any]]:
        question = chat.last_user_text()
        chunks = model.generate(
            question,
            message_id=f"msg-{uuid.uuid4().hex}",
            pause=settings.pause_secs,
            hold=settings.hold_file,
        )
        if not settings.session_bucket:
            return chunks
        return _recorded(settings, chat.id, question, chunks)

    @get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return Litestar(
        route_handlers=[*chat_handlers(generations, respond), healthz],
        on_shutdown=[generations.aclose],
    )


async def _recorded(
    settings: ChatSettings, chat_id: str, question: str, chunks: AsyncIterator[dict[str, Any]]
) -> AsyncIterator[dict[str, Any]]:
    """``chunks`` passed on, with the question and the reply written to the chat's session."""
    url = session_url(settings.gateway_url, chat_id, bucket=settings.session_bucket)
    await create_session(url, token=settings.token)
    async with AsyncSessionWriter(url, token=settings.token) as session:
        session.message(question, author="user:guest")
        reply = session.reply(author="assistant:fake-model")
        try:
            async for chunk in chunks:
                if chunk.get("type") == "text-delta":
                    reply.add(chunk["delta"])
                yield chunk
        finally:
            reply.finish()
