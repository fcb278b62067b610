"""The HTML report: sessions and events per day, first-token latencies, peak online.

Every chart is drawn from an aggregate Spark computed (one row per day, a
histogram's bins, a count per peak value): only those few rows reach the
driver, never the events or the per-session rows.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers and CI
import matplotlib.pyplot as plt
from pyspark.sql import functions as F

from ds_spark.analytics.columns import DAILY_COLUMNS

if TYPE_CHECKING:
    from pathlib import Path

    from matplotlib.figure import Figure
    from pyspark.sql import DataFrame, Row

    from ds_spark.analytics.pipeline import AnalyticsFrames

LATENCY_BINS = 30
DAILY_PNG = "sessions_per_day.png"
LATENCY_PNG = "first_token_latency.png"
PEAK_PNG = "peak_online.png"


@dataclass(frozen=True, slots=True)
class Summary:
    """The report's headline figures."""

    sessions: int
    events: int
    days: int
    latencies: int


def write_report(frames: AnalyticsFrames, directory: Path) -> Path:
    """Charts as PNGs and ``report.html`` beside them, in ``directory``; the page's path."""
    directory.mkdir(parents=True, exist_ok=True)
    daily = frames.daily.orderBy("day").collect()  # one row per day
    peaks = frames.sessions.groupBy("peak_online").count().orderBy("peak_online").collect()
    totals = frames.sessions.agg(F.count(F.lit(1)).alias("n"), F.sum("events").alias("e")).first()
    edges, counts = _histogram(frames.latencies)
    summary = Summary(
        sessions=int(totals["n"]) if totals else 0,
        events=int(totals["e"] or 0) if totals else 0,
        days=len(daily),
        latencies=sum(counts),
    )

    figure, left = plt.subplots(figsize=(8, 4))
    days = [str(row["day"]) for row in daily]
    left.bar(days, [row["sessions"] for row in daily], color="tab:blue", label="sessions")
    left.set_ylabel("sessions")
    right = left.twinx()
    right.plot(days, [row["events"] for row in daily], color="tab:orange", marker="o")
    right.set_ylabel("events")
    left.set_title("Sessions (bars) and events (line) per UTC day of first event")
    figure.autofmt_xdate()
    _save(figure, directory / DAILY_PNG)

    figure, axes = plt.subplots(figsize=(8, 4))
    if counts:
        axes.stairs(counts, edges, fill=True)
    axes.set_xlabel("first-token latency (ms)")
    axes.set_ylabel("user messages")
    axes.set_title("First-token latency")
    _save(figure, directory / LATENCY_PNG)

    figure, axes = plt.subplots(figsize=(8, 4))
    axes.bar([row["peak_online"] for row in peaks], [row["count"] for row in peaks])
    axes.set_xlabel("peak online participants")
    axes.set_ylabel("sessions")
    axes.set_title("Peak online per session")
    _save(figure, directory / PEAK_PNG)

    page = directory / "report.html"
    page.write_text(_page(summary, daily), encoding="utf-8")
    return page


def _histogram(latencies: DataFrame) -> tuple[list[float], list[int]]:
    """Bin edges and counts of the latencies, computed by the executors."""
    values = latencies.select("latency_ms").rdd.map(lambda row: float(row[0]))
    if values.isEmpty():
        return [], []
    edges, counts = values.histogram(LATENCY_BINS)
    return [float(edge) for edge in edges], [int(count) for count in counts]


def _save(figure: Figure, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _page(summary: Summary, daily: list[Row]) -> str:
    rows = "\n".join(
        "<tr>"
        + "".join(f"<td>{html.escape(_cell(row[name]))}</td>" for name in DAILY_COLUMNS)
        + "</tr>"
        for row in daily
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Session analytics</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:.2em .8em;text-align:right}}</style>
</head><body>
<h1>Session analytics</h1>
<p>{summary.sessions} sessions, {summary.events} events over {summary.days} days;
{summary.latencies} first-token latencies.</p>
<h2>Sessions and events per day</h2><img src="{DAILY_PNG}" alt="sessions and events per day">
<table><tr><th>day</th><th>sessions</th><th>events</th><th>participants</th>
<th>latency p50 (ms)</th><th>latency p95 (ms)</th></tr>
{rows}
</table>
<h2>First-token latency</h2><img src="{LATENCY_PNG}" alt="first-token latency distribution">
<h2>Peak online per session</h2><img src="{PEAK_PNG}" alt="peak online per session">
</body></html>
"""


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)
