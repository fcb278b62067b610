"""Signal behaves as asyncio.Event does for uvicorn's flow control and request bodies."""

from __future__ import annotations

import asyncio

from ds_server.connection_signals import LeanFlowControl, Signal


async def test_wait_returns_at_once_when_set_and_waits_when_clear() -> None:
    signal = Signal()
    assert not signal.is_set()
    signal.set()
    assert await asyncio.wait_for(signal.wait(), 1) is True
    signal.clear()
    waiter = asyncio.ensure_future(signal.wait())
    await asyncio.sleep(0)
    assert not waiter.done()
    signal.set()
    assert await asyncio.wait_for(waiter, 1) is True


async def test_every_waiter_wakes() -> None:
    signal = Signal()
    waiters = [asyncio.ensure_future(signal.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    signal.set()
    assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [True, True, True]


async def test_a_cancelled_waiter_is_forgotten() -> None:
    signal = Signal()
    waiter = asyncio.ensure_future(signal.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert not signal._waiters
    signal.set()  # nothing left to wake, and no error


async def test_flow_control_drains_once_writing_resumes() -> None:
    flow = LeanFlowControl(None)  # type: ignore[arg-type]  # the transport isn't used for writes
    await asyncio.wait_for(flow.drain(), 1)
    flow.pause_writing()
    assert flow.write_paused
    drain = asyncio.ensure_future(flow.drain())
    await asyncio.sleep(0)
    assert not drain.done()
    flow.resume_writing()
    await asyncio.wait_for(drain, 1)
