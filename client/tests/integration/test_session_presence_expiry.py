"""A member whose process dies (SIGKILL: it can say nothing) stops showing as online and
typing once its last deadline passes, while a live member's refreshes keep it there."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from durable_sessions.sessions import (
    AsyncSessionWriter,
    load_session,
)

if TYPE_CHECKING:
    from sdk_stack import SdkStack

MEMBER = Path(__file__).with_name("session_member.py")
TTL_SECS = 2.0
# Long enough for a loaded machine; the wait ends as soon as the state changes.
PATIENCE_SECS = 60.0


async def test_a_killed_member_expires_and_a_live_one_stays(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    arguments = ["--url", url, "--token", sdk_stack.token, "--user", "bob", "--ttl", str(TTL_SECS)]
    member = await asyncio.create_subprocess_exec(
        sys.executable, str(MEMBER), *arguments, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert member.stdout is not None
        assert (await member.stdout.readline()).strip() == b"joined"
        async with AsyncSessionWriter(url, token=sdk_stack.token) as alice:
            alice.join("alice")
            await alice.flush()
            # Several lifetimes of a deadline later, bob's refreshes keep him there.
            await asyncio.sleep(3 * TTL_SECS)
            state = await load_session(url, token=sdk_stack.token)
            assert state.online() == ["alice", "bob"]
            assert state.typing() == ["bob"]

            member.kill()
            await member.wait()
            gone_by = time.monotonic() + PATIENCE_SECS
            while "bob" in (state := await load_session(url, token=sdk_stack.token)).online():
                assert time.monotonic() < gone_by, "bob still shows as online"
                await asyncio.sleep(0.25)
            assert state.typing() == []
            assert state.online() == ["alice"]
            bob = next(p for p in state.presence() if p.user == "bob")
            assert (bob.status, bob.expired) == ("online", True)
    finally:
        if member.returncode is None:
            member.kill()
            await member.wait()
    # Nobody said bob left: his last presence in the stream still says online.
    said = [
        e["value"]["status"]
        for e in sdk_stack.read_json(url)
        if (e["type"], e["key"]) == ("presence", "user:bob")
    ]
    assert set(said) == {"online"}
    assert len(said) >= 3  # refreshed
