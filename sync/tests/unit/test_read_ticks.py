"""``ReadTicks``: caught-up readers paused between the writer's ticks, opened together at them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, cast

from ds_sync.sessions.read_ticks import ReadTicks


@dataclass
class _Reader:
    paused: bool = False
    calls: list[str] = field(default_factory=list)
    on_resume: Any = None  # what arrives when it reads again

    def pause(self) -> None:
        self.paused = True
        self.calls.append("pause")

    def resume(self) -> None:
        self.paused = False
        self.calls.append("resume")
        if self.on_resume is not None:
            asyncio.get_running_loop().call_soon(self.on_resume)


@dataclass(eq=False)
class _State:
    reader: _Reader | None
    queued_rows: int = 0


def _ticks(limit: int = 100) -> ReadTicks:
    return ReadTicks(can_open=lambda state: cast("Any", state).queued_rows < limit)


def test_a_held_reader_is_paused_until_the_window() -> None:
    async def run() -> None:
        ticks = _ticks()
        reader = _Reader()
        state = _State(reader)
        ticks.hold(cast("Any", state))
        assert reader.paused
        assert ticks.holding
        assert ticks.holds(cast("Any", state))
        # In the window it reads what waited (a delivery), then it is paused again.
        reader.on_resume = ticks.delivered
        await ticks.window(release_if_quiet=True)
        assert reader.calls == ["pause", "resume", "pause"]
        assert reader.paused
        assert ticks.holding

    asyncio.run(run())


def test_a_quiet_window_releases_every_reader_open() -> None:
    async def run() -> None:
        ticks = _ticks()
        readers = [_Reader(), _Reader()]
        for reader in readers:
            ticks.hold(cast("Any", _State(reader)))
        await ticks.window(release_if_quiet=True)
        assert not ticks.holding
        assert all(not reader.paused for reader in readers)

    asyncio.run(run())


def test_a_quiet_window_keeps_holding_when_the_tick_has_reads_to_commit() -> None:
    async def run() -> None:
        ticks = _ticks()
        reader = _Reader()
        ticks.hold(cast("Any", _State(reader)))
        await ticks.window(release_if_quiet=False)
        assert ticks.holding
        assert reader.paused

    asyncio.run(run())


def test_a_reader_at_its_queue_limit_is_not_opened() -> None:
    async def run() -> None:
        ticks = _ticks(limit=10)
        full, room = _Reader(), _Reader(on_resume=None)
        room.on_resume = ticks.delivered
        ticks.hold(cast("Any", _State(full, queued_rows=10)))
        ticks.hold(cast("Any", _State(room, queued_rows=3)))
        await ticks.window(release_if_quiet=True)
        assert full.calls == ["pause", "pause"]  # never opened
        assert room.calls == ["pause", "resume", "pause"]

    asyncio.run(run())


def test_readers_that_ended_are_forgotten() -> None:
    async def run() -> None:
        ticks = _ticks()
        gone = _State(_Reader())
        kept_reader = _Reader()
        kept_reader.on_resume = ticks.delivered
        kept = _State(kept_reader)
        ticks.hold(cast("Any", gone))
        ticks.hold(cast("Any", kept))
        gone.reader = None  # idle, stopped or failed since
        await ticks.window(release_if_quiet=True)
        assert not ticks.holds(cast("Any", gone))
        assert ticks.holds(cast("Any", kept))
        # A state without a reader is never held.
        ticks.hold(cast("Any", gone))
        assert not ticks.holds(cast("Any", gone))

    asyncio.run(run())
