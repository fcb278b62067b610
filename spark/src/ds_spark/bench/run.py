"""``make bench-spark``: the analytics job at growing sizes, and pandas beside it.

Each measurement runs in a process of its own. The Spark job runs on
``local-cluster`` so that the driver is a process apart from the
executors: its peak resident memory (the Python driver plus the driver
JVM) is what must not grow with the events. Events come from Parquet
(synthetic, see ``synthetic``), so the figures are Spark's own work:
reading, the §5 transforms, writing Parquet and the report.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from ds_spark.bench.synthetic import write_events

DEFAULT_SIZES = (100_000, 1_000_000, 5_000_000)
DEFAULT_MASTER = "local-cluster[2,1,3072]"
DATA_DIR = Path("build/bench-spark")
RESULTS = Path("bench/results/spark.json")
CHART = Path("docs/benchmarks-spark.png")
DOC = Path("docs/benchmarks.md")
BEGIN, END = "<!-- bench-spark:begin -->", "<!-- bench-spark:end -->"


def _peak_kib(pid: int | str) -> int:
    """VmHWM (peak resident set) of a process, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _driver_jvm() -> int | None:
    """The driver JVM this process started (spark-submit), not the executors."""
    mine = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:"))
        if parent == mine and b"SparkSubmit" in cmdline:
            return int(entry.name)
    return None


def spark_job(data: Path, out: Path, master: str) -> dict[str, float]:
    """Run the analytics over ``data``; timings and the driver's peak memory."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from ds_spark.analytics.job import AnalyticsRun, load, transform
    from ds_spark.spark_session import build_session

    started = time.monotonic()
    spark = build_session(master, "ds-spark-bench", progress=False)
    spark.sparkContext.setLogLevel("ERROR")
    ready = time.monotonic()
    frames = transform(spark.read.parquet(str(data)))
    sessions = frames.sessions.count()
    load(frames, AnalyticsRun("parquet", out))
    done = time.monotonic()
    jvm = _driver_jvm()
    driver_kib = _peak_kib("self") + (_peak_kib(jvm) if jvm else 0)
    spark.stop()
    return {
        "job_s": done - ready,
        "startup_s": ready - started,
        "driver_peak_mib": driver_kib / 1024,
        "sessions": sessions,
    }


def pandas_job(data: Path) -> dict[str, float]:
    from ds_spark.bench.pandas_analytics import analytics

    started = time.monotonic()
    sessions, _ = analytics(data)
    return {
        "job_s": time.monotonic() - started,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "sessions": len(sessions),
    }


def _measure(role: str, *args: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-m", "ds_spark.bench.run", "--role", role, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    measured: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return measured


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ds-spark-bench", description=__doc__)
    parser.add_argument("--role", choices=["spark", "pandas"])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--pandas-max", type=int, default=5_000_000)
    parser.add_argument("--master", default=DEFAULT_MASTER)
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("args", nargs="*")
    options = parser.parse_args(argv)
    if options.role == "spark":
        print(json.dumps(spark_job(Path(options.args[0]), Path(options.args[1]), options.master)))
        return
    if options.role == "pandas":
        print(json.dumps(pandas_job(Path(options.args[0]))))
        return
    rows = []
    for size in [int(s) for s in options.sizes.split(",")]:
        data = DATA_DIR / f"events-{size}.parquet"
        if not data.exists():
            write_events(data, size)
        spark = _measure(
            "spark", "--master", options.master, str(data), str(DATA_DIR / f"out-{size}")
        )
        row: dict[str, float | None] = {
            "events": size,
            **{f"spark_{k}": v for k, v in spark.items()},
        }
        if size <= options.pandas_max:
            pandas = _measure("pandas", str(data))
            row.update({f"pandas_{k}": v for k, v in pandas.items()})
            assert pandas["sessions"] == spark["sessions"], "pandas and Spark disagree"
        print(json.dumps(row), flush=True)
        rows.append(row)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"master": options.master, "rows": rows}, indent=2) + "\n")
    if options.update_docs:
        _chart(rows)
        _update_doc(rows, options.master)


def _chart(rows: list[dict[str, float | None]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    events = [row["events"] for row in rows]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(events, [row["spark_job_s"] for row in rows], marker="o", label="Spark (job)")
    timed = [row for row in rows if row.get("pandas_job_s") is not None]
    left.plot(
        [r["events"] for r in timed], [r["pandas_job_s"] for r in timed], marker="s", label="pandas"
    )
    left.set(xscale="log", yscale="log", xlabel="events", ylabel="seconds", title="Wall time")
    left.legend()
    right.plot(
        events,
        [row["spark_driver_peak_mib"] for row in rows],
        marker="o",
        label="Spark driver (Python + JVM)",
    )
    right.plot(
        [r["events"] for r in timed],
        [r["pandas_peak_mib"] for r in timed],
        marker="s",
        label="pandas process",
    )
    right.set(xscale="log", xlabel="events", ylabel="MiB", title="Peak resident memory")
    right.legend()
    figure.tight_layout()
    figure.savefig(CHART, dpi=100)


def _update_doc(rows: list[dict[str, float | None]], master: str) -> None:
    def cell(value: float | None, digits: int = 1) -> str:
        return "-" if value is None else f"{value:,.{digits}f}"

    lines = [
        BEGIN,
        f"Spark on `{master}` (driver apart from two executors), pandas in one process.",
        "",
        "| events | Spark job (s) | Spark start-up (s) | Spark driver peak (MiB) "
        "| pandas (s) | pandas peak (MiB) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['events']:,} | {cell(row['spark_job_s'])} | {cell(row['spark_startup_s'])} "
            f"| {cell(row['spark_driver_peak_mib'], 0)} | {cell(row.get('pandas_job_s'))} "
            f"| {cell(row.get('pandas_peak_mib'), 0)} |"
        )
    lines += ["", f"![Spark analytics benchmark]({CHART.name})", END]
    text = DOC.read_text()
    block = "\n".join(lines)
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Spark analytics (`make bench-spark`)\n\n" + block + "\n"
    DOC.write_text(text)


if __name__ == "__main__":
    main()
