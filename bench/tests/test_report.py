from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from ds_bench._generators import Usage
from ds_bench.compare import Run
from ds_bench.model import Metric, Sample, Scenario
from ds_bench.report import (
    DOCS_END,
    DOCS_START,
    Row,
    cpu_shares,
    load,
    markdown,
    ratio_text,
    summarize,
    to_json,
    update_docs,
)

if TYPE_CHECKING:
    from pathlib import Path

RATE = Metric("rate", "rate", "msg/s", "throughput")
P99 = Metric("p99", "p99", "ms", "latency", absolute_max=50.0)


def _scenario() -> Scenario:
    def run(*_: object) -> Sample:
        raise AssertionError("not run")

    return Scenario("s", "S", (RATE, P99), run)


def _run(impl: str, repetition: int, rate: float, p99: float) -> Run:
    sample = Sample({"rate": rate, "p99": p99}, Usage(1.0, 10.0), 4.0)
    return Run("s", impl, repetition, impl, sample, background=0.02)  # type: ignore[arg-type]


def test_row_ratio_and_targets() -> None:
    assert Row("s", RATE, [2.0, 4.0, 3.0], [1.0, 2.0, 3.0]).ratio == pytest.approx(1.5)
    assert Row("s", RATE, [2.0], [2.0]).met is True
    assert Row("s", RATE, [1.9], [2.0]).met is False
    assert Row("s", P99, [40.0], [45.0]).met is True
    # Better than the reference but over the absolute bound.
    assert Row("s", P99, [60.0], [80.0]).met is False
    assert Row("s", RATE, [], [1.0]).ratio is None
    assert Row("s", RATE, [], [1.0]).met is None


def test_a_figure_not_compared_with_node_has_only_its_bound() -> None:
    within = Metric("r", "ratio", "ratio", "latency", absolute_max=1.10, versus_node=False)
    assert Row("s", within, [1.05], [0.5]).ratio is None
    assert Row("s", within, [1.05], [0.5]).met is True
    assert Row("s", within, [1.2], [3.0]).met is False
    assert Row("s", within, [1.05], [0.5]).target == "≤ 1.1"
    shown = Metric("e", "envoy", "KiB", "memory", versus_node=False)
    assert Row("s", shown, [40.0], [41.0]).met is None
    assert Row("s", shown, [40.0], [41.0]).target == "—"


def test_summarize_and_tables() -> None:
    runs = [
        _run("ds", 0, 100.0, 10.0),
        _run("node", 0, 50.0, 20.0),
        _run("node", 1, 70.0, 30.0),
        _run("ds", 1, 120.0, 12.0),
        Run("s", "ds", 2, "ds", None, "RuntimeError: boom"),
    ]
    rows = summarize([_scenario()], runs)
    assert [(r.metric.key, r.ds_median, r.node_median) for r in rows] == [
        ("rate", 110.0, 60.0),
        ("p99", 11.0, 25.0),
    ]
    cpu = cpu_shares([_scenario()], runs, cores=2)
    assert cpu[0].generator == pytest.approx(0.05)
    assert cpu[0].server == pytest.approx(0.2)
    meta = {
        "repetitions": 2,
        "timestamp": "now",
        "cores": 2,
        "cpu": "cpu",
        "ds_server_revision": "abc",
        "durable_backend": "sqlite",
        "node_server": "0.3.7",
        "node": "v20",
        "failures": ["s / ds / repetition 3: RuntimeError: boom"],
    }
    table = markdown(rows, cpu, meta)
    assert "| s | rate | msg/s | 110.0 | 60.0 | 1.83\N{MULTIPLICATION SIGN} |" in table
    assert "Failed runs" in table
    payload = json.loads(to_json(rows, cpu, runs, meta))
    assert payload["metrics"][0]["ratio"] == pytest.approx(110 / 60)
    assert payload["runs"][-1]["error"] == "RuntimeError: boom"
    # A results file renders back to the same table.
    loaded = load(payload, {"rate": RATE, "p99": P99})
    assert markdown(*loaded) == table


def test_ratio_text_never_rounds_a_miss_to_one() -> None:
    assert ratio_text(0.8834) == "0.88\N{MULTIPLICATION SIGN}"
    assert ratio_text(0.997) == "0.997\N{MULTIPLICATION SIGN}"
    assert ratio_text(1.0) == "1.00\N{MULTIPLICATION SIGN}"
    assert ratio_text(None) == "—"


def test_update_docs_replaces_only_the_block(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# B\n\nmethod\n\n{DOCS_START}\nold\n{DOCS_END}\n\nafter\n")
    chart = tmp_path / "run.png"
    chart.write_bytes(b"png")
    update_docs(page, "| new |", chart, "bench/results/run.json")
    text = page.read_text()
    assert "old" not in text
    assert "| new |" in text
    assert "![ds-server relative to the Node reference](benchmarks.png)" in text
    assert text.startswith("# B\n\nmethod\n")
    assert text.endswith("\n\nafter\n")
    assert (tmp_path / "benchmarks.png").read_bytes() == b"png"
