"""The producers benchmark's table: medians per scenario, and the ratio Python / TypeScript."""

from __future__ import annotations

from ds_bench.producers import Run, markdown


def _run(client: str, rate: float, rep: int) -> Run:
    return Run(client, 16, 100, rep, rate, client_cpu_s=1.0, server_cpu_s=1.0, background=0.1)


def test_medians_and_ratio() -> None:
    runs = [
        _run("python", 100.0, 0),
        _run("python", 300.0, 1),
        _run("python", 200.0, 2),
        _run("typescript", 100.0, 0),
        _run("typescript", 100.0, 1),
        _run("typescript", 400.0, 2),
    ]
    table = markdown(runs, [16], [100])
    assert "| 16 | 100 B | 200 | 100 | 2.00 | 10% |" in table.splitlines()
