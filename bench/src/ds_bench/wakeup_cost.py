"""What one wake-up costs a process on this machine, by how long it slept.

A process that sleeps and is woken pays CPU for the wake-up itself, more
the longer it slept (cold caches; on a virtual machine, the exit from an
idle virtual CPU): ds-sync at a tenth of the rate wakes about as often per
event as at the full rate, but each wake-up costs several times more, and
that, not work per event, is most of its cost per event at low rates. The
probe is a bare timer sleep on an event loop, nothing else, so its figures
are the machine's, not ds-sync's.
"""

from __future__ import annotations

import asyncio
import resource

import uvloop

# Sleeps measured, and how many of each (a few seconds in all).
GAPS_MS = (1.0, 10.0, 100.0)
_ROUNDS = {1.0: 400, 10.0: 200, 100.0: 40}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _per_wakeup_us(gap_ms: float, rounds: int) -> float:
    started = _cpu_seconds()
    for _ in range(rounds):
        await asyncio.sleep(gap_ms / 1000)
    return (_cpu_seconds() - started) / rounds * 1e6


def measure() -> dict[str, float]:
    """CPU µs per wake-up after each sleep of ``GAPS_MS``, keyed by the sleep in ms (on
    uvloop, ds-sync's event loop)."""

    async def all_gaps() -> dict[str, float]:
        return {f"{gap:g}": await _per_wakeup_us(gap, _ROUNDS[gap]) for gap in GAPS_MS}

    return uvloop.run(all_gaps())


def describe(costs: dict[str, float]) -> str:
    """``a wake-up after 1 / 10 / 100 ms asleep costs 30 / 90 / 185 µs of CPU``."""
    if not costs:
        return "n/a"
    gaps = " / ".join(costs)
    cpu = " / ".join(f"{us:,.0f}" for us in costs.values())
    return f"a wake-up after {gaps} ms asleep costs {cpu} µs of CPU"
