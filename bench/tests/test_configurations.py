"""ds-server's configurations in a comparison: which servers run, and how each is compared."""

from __future__ import annotations

from pathlib import Path

import pytest
from ds_bench._generators import Usage
from ds_bench.compare import Run, Side, sides
from ds_bench.configurations import CONFIGURATIONS, select
from ds_bench.model import Metric, Sample, Scenario
from ds_bench.report import cpu_shares, markdown, ratio_summary, summarize
from ds_bench.throughput import wrk_script

RATE = Metric("rate", "rate", "msg/s", "throughput")


def test_select_keeps_the_order_given_and_rejects_unknown_names() -> None:
    assert [c.name for c in select("dev,default")] == ["dev", "default"]
    with pytest.raises(ValueError, match="unknown configuration 'prod'"):
        select("default,prod")


def test_what_each_configuration_runs() -> None:
    default, image, dev = CONFIGURATIONS["default"], CONFIGURATIONS["image"], CONFIGURATIONS["dev"]
    # Out of the box: no flag, no setting.
    assert (default.compiled, default.argv, default.env, default.gateway) == (False, (), {}, False)
    assert image.compiled
    assert "DS_LOG__REQUESTS" not in image.env
    assert (dev.compiled, dev.argv, dev.env["DS_AUTH__MODE"], dev.gateway) == (
        False,
        ("--log-level", "info"),
        "gateway",
        True,
    )
    assert CONFIGURATIONS["tuned"].tuned
    assert not any(c.tuned for c in (default, image, dev, CONFIGURATIONS["compose"]))


def test_the_build_is_chosen_by_the_server_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    compiled = Path("/builds/compiled")
    assert "PYTHONPATH" not in CONFIGURATIONS["default"].server_env(compiled)
    assert CONFIGURATIONS["image"].server_env(compiled)["PYTHONPATH"] == str(compiled)


def test_node_is_reached_as_each_configuration_is() -> None:
    assert sides(tuple(select("default,image"))) == [
        Side("ds", "default", False),
        Side("ds", "image", False),
        Side("node", "", False),
    ]
    assert sides(tuple(select("dev"))) == [Side("ds", "dev", True), Side("node", "", True)]
    assert len(sides(tuple(select("default,dev")))) == 4


def test_each_configuration_is_compared_with_its_own_node_runs() -> None:
    def run(impl: str, config: str, route: str, rate: float) -> Run:
        sample = Sample({"rate": rate}, Usage(1.0, 10.0), 4.0)
        return Run("s", impl, 0, impl, sample, config=config, route=route)  # type: ignore[arg-type]

    def never(*_: object) -> Sample:
        raise AssertionError("not run")

    scenario = Scenario("s", "S", (RATE,), never)
    runs = [
        run("ds", "default", "direct", 120.0),
        run("ds", "dev", "gateway", 30.0),
        run("node", "", "direct", 100.0),
        run("node", "", "gateway", 20.0),
    ]
    rows = summarize([scenario], runs)
    assert [(r.config, r.ratio) for r in rows] == [("default", 1.2), ("dev", 1.5)]
    meta = {
        "repetitions": 1,
        "timestamp": "now",
        "cores": 2,
        "cpu": "cpu",
        "ds_server_revision": "abc",
        "durable_backend": "sqlite",
        "node_server": "0.3.7",
        "node": "v20",
        "configurations": {
            "default": {"description": "as installed", "route": "direct"},
            "dev": {"description": "make dev", "route": "gateway"},
        },
    }
    table = markdown(rows, cpu_shares([scenario], runs, cores=2), meta)
    assert "| s | default | rate | msg/s | 120.0 | 100.0 | 1.20\N{MULTIPLICATION SIGN} |" in table
    assert "| s | dev | rate | msg/s | 30.0 | 20.0 | 1.50\N{MULTIPLICATION SIGN} |" in table
    assert "- `dev`: make dev. Node behind the same Envoy." in table
    summary = ratio_summary(rows)
    assert "default" in summary
    assert "1.50\N{MULTIPLICATION SIGN}" in summary


def test_behind_the_gateway_wrk_sends_the_token() -> None:
    assert "Authorization" not in wrk_script(100)
    assert 'wrk.headers["Authorization"] = "Bearer abc"' in wrk_script(100, "abc")
