"""The jobs against Postgres synced by a real ds-sync: reruns, --since, and snapshots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
import msgspec
import psycopg
from compare import differences
from ds_spark.analytics.columns import DAILY_COLUMNS, SESSION_COLUMNS
from ds_spark.analytics.job import POSTGRES, AnalyticsRun
from ds_spark.analytics.job import main as analytics_main
from ds_spark.postgres import committed_checkpoints
from ds_spark.settings import Settings
from ds_spark.snapshots.job import main as snapshots_main
from durable_sessions.protocol.offsets import parse_offset
from generator import generate
from reference import analytics, replay
from sync_support import SyncProcess
from synced import append_sessions, stored_payloads, wait_synced, write_sessions
from test_spark_local_cluster import table

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession


def _settings(server_url: str, postgres_url: str, bucket: str) -> Settings:
    return Settings(
        server_url=server_url,
        postgres_url=postgres_url,
        streams=f"{bucket}/*",
        postgres_partitions=2,
    )


def _bootstrap(url: str) -> tuple[int, dict[str, Any]]:
    response = httpx.get(f"{url}/bootstrap")
    assert response.status_code == 200
    snapshot = response.content.split(b"\r\n\r\n", 1)[1].split(b"\r\n--", 1)[0]
    document = msgspec.json.decode(snapshot)
    return parse_offset(response.headers["Stream-Snapshot-Offset"]), document["state"]


def test_rerun_replaces_and_since_recomputes_only_its_days(
    spark: SparkSession, server_url: str, bucket: str, postgres_db: str, tmp_path: Path
) -> None:
    sessions = {n: m for n, m in generate(seed=31, sessions=10).items() if m}
    named = {f"{bucket}/{n}": m for n, m in sessions.items()}
    _, expected_daily = analytics(named)
    expected_sessions, _ = analytics(named)
    # The sessions of one day get more messages later; the others are done.
    day_of = {
        s: row["first_event_at"].date()
        for s, row in expected_sessions.items()
        if row["first_event_at"]
    }
    late_day = sorted(expected_daily)[0]
    late = [s.split("/")[1] for s, day in day_of.items() if day == late_day]
    first = {n: (m[: len(m) // 2] if n in late else m) for n, m in sessions.items()}
    settings = _settings(server_url, postgres_db, bucket)
    with SyncProcess(server_url, postgres_db, f"{bucket}/*") as sync:
        wait_synced(sync, postgres_db, write_sessions(server_url, bucket, first))
        run = AnalyticsRun(POSTGRES, tmp_path / "full")
        analytics_main(spark, settings, run)
        analytics_main(spark, settings, run)  # a rerun replaces, never duplicates
        once = analytics({f"{bucket}/{n}": m for n, m in first.items()})
        assert (
            differences(
                once[0], table(postgres_db, "session_analytics", "session"), SESSION_COLUMNS
            )
            == []
        )
        assert (
            differences(once[1], table(postgres_db, "daily_session_rollup", "day"), DAILY_COLUMNS)
            == []
        )

        with psycopg.connect(postgres_db) as conn:
            conn.execute("UPDATE session_events SET received_at = received_at - interval '10 days'")
            # A session outside the late day: --since must leave its row alone.
            untouched = next(s for s, day in day_of.items() if day != late_day)
            conn.execute(
                "UPDATE session_analytics SET events = -1 WHERE session = %s", (untouched,)
            )
        rest = {n: sessions[n][len(sessions[n]) // 2 :] for n in late}
        wait_synced(sync, postgres_db, append_sessions(server_url, bucket, rest))

    since = (datetime.now(UTC) - timedelta(days=1)).date()
    analytics_main(spark, settings, AnalyticsRun(POSTGRES, tmp_path / "since", since))

    rows = table(postgres_db, "session_analytics", "session")
    assert rows[untouched]["events"] == -1
    rows[untouched]["events"] = expected_sessions[untouched]["events"]
    assert differences(expected_sessions, rows, SESSION_COLUMNS) == []
    assert (
        differences(
            expected_daily, table(postgres_db, "daily_session_rollup", "day"), DAILY_COLUMNS
        )
        == []
    )


def test_snapshots_stop_at_the_checkpoint_and_equal_the_history(
    spark: SparkSession, server_url: str, bucket: str, postgres_db: str
) -> None:
    sessions = {n: m for n, m in generate(seed=41, sessions=6).items() if len(m) > 6}
    half = {n: m[: len(m) // 2] for n, m in sessions.items()}
    settings = _settings(server_url, postgres_db, bucket)
    with SyncProcess(server_url, postgres_db, f"{bucket}/*") as sync:
        wait_synced(sync, postgres_db, write_sessions(server_url, bucket, half))
        first = snapshots_main(spark, settings)
        assert first.outcomes == {"published": len(sessions)}
        assert (first.verified, first.mismatched) == (len(sessions), [])
        for name, messages in half.items():
            url = f"{server_url}/ds/{bucket}/{name}"
            assert _bootstrap(url)[1] == replay(messages)
            assert httpx.get(url, params={"offset": "-1"}).status_code == 410
        rest = {n: m[len(m) // 2 :] for n, m in sessions.items()}
        wait_synced(sync, postgres_db, append_sessions(server_url, bucket, rest))

    # ds-sync is stopped: what is appended now is not in Postgres, so no snapshot may cover it.
    unsynced = {n: [{"type": "t", "key": "late", "operation": "set", "value": 1}] for n in sessions}
    tails = append_sessions(server_url, bucket, unsynced)
    second = snapshots_main(spark, settings)

    assert second.outcomes == {"published": len(sessions)}
    assert second.mismatched == []
    checkpoints = committed_checkpoints(postgres_db)
    for name, messages in sessions.items():
        path, url = f"{bucket}/{name}", f"{server_url}/ds/{bucket}/{name}"
        offset, state = _bootstrap(url)
        assert offset == checkpoints[path] < tails[path]
        assert state == replay(messages)  # folded from the first snapshot on
        after = httpx.get(url, params={"offset": str(offset).zfill(20)})
        assert after.json() == unsynced[name]
    # Postgres still holds every event, though the streams retired their history.
    assert stored_payloads(postgres_db) == {f"{bucket}/{n}": m for n, m in sessions.items()}
