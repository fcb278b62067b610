"""``ds-spark`` fails with one line and a non-zero exit, before any Spark work where it can."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ds_spark.cli import failure_message
from ds_spark.errors import StreamError


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ds_spark", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_java_missing_is_one_line(tmp_path: object) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = os.path.dirname(sys.executable)  # no java on it
    result = _run(env, "analytics", "--source", "streams")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "ds-spark: Java was not found: Spark needs a Java 17+ runtime on PATH or in JAVA_HOME"
    )
    assert "Traceback" not in result.stderr


def test_bad_setting_is_one_line() -> None:
    env = {**os.environ, "DS_SERVER_URL": "ftp://nowhere"}
    result = _run(env, "analytics", "--source", "streams")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "ds-spark: DS_SERVER_URL='ftp://nowhere': Value error, must be an http:// or https:// URL"
    )


def test_a_token_and_a_token_file_together_are_one_line() -> None:
    env = {**os.environ, "DS_SPARK__TOKEN": "abc", "DS_SPARK__TOKEN_FILE": "/run/t"}
    result = _run(env, "analytics", "--source", "streams")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "ds-spark: Value error, set DS_SPARK__TOKEN or DS_SPARK__TOKEN_FILE, not both"
    )


def test_failure_message_finds_ds_spark_errors_in_wrapped_text() -> None:
    wrapped = RuntimeError(
        "py4j.protocol.Py4JJavaError: An error occurred\nTraceback (most recent call last):\n"
        + str(StreamError("stream a/b holds text/plain data, not JSON"))
        + "\n\tat org.apache.spark.Something"
    )
    assert failure_message(wrapped) == "ds-spark: stream a/b holds text/plain data, not JSON"
    assert failure_message(ValueError("boom\nmore")) == (
        "ds-spark: unexpected error (ValueError): boom (--debug shows more)"
    )


def test_postgres_unreachable_is_one_line() -> None:
    env = {**os.environ, "POSTGRES_URL": "postgresql://ds:secret@127.0.0.1:9/durable_streams"}
    # The schema step is the first thing both jobs ask of Postgres.
    from ds_spark.errors import PostgresUnreachable
    from ds_spark.postgres import ensure_schema

    try:
        ensure_schema(env["POSTGRES_URL"])
    except PostgresUnreachable as exc:
        message = failure_message(exc)
    else:  # pragma: no cover
        raise AssertionError("no error")
    assert message.startswith(
        "ds-spark: Postgres at 127.0.0.1:9/durable_streams is unreachable or refused the connection"
    )
    assert "secret" not in message


def test_each_command_runs_its_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ds-spark snapshots`` once started Spark, did nothing and exited 0."""
    import ds_spark.analytics.job
    import ds_spark.snapshots.job
    import ds_spark.spark_session
    from ds_spark import cli

    ran: list[str] = []
    stopped: list[bool] = []

    class Session:
        def stop(self) -> None:
            stopped.append(True)

    monkeypatch.setattr(ds_spark.spark_session, "build_session", lambda *a, **k: Session())
    monkeypatch.setattr(ds_spark.snapshots.job, "main", lambda *a: ran.append("snapshots"))
    monkeypatch.setattr(ds_spark.analytics.job, "main", lambda *a: ran.append("analytics"))
    cli.main(["snapshots"])
    cli.main(["analytics"])
    assert ran == ["snapshots", "analytics"]
    assert stopped == [True, True]


def test_postgres_older_than_14_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import ds_spark.postgres
    from ds_spark.errors import DsSparkError

    closed: list[bool] = []

    class OldServer:
        info = type("Info", (), {"server_version": 130011})()

        def close(self) -> None:
            closed.append(True)

    monkeypatch.setattr(ds_spark.postgres.psycopg, "connect", lambda *a, **k: OldServer())
    with pytest.raises(DsSparkError) as raised:
        ds_spark.postgres.connect("postgresql://ds@127.0.0.1/durable_streams")
    assert failure_message(raised.value) == (
        "ds-spark: PostgreSQL 13.11 is not supported: ds-spark needs PostgreSQL 14 or newer"
    )
    assert closed == [True]
