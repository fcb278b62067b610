"""``ds-bench sync``'s figures: what a lag or throughput scenario measured, either direction."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Protocol


class Window(Protocol):
    """What a measured window reports (``ds_bench.sync_stack.Window``)."""

    @property
    def background(self) -> float: ...

    def us_per(self, events: int) -> float: ...

    def wakeups_per(self, events: int) -> float: ...


@dataclass(frozen=True, slots=True)
class LagFigures:
    scenario: str
    streams: int
    rate: float  # events/s asked for
    achieved_rate: float
    events: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    background: float | None = None  # share of the machine other work used meanwhile
    sync_cpu_us_per_event: float | None = None  # ds-sync's CPU time per event
    sync_wakeups_per_event: float | None = None  # times ds-sync slept and was woken, per event

    @classmethod
    def measured(
        cls,
        scenario: str,
        lags_ms: list[float],
        window: Window,
        *,
        streams: int,
        carried: int,
        rate: float = 0.0,
        achieved_rate: float = 0.0,
    ) -> LagFigures:
        """The figures of ``lags_ms``, measured in ``window`` while ds-sync carried
        ``carried`` events (what its CPU time is divided by)."""
        return cls(
            scenario=scenario,
            streams=streams,
            rate=rate,
            achieved_rate=achieved_rate,
            events=len(lags_ms),
            p50_ms=statistics.median(lags_ms),
            p99_ms=percentile(lags_ms, 0.99),
            max_ms=max(lags_ms),
            background=window.background,
            sync_cpu_us_per_event=window.us_per(carried),
            sync_wakeups_per_event=window.wakeups_per(carried),
        )


@dataclass(frozen=True, slots=True)
class ThroughputFigures:
    scenario: str
    streams: int
    events: int
    seconds: float  # first commit to last commit
    events_per_sec: float
    transactions: int
    background: float | None = None
    sync_cpu_us_per_event: float | None = None


def percentile(values: list[float], fraction: float) -> float:
    """The value at ``fraction`` of the sorted values (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]
