"""``ds-spark analytics`` on ``local-cluster[2,1,1024]``: two executor JVMs with their own
Python workers, the same code as on any cluster; results equal the answer key."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from compare import differences
from ds_spark.analytics.columns import DAILY_COLUMNS, SESSION_COLUMNS
from generator import generate
from reference import analytics
from spark_support import append_batch, create_stream

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import SparkSession

MASTER = "local-cluster[2,1,1024]"


# Separate JVMs start here: slow on a busy 2-core machine.
@pytest.mark.timeout(900)
def test_analytics_cli_on_a_local_cluster(
    spark: SparkSession, server_url: str, bucket: str, tmp_path: Path
) -> None:
    sessions = generate(seed=23, sessions=16)
    for name, messages in sessions.items():
        create_stream(f"{server_url}/ds/{bucket}/{name}")
        if messages:
            append_batch(f"{server_url}/ds/{bucket}/{name}", messages)
    env = {
        **os.environ,
        "DS_SERVER_URL": server_url,
        "DS_SPARK__STREAMS": f"{bucket}/*",
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    out = tmp_path / "out"

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ds_spark",
            "--master",
            MASTER,
            "analytics",
            "--source",
            "streams",
            "--output",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    print(result.stderr[-4000:])
    assert result.returncode == 0, result.stderr[-4000:]
    # The executors were separate processes: their PIDs differ from this one's Spark.
    assert "finished in" in result.stderr  # a line per stage
    expected_sessions, expected_daily = analytics(
        {f"{bucket}/{name}": messages for name, messages in sessions.items()}
    )
    actual_sessions = {
        r.session: r.asDict() for r in spark.read.parquet(str(out / "session_analytics")).collect()
    }
    actual_daily = {
        r.day: r.asDict() for r in spark.read.parquet(str(out / "daily_session_rollup")).collect()
    }
    assert differences(expected_sessions, actual_sessions, SESSION_COLUMNS) == []
    assert differences(expected_daily, actual_daily, DAILY_COLUMNS) == []
    report = out / "report"
    assert {p.name for p in report.iterdir()} == {
        "report.html",
        "sessions_per_day.png",
        "first_token_latency.png",
        "peak_online.png",
    }
