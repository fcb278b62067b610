"""`DurableChatGenerations` in a Litestar app (``pip install 'durable-sessions[litestar]'``).

::

    generations = DurableChatGenerations(gateway, token=..., read_token=...)
    app = Litestar(
        route_handlers=chat_handlers(generations, respond),
        on_shutdown=[generations.aclose],
    )

``respond(chat: ChatRequest)`` returns the generation's UI message chunks
(any async iterator of dicts). `to_response` turns a `ChatResponse` into a
Litestar response for handlers of your own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar import Request, Response, get, post

from durable_sessions.aisdk import _routes

if TYPE_CHECKING:
    from litestar.handlers import HTTPRouteHandler

    from durable_sessions.aisdk._routes import Respond
    from durable_sessions.aisdk.generations import DurableChatGenerations
    from durable_sessions.aisdk.responses import ChatResponse


def to_response(reply: ChatResponse) -> Response[bytes]:
    """A Litestar response carrying ``reply``."""
    return Response(
        reply.content,
        status_code=reply.status,
        headers=reply.headers,
        media_type=reply.media_type,
    )


def chat_handlers(
    generations: DurableChatGenerations, respond: Respond, *, api: str = _routes.DEFAULT_API
) -> list[HTTPRouteHandler]:
    """``POST {api}`` and ``GET {api}/{chat_id}/stream``, as the transport calls them."""

    @post(api, status_code=201)
    async def start_generation(request: Request[Any, Any, Any]) -> Response[bytes]:
        return to_response(await _routes.start(generations, respond, await request.body()))

    @get(api + "/{chat_id:str}/stream")
    async def reconnect_generation(request: Request[Any, Any, Any]) -> Response[bytes]:
        chat_id = request.path_params["chat_id"]
        return to_response(await _routes.reconnect(generations, chat_id))

    return [start_generation, reconnect_generation]
