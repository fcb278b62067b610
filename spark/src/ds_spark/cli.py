"""``ds-spark``: session analytics and snapshots on Spark.

``ds-spark analytics`` computes the session analytics (the session contract's
§5, docs/reference/session-contract.md) into Parquet, an HTML report
and Postgres; ``ds-spark snapshots`` folds sessions per §6 and publishes
their snapshots. Failures end with one line saying what went wrong.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from datetime import date
from pathlib import Path

from ds_spark.errors import one_line
from ds_spark.settings import load_settings

log = logging.getLogger("ds_spark")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ds-spark", description=__doc__)
    parser.add_argument("--master", help="Spark master (default: DS_SPARK__MASTER or local[*])")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of failures")
    commands = parser.add_subparsers(dest="command", required=True)
    analytics = commands.add_parser("analytics", help="session analytics (session contract §5)")
    analytics.add_argument(
        "--source",
        choices=["postgres", "streams"],
        default="postgres",
        help="session_events in Postgres (the full history, results upserted there too), "
        "or the streams' retained messages (Parquet and report only)",
    )
    analytics.add_argument(
        "--since",
        type=_day,
        help="recompute only the sessions with rows received on or after this day "
        "(YYYY-MM-DD) and the days they belong to",
    )
    analytics.add_argument(
        "--output", type=Path, help="output directory (default: DS_SPARK__OUTPUT_DIR)"
    )
    snapshots = commands.add_parser(
        "snapshots",
        help="fold each session (session contract §6) and publish its snapshot at ds-sync's "
        "checkpoint, then verify it against session_events",
    )
    snapshots.add_argument(
        "--every",
        type=_seconds,
        metavar="SECS",
        help="run on a schedule until stopped: a run (a process, a JVM) every SECS seconds, "
        "never two at once",
    )
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day (YYYY-MM-DD)") from None


def main(argv: list[str] | None = None) -> None:
    """Run one command; exit 0 on success, 1 with one line on stderr otherwise."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    if args.command == "snapshots" and args.every:
        sys.exit(_schedule(args))
    try:
        _run(args)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if args.debug:
            raise
        print(failure_message(exc), file=sys.stderr)
        sys.exit(1)


def _run(args: argparse.Namespace) -> None:
    settings = load_settings()
    from ds_spark.spark_session import build_session

    spark = build_session(
        args.master or settings.master, f"ds-spark {args.command}", stage_log=True
    )
    try:
        if args.command == "analytics":
            from ds_spark.analytics.job import AnalyticsRun
            from ds_spark.analytics.job import main as analytics

            analytics(
                spark, settings, AnalyticsRun(args.source, args.output or settings.output_dir)
            )
        elif args.command == "snapshots":
            from ds_spark.snapshots.job import main as snapshots

            snapshots(spark, settings)
    finally:
        spark.stop()


def _schedule(args: argparse.Namespace) -> int:
    """``snapshots --every``: one run per period, each a child process; stops on a signal."""
    from ds_spark.schedule import first_delay, run_every

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    master = ["--master", args.master] if args.master else []
    argv = [sys.executable, "-m", "ds_spark", *master, "snapshots"]
    run_every(argv, args.every, stop, first_secs=first_delay(args.every))
    return 0


def failure_message(exc: BaseException) -> str:
    """The one line a failed run ends with: ds-spark's own message, wherever Spark wrapped it."""
    message = one_line(exc)
    if message is None:
        text = str(exc).strip()
        first = text.splitlines()[0] if text else ""
        message = f"unexpected error ({type(exc).__name__}): {first} (--debug shows more)"
    return f"ds-spark: {message}"


if __name__ == "__main__":
    main()
