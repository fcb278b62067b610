"""``ds-bench sync``'s figures: what a lag or throughput scenario measured, either direction."""

from __future__ import annotations

from dataclasses import dataclass


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
