"""The metrics-cost summary: medians per side, and the verdict against the 5 % target."""

from __future__ import annotations

from ds_bench.metrics_cost import PostRun, markdown, summary


def run(side: str, rate: float, cpu_us: float, background: float = 0.1) -> PostRun:
    return PostRun(side, 0, rate, 10.0, rate * 10 * cpu_us / 1e6, cpu_us, background)


def test_summary_takes_medians_per_side() -> None:
    runs = [
        run("on", 980, 51),
        run("off", 1000, 50),
        run("on", 500, 80),  # a disturbed run: the median ignores it
        run("off", 1010, 49),
        run("on", 990, 50),
        run("off", 400, 90, background=0.7),
    ]
    figures = summary(runs)
    assert figures["on_msgs_per_s"] == 980
    assert figures["off_msgs_per_s"] == 1000
    assert round(figures["cost"], 3) == 0.02
    assert figures["on_cpu_us_per_request"] == 51
    assert figures["off_cpu_us_per_request"] == 50
    assert figures["max_background"] == 0.7


def test_markdown_says_whether_the_target_is_met() -> None:
    figures = {
        **summary([run("on", 900, 60), run("off", 1000, 50)]),
        "on_append_cpu_us": 12.0,
        "off_append_cpu_us": 11.0,
    }
    table = markdown(figures, 1)
    assert "OUTSIDE the 5 % target" in table
    assert "+20.0 % server CPU per request" in table
    within = markdown({**figures, **summary([run("on", 990, 50), run("off", 1000, 50)])}, 1)
    assert "within the 5 % target" in within
