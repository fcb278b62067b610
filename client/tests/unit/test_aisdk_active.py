"""The in-memory record of which generation of a chat is in flight."""

from __future__ import annotations

from durable_sessions.aisdk import MemoryActiveGenerations


async def test_a_newer_generation_is_not_forgotten_when_an_older_one_ends() -> None:
    active = MemoryActiveGenerations()
    assert await active.current("c") is None
    await active.begin("c", "g/c/1")
    await active.begin("c", "g/c/2")
    await active.end("c", "g/c/1")
    assert await active.current("c") == "g/c/2"
    await active.end("c", "g/c/2")
    assert await active.current("c") is None
    await active.end("c", "g/c/2")  # twice: nothing to do
