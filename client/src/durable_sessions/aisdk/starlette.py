"""`DurableChatGenerations` in a Starlette or FastAPI app
(``pip install 'durable-sessions[starlette]'``).

::

    generations = DurableChatGenerations(gateway, token=..., read_token=...)
    app = Starlette(routes=chat_routes(generations, respond), lifespan=...)
    # FastAPI: app.router.routes.extend(chat_routes(generations, respond))

``respond(chat: ChatRequest)`` returns the generation's UI message chunks
(any async iterator of dicts); call ``generations.aclose()`` at shutdown.
`to_response` turns a `ChatResponse` into a Starlette response for
endpoints of your own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.responses import Response
from starlette.routing import Route

from durable_sessions.aisdk import _routes

if TYPE_CHECKING:
    from starlette.requests import Request

    from durable_sessions.aisdk._routes import Respond
    from durable_sessions.aisdk.generations import DurableChatGenerations
    from durable_sessions.aisdk.responses import ChatResponse


def to_response(reply: ChatResponse) -> Response:
    """A Starlette response carrying ``reply``."""
    return Response(
        reply.content or None,
        status_code=reply.status,
        headers=reply.headers,
        media_type=reply.media_type,
    )


def chat_routes(
    generations: DurableChatGenerations, respond: Respond, *, api: str = _routes.DEFAULT_API
) -> list[Route]:
    """``POST {api}`` and ``GET {api}/{chat_id}/stream``, as the transport calls them."""

    async def start_generation(request: Request) -> Response:
        return to_response(await _routes.start(generations, respond, await request.body()))

    async def reconnect_generation(request: Request) -> Response:
        return to_response(await _routes.reconnect(generations, request.path_params["chat_id"]))

    return [
        Route(api, start_generation, methods=["POST"]),
        Route(api + "/{chat_id}/stream", reconnect_generation, methods=["GET"]),
    ]
