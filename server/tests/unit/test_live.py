"""Wake-ups: Change, LiveNotifier and the per-connection IdleWait."""

from __future__ import annotations

import asyncio

from ds_server.live import Change, IdleWait, LiveNotifier, Wake

# Timer periods for these tests: short, but long enough that "not yet" holds.
TICK = 0.05


async def test_change_wakes_waiters_oldest_first() -> None:
    loop = asyncio.get_running_loop()
    change = Change()
    woken: list[int] = []
    waiters = [loop.create_future() for _ in range(3)]
    for index, waiter in enumerate(waiters):
        change.add(waiter)
        waiter.add_done_callback(lambda _, index=index: woken.append(index))
    change.fire()
    await asyncio.sleep(0)
    assert [waiter.result() for waiter in waiters] == [Wake.CHANGED] * 3
    assert woken == [0, 1, 2]


async def test_change_added_after_firing_resolves_at_once() -> None:
    change = Change()
    change.fire()
    waiter: asyncio.Future[Wake] = asyncio.get_running_loop().create_future()
    change.add(waiter)
    assert waiter.result() is Wake.CHANGED


async def test_discarded_waiter_is_not_woken() -> None:
    change = Change()
    waiter: asyncio.Future[Wake] = asyncio.get_running_loop().create_future()
    change.add(waiter)
    change.discard(waiter)
    change.fire()
    assert not waiter.done()


async def test_notify_fires_the_current_change_and_installs_a_new_one() -> None:
    live = LiveNotifier()
    first = live.next_change("s")
    assert live.next_change("s") is first
    live.notify("s")
    assert first.fired
    assert live.next_change("s") is not first


async def test_timed_out_waits_leave_no_waiters_behind() -> None:
    live = LiveNotifier()
    change = live.next_change("s")
    for _ in range(3):
        assert await live.wait(change, 0.001) is False
    assert change._waiters == {}


async def test_idle_wait_returns_on_a_change() -> None:
    live = LiveNotifier()
    idle = IdleWait(keepalive_secs=10, lifetime_secs=None)
    change = live.next_change("s")
    waiting = asyncio.ensure_future(idle.wait(change))
    await asyncio.sleep(0)
    live.notify("s")
    assert await waiting is Wake.CHANGED
    assert change._waiters == {}
    idle.close()


async def test_idle_wait_returns_when_a_keepalive_is_due() -> None:
    idle = IdleWait(keepalive_secs=TICK, lifetime_secs=None)
    change = Change()
    started = asyncio.get_running_loop().time()
    assert await idle.wait(change) is Wake.KEEPALIVE
    assert asyncio.get_running_loop().time() - started >= TICK * 0.9
    assert not idle.expired
    assert change._waiters == {}
    idle.close()


async def test_activity_postpones_the_keepalive() -> None:
    loop = asyncio.get_running_loop()
    idle = IdleWait(keepalive_secs=4 * TICK, lifetime_secs=None)
    await asyncio.sleep(3 * TICK)
    idle.active()
    marked = loop.time()
    assert await idle.wait(Change()) is Wake.KEEPALIVE
    # Due a full period after the activity, not after the start.
    assert loop.time() - marked >= 4 * TICK * 0.9
    idle.close()


async def test_idle_wait_expires_at_the_end_of_its_lifetime() -> None:
    idle = IdleWait(keepalive_secs=10, lifetime_secs=TICK)
    assert await idle.wait(Change()) is Wake.EXPIRED
    assert idle.expired
    # Once expired, a wait returns at once.
    assert await asyncio.wait_for(idle.wait(Change()), 1) is Wake.EXPIRED
    idle.close()


async def test_closed_idle_wait_arms_no_more_wake_ups() -> None:
    idle = IdleWait(keepalive_secs=TICK, lifetime_secs=TICK)
    idle.close()
    waiting = asyncio.ensure_future(idle.wait(Change()))
    await asyncio.sleep(3 * TICK)
    assert not waiting.done()
    assert not idle.expired
    waiting.cancel()
