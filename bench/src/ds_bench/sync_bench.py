"""``ds-bench sync``: stream → Postgres lag and throughput of ds-sync (``make bench-sync``).

Real processes on loopback: ds-server (memory backend, so the server is not
what is measured), an embedded Postgres 18 with its defaults (fsync on,
synchronous commit) plus ``track_commit_timestamp=on``, and ``ds-sync`` as
it ships. Lag is measured from the producer's acknowledged append to the
commit time Postgres recorded for the transaction that inserted the row
(``pg_xact_commit_timestamp``), both on the same clock.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import httpx
import msgspec
import psycopg

from ds_bench import _machine, sync_load, sync_report, sync_tables, wakeup_cost
from ds_bench.sync_figures import LagFigures, ThroughputFigures
from ds_bench.sync_stack import Stack, Window, stack

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

_WAIT_SECS = 300.0


def _count(database: str) -> int:
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT count(*) FROM session_events").fetchone()
    return int(row[0]) if row else 0


def _wait_rows(database: str, expected: int) -> None:
    deadline = time.monotonic() + _WAIT_SECS
    while _count(database) < expected:
        if time.monotonic() > deadline:
            raise RuntimeError(f"ds-sync committed {_count(database)} of {expected} rows")
        time.sleep(0.1)


def _commit_times(database: str) -> dict[str, float]:
    """Event id -> commit time (epoch seconds) of the transaction that inserted its row."""
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT payload->'value'->>'id', "
            "extract(epoch FROM pg_xact_commit_timestamp(xmin))::float8 FROM session_events"
        ).fetchall()
    return {str(event_id): float(at) for event_id, at in rows}


def _lags(acked: list[sync_load.Acked], committed: dict[str, float]) -> list[float]:
    return [(committed[a.event_id] - a.acked_at) * 1000 for a in acked]


def lag(
    stack: Stack, streams: int, rate: float, seconds: float, profile: Path | None = None
) -> tuple[LagFigures, list[float]]:
    """Paced appends over ``streams`` streams; ack → commit lag of every event."""
    database, bucket, urls = stack.scenario(streams)
    with stack.syncs(database, f"{bucket}/*") as sync:
        # Every stream gets a first event, so every reader is live when timing starts.
        for url in urls:
            httpx.post(url, content=b'[{"type":"warm-up","key":"w"}]', headers=sync_load.JSON)
        _wait_rows(database, len(urls))
        with Window(sync, profile) as window:
            started = time.perf_counter()
            acked = asyncio.run(sync_load.paced(urls, rate, seconds))
            achieved = len(acked) / (time.perf_counter() - started)
            _wait_rows(database, len(urls) + len(acked))
    values = _lags(acked, _commit_times(database))
    figures = LagFigures.measured(
        f"lag, {rate:,.0f} events/s over {streams} streams{stack.label}",
        values,
        window,
        streams=streams,
        carried=len(acked),
        rate=rate,
        achieved_rate=achieved,
    )
    return figures, values


def pickup(stack: Stack, count: int) -> tuple[LagFigures, LagFigures]:
    """Lag of the first event of a new stream, and of an event to a stream idle past idle_secs."""
    database, bucket, _ = stack.scenario(0)
    base = f"{stack.server.url}/v1/stream/{bucket}"
    new: list[sync_load.Acked] = []
    woken: list[sync_load.Acked] = []
    with stack.syncs(database, f"{bucket}/*", idle_secs="1") as sync:
        with Window(sync) as first:
            for n in range(count):
                url = f"{base}/n{n}"
                httpx.put(url, headers=sync_load.JSON)
                new.append(_append_one(url, f"new{n}"))
                _wait_rows(database, n + 1)
        time.sleep(2.0)  # every reader is idle now and has closed its connection
        with Window(sync) as again:
            for n in range(count):
                woken.append(_append_one(f"{base}/n{n}", f"woken{n}"))
                _wait_rows(database, count + n + 1)
    committed = _commit_times(database)
    return _single(f"first event of a new stream{stack.label}", new, committed, first), _single(
        f"event on a stream idle for 2 s (no open connection){stack.label}", woken, committed, again
    )


def _append_one(url: str, event_id: str) -> sync_load.Acked:
    body = msgspec.json.encode(sync_load.event(event_id, 0))
    response = httpx.post(url, content=body, headers=sync_load.JSON)
    response.raise_for_status()
    return sync_load.Acked(event_id, time.time())


def _single(
    scenario: str, acked: list[sync_load.Acked], committed: dict[str, float], window: Window
) -> LagFigures:
    return LagFigures.measured(
        scenario, _lags(acked, committed), window, streams=len(acked), carried=len(acked)
    )


def throughput(stack: Stack, streams: int, events: int) -> ThroughputFigures:
    """A backlog of ``events`` over ``streams`` streams, drained by a fresh ds-sync."""
    database, bucket, urls = stack.scenario(streams)
    total = asyncio.run(sync_load.backlog(urls, events // streams))
    # A backlog is there from the start: the processes divide it while they drain it.
    with stack.syncs(database, f"{bucket}/*", divided=False) as sync:
        # Inside: ds-sync's own CPU must be counted while it is still running; from each
        # process's readiness, as the first drains while the next starts.
        with Window(sync, since_ready=True) as window:
            _wait_rows(database, total)
        transactions = int(sync.metric("ds_sync_transactions_total"))
    times = _commit_times(database).values()
    seconds = max(times) - min(times)
    return ThroughputFigures(
        scenario=f"backlog of {total:,} events over {streams} stream{'s' * (streams > 1)}"
        f"{stack.label}",
        streams=streams,
        events=total,
        seconds=seconds,
        events_per_sec=total / seconds if seconds > 0 else float("inf"),
        transactions=transactions,
        background=window.background,
        sync_cpu_us_per_event=window.us_per(total),
    )


SCENARIOS = ("lag", "pickup", "throughput", "tables")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``sync`` subcommand's options."""
    parser = sub.add_parser(
        "sync", help="ds-sync: stream → Postgres lag and throughput, Postgres → stream lag"
    )
    parser.add_argument("--rate", type=float, default=1000.0, help="events/s in the lag run")
    parser.add_argument("--lag-streams", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the lag run")
    parser.add_argument("--events", type=int, default=200_000, help="backlog per throughput run")
    parser.add_argument("--pickups", type=int, default=20, help="new and idle streams measured")
    parser.add_argument(
        "--table-rate", type=float, default=1000.0, help="changes/s to items (Postgres → stream)"
    )
    parser.add_argument(
        "--table-seconds", type=float, default=30.0, help="length of the Postgres → stream run"
    )
    parser.add_argument(
        "--scenarios",
        default=",".join(SCENARIOS),
        help=f"comma-separated, of {', '.join(SCENARIOS)}",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="attach py-spy to ds-sync during the lag runs of both directions; print the top "
        "of each profile and keep the raw stacks beside the results",
    )
    parser.add_argument(
        "--instances",
        type=int,
        default=1,
        help="ds-sync processes sharing the work in every scenario (one consumer group: shards "
        "of the session streams, one mirror per table and standbys); CPU is their sum",
    )
    parser.add_argument(
        "--quiet",
        type=float,
        default=0.25,
        help="before each scenario, wait (up to a minute) until other work uses at most this "
        "share of the machine",
    )


def run(args: argparse.Namespace, out_dir: Path) -> None:
    """The scenarios asked for; print the tables and write JSON, Markdown and PNG results."""
    chosen = {name.strip() for name in args.scenarios.split(",") if name.strip()}
    unknown = chosen - set(SCENARIOS)
    if unknown:
        raise SystemExit(f"ds-bench sync: unknown scenarios {', '.join(sorted(unknown))}")

    def settle(what: str) -> None:
        share = _machine.wait_until_quiet(args.quiet, timeout=60)
        print(f"{what} (other work: {share:.0%} of the machine) ...", flush=True)

    lags: list[LagFigures] = []
    rates: list[ThroughputFigures] = []
    tables: list[LagFigures] = []
    values: list[float] = []
    table_values: list[float] = []
    stamp = time.strftime("%Y%m%dT%H%M%S")

    def profile(name: str) -> Path | None:
        return out_dir / f"sync-{stamp}-{name}.pyspy.txt" if args.profile else None

    print(f"machine: {_machine.load()}", flush=True)
    wakeups = wakeup_cost.measure()
    print(f"What waking costs here: {wakeup_cost.describe(wakeups)}.", flush=True)
    with stack(max(1, args.instances)) as running:
        if "lag" in chosen:
            settle("lag")
            figures, values = lag(
                running, args.lag_streams, args.rate, args.seconds, profile("streams")
            )
            lags.append(figures)
            # The same pipeline at a tenth of the load: its latency without queueing for CPU.
            settle("lag at a tenth of the rate")
            tenth = lag(
                running,
                max(1, args.lag_streams // 10),
                args.rate / 10,
                args.seconds,
                profile("streams-tenth"),
            )
            lags.append(tenth[0])
        if "pickup" in chosen:
            settle("pick-up of new and idle streams")
            lags += list(pickup(running, args.pickups))
        if "throughput" in chosen:
            for streams in (1, 100):
                settle(f"throughput, {streams} streams")
                rates.append(throughput(running, streams, args.events))
        if "tables" in chosen:
            settle("Postgres → stream lag")
            figures, table_values = sync_tables.table_lag(
                running, args.table_rate, args.table_seconds, profile("tables")
            )
            tables.append(figures)
            settle("Postgres → stream lag at a tenth of the rate")
            tables.append(
                sync_tables.table_lag(
                    running, args.table_rate / 10, args.table_seconds, profile("tables-tenth")
                )[0]
            )
    results = sync_report.Results(
        lags,
        rates,
        tables,
        values,
        table_values,
        max(1, args.instances),
        _machine.load(),
        wakeups,
    )
    path = sync_report.write_results(out_dir, results, stamp)
    print(sync_report.markdown(results))
    print(f"results: {path}")
