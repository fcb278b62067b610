"""The server half of ``@durable-streams/aisdk-transport`` for Python (ASGI) backends.

`DurableChatGenerations` writes a generation's AI SDK UI message chunks
to a durable stream and answers with a pointer to it; `ChatRequest` parses
what the transport POSTs. Adapters: `durable_sessions.aisdk.litestar`
(``pip install 'durable-sessions[litestar]'``) and
`durable_sessions.aisdk.starlette` (Starlette and FastAPI;
``'durable-sessions[starlette]'``).
"""

from __future__ import annotations

from durable_sessions.aisdk.active import ActiveGenerations, MemoryActiveGenerations
from durable_sessions.aisdk.generations import DEFAULT_BUCKET, DurableChatGenerations
from durable_sessions.aisdk.requests import BadChatRequest, ChatRequest, check_chat_id
from durable_sessions.aisdk.responses import ChatResponse
from durable_sessions.aisdk.writing import write_chunks

__all__ = [
    "DEFAULT_BUCKET",
    "ActiveGenerations",
    "BadChatRequest",
    "ChatRequest",
    "ChatResponse",
    "DurableChatGenerations",
    "MemoryActiveGenerations",
    "check_chat_id",
    "write_chunks",
]
