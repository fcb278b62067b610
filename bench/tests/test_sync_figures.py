"""``LagFigures.measured``: a lag scenario's figures from its lags and its window."""

from __future__ import annotations

from ds_bench.sync_figures import LagFigures


class _Window:
    background = 0.25

    def us_per(self, events: int) -> float:
        return 1000.0 / events

    def wakeups_per(self, events: int) -> float:
        return 300 / events


def test_measured_takes_the_order_statistics_and_the_windows_share() -> None:
    lags = [float(n) for n in range(1, 101)]
    figures = LagFigures.measured("lag", lags, _Window(), streams=4, carried=200, rate=50.0)
    assert figures == LagFigures(
        scenario="lag",
        streams=4,
        rate=50.0,
        achieved_rate=0.0,
        events=100,
        p50_ms=50.5,
        p99_ms=99.0,
        max_ms=100.0,
        background=0.25,
        sync_cpu_us_per_event=5.0,
        sync_wakeups_per_event=1.5,
    )
