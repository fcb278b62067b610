"""``spark.read.format("session_events")``: Postgres's ``session_events``, read by the executors.

Each partition reads the rows whose ``hashtext(stream_name)`` falls in its
bucket, so a session's rows are all in one partition, through a server-side
cursor a batch at a time, turned into Arrow batches: no partition ever holds
its rows whole, and the driver never sees one. Columns are the reader
schema (``ds_spark.schema``): ``stream_name`` is ``stream``, ``ds_offset``
is ``offset``, ``payload`` is JSON text.

Options: ``url`` (a postgresql:// URL), ``partitions`` (default 8),
``batchRows`` (default 10,000), ``since`` (an ISO date: only the sessions
sessions.md §5's ``--since`` recomputes), ``endingOffsets`` (a JSON object
stream -> offset: only those streams, and only their rows before it).
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

import msgspec
import psycopg
import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from ds_spark.errors import DsSparkError, PostgresUnreachable
from ds_spark.sources.event_source import EventDataSource

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from pyspark.sql.types import StructType

SOURCE_NAME = "session_events"
_ARROW = pa.schema(
    [
        pa.field("stream", pa.string(), nullable=False),
        pa.field("offset", pa.string(), nullable=False),
        pa.field("event_index", pa.int32(), nullable=False),
        pa.field("type", pa.string()),
        pa.field("key", pa.string()),
        pa.field("operation", pa.string()),
        pa.field("event_time", pa.timestamp("us", tz="UTC")),
        pa.field("payload", pa.string(), nullable=False),
    ]
)
_COLUMNS = (
    "e.stream_name, e.ds_offset, e.event_index, e.event_type, e.event_key, e.operation,"
    " e.event_time, e.payload::text"
)
# sessions.md §5, --since D: the sessions with rows received on or after D, and every
# session of every day those sessions belong to (now, or in the last run's table).
SINCE_SCOPE = """
WITH touched AS (
    SELECT DISTINCT stream_name FROM session_events WHERE received_at >= %(since)s
), days AS (
    SELECT (min(event_time) AT TIME ZONE 'UTC')::date AS day FROM session_events
     WHERE stream_name IN (SELECT stream_name FROM touched) GROUP BY stream_name
    UNION
    SELECT (first_event_at AT TIME ZONE 'UTC')::date FROM session_analytics
     WHERE session IN (SELECT stream_name FROM touched)
)
SELECT stream_name FROM touched
UNION
SELECT session FROM session_analytics
 WHERE (first_event_at AT TIME ZONE 'UTC')::date IN (SELECT day FROM days)
"""


class SessionEventsDataSource(EventDataSource):
    """Batch reads of ``session_events``, partitioned by a hash of the stream."""

    source_name = SOURCE_NAME

    def reader(self, schema: StructType) -> DataSourceReader:
        return SessionEventsReader(_query_of(self.options))


class SessionEventsReader(DataSourceReader):
    def __init__(self, query: _Query) -> None:
        self.query = query

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(index) for index in range(self.query.partitions)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        sql, params = self.query.sql(partition.value)
        try:
            # A named cursor streams from the server instead of fetching everything.
            with (
                psycopg.connect(self.query.url, connect_timeout=10) as conn,
                conn.cursor(name=f"ds_spark_{partition.value}") as cursor,
            ):
                cursor.itersize = self.query.batch_rows
                cursor.execute(sql, params)
                while rows := cursor.fetchmany(self.query.batch_rows):
                    yield _batch(rows)
        except psycopg.OperationalError as exc:
            raise PostgresUnreachable(describe_postgres_error(self.query.url, exc)) from None


class _Query(msgspec.Struct, frozen=True):
    url: str
    partitions: int
    batch_rows: int
    since: date | None = None
    ends: dict[str, str] | None = None

    def sql(self, partition: int) -> tuple[str, dict[str, Any]]:
        params: dict[str, Any] = {"n": self.partitions, "k": partition}
        where = ["(hashtext(e.stream_name) & 2147483647) %% %(n)s = %(k)s"]
        joins = ""
        if self.since is not None:
            where.append(f"e.stream_name IN ({SINCE_SCOPE})")
            params["since"] = self.since
        if self.ends is not None:
            joins = (
                " JOIN unnest(%(streams)s::text[], %(ends)s::text[]) AS c(stream_name, end_offset)"
                " ON c.stream_name = e.stream_name"
            )
            where.append("e.ds_offset < c.end_offset")
            params["streams"], params["ends"] = list(self.ends), list(self.ends.values())
        return f"SELECT {_COLUMNS} FROM session_events e{joins} WHERE {' AND '.join(where)}", params


def _query_of(options: Mapping[str, str]) -> _Query:
    url = options.get("url")
    if not url:
        raise DsSparkError("the session_events source needs the option 'url' (postgresql://...)")
    try:
        partitions = int(options.get("partitions", "8"))
        batch_rows = int(options.get("batchRows", "10000"))
        since = date.fromisoformat(options["since"]) if options.get("since") else None
        ends_text = options.get("endingOffsets")
        ends = msgspec.json.decode(ends_text, type=dict[str, str]) if ends_text else None
    except (ValueError, msgspec.DecodeError) as exc:
        raise DsSparkError(f"session_events options: {exc}") from None
    if partitions < 1 or batch_rows < 1:
        raise DsSparkError("session_events: partitions and batchRows must be positive")
    return _Query(url, partitions, batch_rows, since, ends)


def _batch(rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True))
    return pa.RecordBatch.from_arrays(
        [pa.array(column, type=field.type) for column, field in zip(columns, _ARROW, strict=True)],
        schema=_ARROW,
    )


def describe_postgres_error(url: str, exc: psycopg.Error) -> str:
    """One line for a connection failure, without the password of the URL."""
    where = psycopg.conninfo.conninfo_to_dict(url)
    target = f"{where.get('host', 'localhost')}:{where.get('port', 5432)}/{where.get('dbname', '')}"
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"Postgres at {target} is unreachable or refused the connection ({reason})"
