"""The issue's end-to-end check, on ``local-cluster[2,1,1024]`` (two executor JVMs with their
own Python workers, as on any cluster): seeded sessions through a real ds-server and a real
ds-sync into Postgres, then ``ds-spark analytics``; every column of both tables equals the
plain-Python answer key."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from compare import differences
from ds_spark.analytics.columns import DAILY_COLUMNS, SESSION_COLUMNS
from generator import generate
from psycopg.rows import dict_row
from reference import analytics
from sync_support import SyncProcess
from synced import wait_synced, write_sessions

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession

MASTER = "local-cluster[2,1,1024]"


def table(postgres_url: str, name: str, key: str) -> dict[Any, dict[str, Any]]:
    """A table's rows by key, timestamps as naive UTC (as the answer key has them)."""
    with psycopg.connect(postgres_url, row_factory=dict_row) as conn:
        rows = conn.execute(f"SELECT * FROM {name}").fetchall()
    return {
        row[key]: {
            column: value.astimezone(UTC).replace(tzinfo=None)
            if hasattr(value, "astimezone") and getattr(value, "tzinfo", None)
            else value
            for column, value in row.items()
        }
        for row in rows
    }


# Separate JVMs start here: slow on a busy 2-core machine.
@pytest.mark.timeout(900)
def test_analytics_through_server_and_sync_on_a_local_cluster(
    spark: SparkSession, server_url: str, bucket: str, postgres_db: str, tmp_path: Path
) -> None:
    sessions = generate(seed=23, sessions=16)
    tails = write_sessions(server_url, bucket, sessions)
    with SyncProcess(server_url, postgres_db, f"{bucket}/*") as sync:
        wait_synced(sync, postgres_db, tails)
    env = {
        **os.environ,
        "DS_SERVER_URL": server_url,
        "POSTGRES_URL": postgres_db,
        "DS_SPARK__STREAMS": f"{bucket}/*",
        "DS_SPARK__POSTGRES_PARTITIONS": "3",
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    out = tmp_path / "out"

    result = subprocess.run(
        [sys.executable, "-m", "ds_spark", "--master", MASTER, "analytics", "--output", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=800,
        check=False,
    )

    print(result.stderr[-3000:])
    assert result.returncode == 0, result.stderr[-4000:]
    assert "finished in" in result.stderr  # a line per stage
    expected_sessions, expected_daily = analytics(
        {f"{bucket}/{name}": messages for name, messages in sessions.items()}
    )
    session_rows = table(postgres_db, "session_analytics", "session")
    daily_rows = table(postgres_db, "daily_session_rollup", "day")
    assert differences(expected_sessions, session_rows, SESSION_COLUMNS) == []
    assert differences(expected_daily, daily_rows, DAILY_COLUMNS) == []
    print(
        f"analytics comparison: {len(session_rows)} sessions x {len(SESSION_COLUMNS)} columns, "
        f"{len(daily_rows)} days x {len(DAILY_COLUMNS)} columns: 0 differences"
    )
    parquet = {
        r.session: r.asDict() for r in spark.read.parquet(str(out / "session_analytics")).collect()
    }
    assert differences(expected_sessions, parquet, SESSION_COLUMNS) == []
    assert {p.name for p in (out / "report").iterdir()} == {
        "report.html",
        "sessions_per_day.png",
        "first_token_latency.png",
        "peak_online.png",
    }
