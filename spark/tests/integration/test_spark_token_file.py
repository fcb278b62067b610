"""A streaming query reads its token from a file renewed while it runs (real Envoy, real workers).

The ``durable_streams`` source's ``tokenFile`` is read by whoever sends a
request (Spark's Python workers): again whenever it changes. The first token
expires while the query runs, after the file has been given a new one; the
query goes on, and what was written after the expiry (on a stream it knew,
and on one made meanwhile) is read.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "proxy" / "tests"))
from token_files import admin_client, issue, refused, strict_gateway, wait_past

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

# Long enough for the query's first batch on a busy machine.
FIRST_TOKEN_SECS = 30
JSON = {"Content-Type": "application/json"}


def _keys(spark: SparkSession, table: str) -> set[str]:
    return {row.key for row in spark.sql(f"SELECT key FROM {table}").collect()}


def _wait_for(
    spark: SparkSession, query: StreamingQuery, table: str, keys: set[str], until: float
) -> None:
    while not keys <= _keys(spark, table):
        assert query.exception() is None, str(query.exception())
        assert time.monotonic() < until, f"{keys - _keys(spark, table)} never read"
        time.sleep(0.5)


@pytest.mark.timeout(300)
def test_a_streaming_query_goes_on_past_its_first_tokens_expiry(
    spark: SparkSession, tmp_path: Path
) -> None:
    bucket = "spark-" + uuid.uuid4().hex[:12]
    token_file = tmp_path / "ds-spark.token"
    first, first_exp = issue(token_file, "ds-spark", FIRST_TOKEN_SECS, (bucket,))
    table = "tokens_" + uuid.uuid4().hex[:8]
    with strict_gateway(tmp_path / "gateway") as gateway, admin_client(gateway.url) as http:

        def append(stream: str, key: str) -> None:
            body = {"type": "t", "key": key, "operation": "set"}
            response = http.post(f"/ds/{bucket}/{stream}", json=body)
            assert response.status_code in (200, 204), response.text

        assert http.put(f"/ds/{bucket}").status_code == 201
        assert http.put(f"/ds/{bucket}/a", headers=JSON).status_code == 201
        append("a", "a1")
        query = (
            spark.readStream.format("durable_streams")
            .option("url", gateway.url)
            .option("streams", f"{bucket}/*")
            .option("tokenFile", str(token_file))
            .load()
            .writeStream.format("memory")
            .queryName(table)
            .trigger(processingTime="1 second")
            .start()
        )
        try:
            _wait_for(spark, query, table, {"a1"}, until=time.monotonic() + FIRST_TOKEN_SECS)
            # The token service renews the file well before the token expires.
            issue(token_file, "ds-spark", 600, (bucket,))
            wait_past(first_exp)
            assert refused(gateway.url, first), "the first token should be refused by now"
            append("a", "a2")
            assert http.put(f"/ds/{bucket}/b", headers=JSON).status_code == 201
            append("b", "b1")
            _wait_for(spark, query, table, {"a1", "a2", "b1"}, until=time.monotonic() + 120)
            assert query.isActive
        finally:
            query.stop()
