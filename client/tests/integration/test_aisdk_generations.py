"""The AI SDK transport's server half through Envoy: generations written to durable streams,
pointers with read-only tokens for one stream, reconnects; in Litestar, Starlette and FastAPI.

The official ``createDurableChatTransport`` drives the example app in
examples/chat/tests; here the Python side is checked on its own terms.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from ds_proxy.tokens import bucket_token
from durable_sessions.aisdk import ChatRequest, DurableChatGenerations, write_chunks
from durable_sessions.aisdk.litestar import chat_handlers
from durable_sessions.aisdk.starlette import chat_routes
from durable_sessions.protocol import split_json_arrays
from fastapi import FastAPI
from litestar import Litestar
from starlette.applications import Starlette

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from sdk_stack import SdkStack


def ui_chunks(text: str) -> list[dict[str, Any]]:
    """An AI SDK UI message stream of one text part, word by word."""
    words = [word + " " for word in text.split()]
    return [
        {"type": "start", "messageId": "m1"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        *({"type": "text-delta", "id": "t1", "delta": word} for word in words),
        {"type": "text-end", "id": "t1"},
        {"type": "finish-step"},
        {"type": "finish"},
    ]


def read_token(name: str) -> str:
    return bucket_token("chat-reader", read=(name,), expires_in=300)


def generations_for(sdk_stack: SdkStack, **options: Any) -> DurableChatGenerations:
    return DurableChatGenerations(
        sdk_stack.url,
        token=sdk_stack.token,
        read_token=read_token,
        bucket=sdk_stack.new_bucket(),
        create_bucket=False,
        **options,
    )


async def read_to_the_end(url: str) -> list[dict[str, Any]]:
    """Every chunk at a read URL (its token in the query), until the stream is closed."""
    chunks: list[dict[str, Any]] = []
    offset = "-1"
    async with httpx.AsyncClient(timeout=30) as http:
        while True:
            params = (
                {"offset": offset} if offset == "-1" else {"offset": offset, "live": "long-poll"}
            )
            # params= would replace the URL's query (and its token): merge instead.
            response = await http.get(httpx.URL(url).copy_merge_params(params))
            assert response.status_code in (200, 204), response.text
            chunks += [json.loads(raw) for raw in split_json_arrays(response.content)]
            offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Closed") == "true":
                return chunks


class Gate:
    """A model that waits between chunks until told to go on."""

    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        self.chunks = chunks
        self.go = asyncio.Event()

    async def __call__(self) -> AsyncIterator[dict[str, Any]]:
        for n, chunk in enumerate(self.chunks):
            if n == 3:
                await self.go.wait()
            yield chunk


async def test_a_generation_is_pointed_at_and_read_whole(sdk_stack: SdkStack) -> None:
    generations = generations_for(sdk_stack)
    expected = ui_chunks("A durable stream is an append-only log")
    gate = Gate(expected)
    reply = await generations.start("chat-1", gate())
    assert reply.status == 201
    assert reply.body is not None
    url = reply.body["streamUrl"]
    assert reply.headers["Location"] == url
    assert reply.headers["Cache-Control"] == "no-store"
    assert reply.headers["Access-Control-Expose-Headers"] == "Location"
    path = urlsplit(url).path
    assert path.startswith(f"/v1/stream/{generations.bucket}/chat-1/")

    # In flight: a reload finds the same stream, with a fresh token.
    again = await generations.reconnect("chat-1")
    assert again.status == 200
    assert again.body is not None
    assert urlsplit(again.body["streamUrl"]).path == path
    assert again.headers["Location"] == again.body["streamUrl"]

    # The URL's token reads this stream and no other, and cannot write.
    token = parse_qs(urlsplit(url).query)["access_token"][0]
    async with httpx.AsyncClient(base_url=sdk_stack.url) as http:
        assert (
            await http.get(f"/ds/{generations.bucket}/streams", params={"access_token": token})
        ).status_code == 403
        post = await http.post(
            path, json={"type": "x"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert post.status_code == 403

    gate.go.set()
    assert await read_to_the_end(url) == expected
    await generations.aclose()
    assert (await generations.reconnect("chat-1")).status == 204
    assert (await generations.reconnect("never-seen")).status == 204


async def test_await_mode_answers_when_written(sdk_stack: SdkStack) -> None:
    generations = generations_for(sdk_stack)
    chunks = ui_chunks("short")

    async def model() -> AsyncIterator[dict[str, Any]]:
        for chunk in chunks:
            yield chunk

    reply = await generations.start("c2", model(), mode="await")
    assert reply.status == 200
    assert reply.body is not None
    assert reply.body["finalOffset"]
    assert await read_to_the_end(reply.body["streamUrl"]) == chunks


async def test_a_failing_model_ends_its_stream_with_an_error_chunk(sdk_stack: SdkStack) -> None:
    generations = generations_for(sdk_stack, error_text="Sorry.")

    async def model() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "start"}
        raise RuntimeError("secret details stay in the server's log")

    reply = await generations.start("c3", model())
    assert reply.body is not None
    assert await read_to_the_end(reply.body["streamUrl"]) == [
        {"type": "start"},
        {"type": "error", "errorText": "Sorry."},
    ]
    await generations.aclose()
    assert (await generations.reconnect("c3")).status == 204


def litestar_app(generations: DurableChatGenerations, respond: Callable[..., Any]) -> Any:
    return Litestar(
        route_handlers=chat_handlers(generations, respond), on_shutdown=[generations.aclose]
    )


def starlette_app(generations: DurableChatGenerations, respond: Callable[..., Any]) -> Any:
    return Starlette(routes=chat_routes(generations, respond))


def fastapi_app(generations: DurableChatGenerations, respond: Callable[..., Any]) -> Any:
    app = FastAPI()
    app.router.routes.extend(chat_routes(generations, respond))
    return app


@pytest.mark.parametrize("make_app", [litestar_app, starlette_app, fastapi_app])
async def test_the_framework_adapters(sdk_stack: SdkStack, make_app: Callable[..., Any]) -> None:
    generations = generations_for(sdk_stack)
    asked: list[ChatRequest] = []

    async def respond(chat: ChatRequest) -> AsyncIterator[dict[str, Any]]:
        asked.append(chat)
        for chunk in ui_chunks(f"You said {chat.last_user_text()}"):
            yield chunk

    body = {
        "id": "c4",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        "trigger": "submit-message",
        "messageId": None,
    }
    transport = httpx.ASGITransport(app=make_app(generations, respond))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as app:
        started = await app.post("/api/chat", json=body)
        assert started.status_code == 201, started.text
        assert started.headers["location"] == started.json()["streamUrl"]
        assert await read_to_the_end(started.json()["streamUrl"]) == ui_chunks("You said hi")
        await generations.aclose()
        nothing = await app.get("/api/chat/c4/stream")
        assert (nothing.status_code, nothing.content) == (204, b"")
        for bad in (b"{", json.dumps({**body, "id": "a b"}).encode()):
            refused = await app.post("/api/chat", content=bad)
            assert refused.status_code == 400
            assert "error" in refused.json()
        assert (await app.get("/api/chat/..x/stream")).status_code == 400
    assert [chat.id for chat in asked] == ["c4"]


async def test_a_cancelled_generation_still_ends_its_stream(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    started = asyncio.Event()

    async def model() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "start"}
        started.set()
        await asyncio.Event().wait()  # a model that never finishes
        yield {"type": "finish"}

    writer = asyncio.create_task(write_chunks(model(), url, token=sdk_stack.token))
    await started.wait()
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    reader = f"{url}?access_token={sdk_stack.token}"
    assert await read_to_the_end(reader) == [
        {"type": "start"},
        {"type": "error", "errorText": "The generation failed."},
    ]
