"""Tokens through the real gateway: refreshed after a 401, a file re-read when replaced."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

import pytest
from ds_proxy.tokens import bucket_token
from durable_sessions import (
    AsyncIdempotentProducer,
    Bootstrapped,
    CallableToken,
    FileToken,
    IdempotentProducer,
    StateFollower,
    Update,
    bootstrap,
    follow,
    head,
)
from durable_sessions.state import change
from durable_streams import DurableStreamError

if TYPE_CHECKING:
    from pathlib import Path

    from sdk_stack import SdkStack


class Rotating(CallableToken):
    """Hands out a token the gateway refuses until a 401 asks for a fresh one."""

    def __init__(self, valid: str) -> None:
        self.valid = valid
        self.current = "not-a-jwt"
        self.refreshes = 0
        super().__init__(lambda: self.current)

    def refresh(self, rejected: str) -> str:
        self.refreshes += 1
        self.current = self.valid
        return self.current

    async def arefresh(self, rejected: str) -> str:
        return self.refresh(rejected)


async def test_a_401_gets_a_fresh_token_for_every_kind_of_call(sdk_stack: SdkStack) -> None:
    bucket = sdk_stack.new_bucket()
    url = sdk_stack.new_stream(bucket)
    ds_url = url.replace("/v1/stream/", "/ds/")

    token = Rotating(sdk_stack.token)
    async with AsyncIdempotentProducer(url, "p", token=token) as producer:
        producer.append(change("item", "1", 1))
    assert token.refreshes == 1

    token = Rotating(sdk_stack.token)
    assert (await head(url, token=token)).is_json
    assert token.refreshes == 1

    token = Rotating(sdk_stack.token)
    assert len((await bootstrap(ds_url, token=token)).messages) == 1
    assert token.refreshes == 1

    for live in ("sse", "long-poll"):
        token = Rotating(sdk_stack.token)
        events = follow(ds_url, offset="-1", live=live, token=token)  # type: ignore[arg-type]
        first = await asyncio.wait_for(anext(events), 20)
        assert isinstance(first, Update | Bootstrapped)
        await events.aclose()
        assert token.refreshes >= 1, live

    token = Rotating(sdk_stack.token)
    async with StateFollower(url, token=token) as follower:
        async for batch in follower:
            if batch.up_to_date:
                break
    assert follower.state.to_dict() == {"item": {"1": 1}}


def test_a_token_file_is_reread_when_replaced(sdk_stack: SdkStack, tmp_path: Path) -> None:
    bucket = sdk_stack.new_bucket()
    url = sdk_stack.new_stream(bucket)
    path = tmp_path / "token"
    path.write_text(sdk_stack.token)
    errors: list[Exception] = []
    with IdempotentProducer(url, "p", token=FileToken(path), on_error=errors.append) as producer:
        producer.append({"n": 1})
        producer.flush()
        # The kubelet's way: the new token is renamed over the old one. This
        # one may only read: the gateway refuses the write, so it was sent.
        fresh = tmp_path / "token.new"
        fresh.write_text(bucket_token("reader", read=(bucket,), write=()))
        os.replace(fresh, path)
        producer.append({"n": 2})
        with pytest.raises(DurableStreamError) as refused:
            producer.flush()
        assert refused.value.status == 403
    assert sdk_stack.read_json(url) == [{"n": 1}]
