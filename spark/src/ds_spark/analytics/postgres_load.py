"""Loading the analytics into Postgres: all of a run's rows, or none of them.

The executors COPY their partitions into two staging tables made for the
run; the driver then replaces the target rows from them in ONE transaction
and drops them. A run that fails half-way leaves the tables as they were.
A full run replaces both tables; a ``--since`` run upserts its sessions
and replaces the days they belong to, now or before (sessions.md §5).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from ds_spark.analytics.columns import (
    DAILY_COLUMNS,
    DAILY_KEY,
    DAILY_TABLE,
    SESSION_COLUMNS,
    SESSION_KEY,
    SESSION_TABLE,
)
from ds_spark.postgres import connect

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import DataFrame, Row

    from ds_spark.analytics.pipeline import AnalyticsFrames


def load_postgres(frames: AnalyticsFrames, url: str, *, partial: bool) -> None:
    """Write both tables; ``partial`` (a --since run) keeps the rows it did not recompute."""
    run = uuid.uuid4().hex[:12]
    stages = {
        SESSION_TABLE: f"ds_spark_stage_{run}_sessions",
        DAILY_TABLE: f"ds_spark_stage_{run}_daily",
    }
    with connect(url) as conn:
        for table, stage in stages.items():
            conn.execute(
                sql.SQL("CREATE UNLOGGED TABLE {} (LIKE {})").format(
                    sql.Identifier(stage), sql.Identifier(table)
                )
            )
        conn.commit()
        try:
            _copy(frames.sessions, url, stages[SESSION_TABLE], SESSION_COLUMNS)
            _copy(frames.daily, url, stages[DAILY_TABLE], DAILY_COLUMNS)
            with conn.transaction():
                _replace(conn, stages, partial=partial)
        finally:
            for stage in stages.values():
                conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(stage)))
            conn.commit()


def _copy(frame: DataFrame, url: str, stage: str, columns: tuple[str, ...]) -> None:
    """COPY each partition into ``stage``, from the executors."""

    def write(rows: Iterator[Row]) -> None:
        with connect(url) as conn, conn.cursor() as cursor:
            statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
                sql.Identifier(stage), sql.SQL(", ").join(map(sql.Identifier, columns))
            )
            with cursor.copy(statement) as copy:
                for row in rows:
                    copy.write_row(tuple(row[name] for name in columns))

    frame.select(*columns).foreachPartition(write)


def _replace(conn: psycopg.Connection[Any], stages: dict[str, str], *, partial: bool) -> None:
    sessions, daily = (sql.Identifier(stages[SESSION_TABLE]), sql.Identifier(stages[DAILY_TABLE]))
    if partial:
        # Days the recomputed sessions were in before this run: their rows are rebuilt
        # from the stage, and a day left with no session goes.
        conn.execute(
            sql.SQL(
                "DELETE FROM daily_session_rollup WHERE day IN ("
                " SELECT (first_event_at AT TIME ZONE 'UTC')::date FROM session_analytics"
                " WHERE session IN (SELECT session FROM {s})) AND day NOT IN (SELECT day FROM {d})"
            ).format(s=sessions, d=daily)
        )
    else:
        conn.execute(
            sql.SQL(
                "DELETE FROM session_analytics WHERE session NOT IN (SELECT session FROM {})"
            ).format(sessions)
        )
        conn.execute(
            sql.SQL(
                "DELETE FROM daily_session_rollup WHERE day NOT IN (SELECT day FROM {})"
            ).format(daily)
        )
    _upsert(conn, SESSION_TABLE, SESSION_KEY, SESSION_COLUMNS, stages[SESSION_TABLE])
    _upsert(conn, DAILY_TABLE, DAILY_KEY, DAILY_COLUMNS, stages[DAILY_TABLE])


def _upsert(
    conn: psycopg.Connection[Any], table: str, key: str, columns: tuple[str, ...], stage: str
) -> None:
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    updates = sql.SQL(", ").join(
        sql.SQL("{c} = EXCLUDED.{c}").format(c=sql.Identifier(c)) for c in columns if c != key
    )
    conn.execute(
        sql.SQL(
            "INSERT INTO {t} ({cols}) SELECT {cols} FROM {s} ON CONFLICT ({k}) DO UPDATE SET {u}"
        ).format(
            t=sql.Identifier(table),
            cols=names,
            s=sql.Identifier(stage),
            k=sql.Identifier(key),
            u=updates,
        )
    )
