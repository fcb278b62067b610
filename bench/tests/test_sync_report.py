"""The sync benchmark's tables: how many ds-sync processes ran, the machine's load, and
CPU per event beside every figure."""

from __future__ import annotations

from ds_bench import _machine
from ds_bench.sync_figures import LagFigures, ThroughputFigures
from ds_bench.sync_report import Results, markdown


def test_tables_name_the_processes_the_load_and_cpu_and_wakeups_per_event() -> None:
    lag = LagFigures(
        "lag, 1,000 events/s, 2 ds-sync processes",
        100,
        1000.0,
        990.0,
        100,
        5.0,
        20.0,
        30.0,
        background=0.1,
        sync_cpu_us_per_event=87.4,
        sync_wakeups_per_event=0.934,
    )
    rate = ThroughputFigures("backlog", 1, 1000, 0.05, 20_000.0, 2, 0.2, 12.0)
    text = markdown(Results([lag], [rate], [], [5.0], [], instances=2, load=_machine.load()))
    assert text.startswith("ds-sync processes: 2; machine: ")
    assert "load average" in text
    assert "| 87 | 0.93 | 10% |" in text
    assert "| 12 | 20% |" in text


def test_the_tables_say_what_waking_costs_on_the_machine() -> None:
    results = Results([], [], [], [], [], wakeup_us={"1": 28.4, "10": 93.0, "100": 176.2})
    assert (
        "What waking costs here: a wake-up after 1 / 10 / 100 ms asleep costs 28 / 93 / 176 µs "
        "of CPU." in markdown(results)
    )
    assert "What waking costs here: n/a." in markdown(Results([], [], [], [], []))
