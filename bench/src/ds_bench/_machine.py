"""CPU the rest of the machine used while a run was going on.

Other processes compete with the servers and generators for the same cores,
so every run records how busy the machine was with work that was not ours:
system-wide busy time minus this process and every child it has reaped
(servers and generators are all reaped before a run ends).
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass

import psutil


def _busy_seconds() -> float:
    t = psutil.cpu_times()
    # guest time is already counted in user on Linux.
    return float(t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0))


def _ours_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True, slots=True)
class Snapshot:
    wall: float
    busy: float
    ours: float


def snapshot() -> Snapshot:
    """The counters now; take one before a run and one after every child is reaped."""
    return Snapshot(time.perf_counter(), _busy_seconds(), _ours_seconds())


def background_share(before: Snapshot, after: Snapshot) -> float:
    """CPU used by other processes between the snapshots, as a share of all cores."""
    wall = (after.wall - before.wall) * (os.cpu_count() or 1)
    if wall <= 0:
        return 0.0
    other = (after.busy - before.busy) - (after.ours - before.ours)
    return max(0.0, other / wall)


def wait_until_quiet(threshold: float, timeout: float) -> float:
    """Wait until the machine's busy share over one second is at most ``threshold``.

    Called between runs, when none of our processes is working, so whatever
    keeps the machine busy is someone else. Gives up after ``timeout`` seconds;
    returns the last share seen.
    """
    deadline = time.perf_counter() + timeout
    while True:
        share = float(psutil.cpu_percent(interval=1.0)) / 100
        if share <= threshold or time.perf_counter() >= deadline:
            return share


def load() -> str:
    """The cores and the load averages, as ``uptime`` shows them: the machine's other work."""
    one, five, fifteen = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min)"
