"""What both framework adapters do with a request, whatever their framework."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from durable_sessions.aisdk.requests import BadChatRequest, ChatRequest
from durable_sessions.aisdk.responses import ChatResponse

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, Callable

    from durable_sessions.aisdk.generations import DurableChatGenerations

    Respond = Callable[[ChatRequest], AsyncIterable[dict[str, Any]]]

DEFAULT_API = "/api/chat"


def bad_request(error: BadChatRequest) -> ChatResponse:
    """A 400 with the reason (plain text is the adapters' job: this carries it as JSON)."""
    return ChatResponse(400, {}, {"error": str(error)})


async def start(generations: DurableChatGenerations, respond: Respond, body: bytes) -> ChatResponse:
    """``POST {api}``: parse, generate, point at the stream."""
    try:
        chat = ChatRequest.from_json(body)
        return await generations.start(chat.id, respond(chat))
    except BadChatRequest as error:
        return bad_request(error)


async def reconnect(generations: DurableChatGenerations, chat_id: str) -> ChatResponse:
    """``GET {api}/{chat id}/stream``: the generation in flight, or 204."""
    try:
        return await generations.reconnect(chat_id)
    except BadChatRequest as error:
        return bad_request(error)
