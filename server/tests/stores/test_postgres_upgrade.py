"""A postgres schema written before bucket quotas (version 1) opens, migrated and counted."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_server.protocol.offsets import Sentinel
from ds_server.stores._postgres.rows import INSERT_STREAM, stream_row
from ds_server.stores._quotas import Quota, QuotaPolicy
from ds_server.stores.base import AppendRequest
from ds_server.stores.errors import QuotaExceeded
from support.postgres_stores import new_state, started_postgres

if TYPE_CHECKING:
    from ds_stack.postgres import EmbeddedPostgres

BYTES = "application/octet-stream"
V1_SCHEMA = Path(__file__).with_name("postgres_schema_v1.sql")
# Version 1's ds_append: a stream's appends, fenced on the version; true when stored.
_V1_APPEND = """
    SELECT ds_append(%s, 1, 1, 0, %s, true, 1.0, 1.0, ARRAY[0]::bigint[], ARRAY[false],
        ARRAY[%s]::bytea[], '{}'::text[], '{}'::bigint[], '{}'::bigint[], '{}'::text[],
        '{}'::text[], false, NULL, NULL, NULL)
"""


async def write_version_1(url: str, schema: str) -> None:
    """The schema as version 1 made it, with streams as version 1 wrote them."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
        await conn.execute(f"SET search_path = {schema}")
        await conn.execute(V1_SCHEMA.read_text())  # type: ignore[arg-type]
        for path, data in (("chat/a", b"0123456789"), ("chat/b", b"bbbbb"), ("__ds/x", b"x" * 100)):
            state = new_state(uuid.uuid4().hex[:16], path)
            await conn.execute(INSERT_STREAM, stream_row(state))
            stored = await (
                await conn.execute(_V1_APPEND, (state.stream_id, len(data), data))
            ).fetchone()
            assert stored == (True,)
        # chat/a's snapshot at 4 (3 bytes of blob) dropped its first 4 bytes.
        await conn.execute("UPDATE streams SET earliest_offset = 4 WHERE path = 'chat/a'")
        await conn.execute(
            "INSERT INTO snapshots SELECT stream_id, 4, 'text/plain', 3, 1.0, 'abc' FROM streams"
            " WHERE path = 'chat/a'"
        )


async def test_a_version_1_schema_is_migrated_and_its_streams_counted(
    postgres: EmbeddedPostgres,
) -> None:
    url, schema = postgres.url(), f"t_{uuid.uuid4().hex}"
    await write_version_1(url, schema)
    quotas = QuotaPolicy(Quota(20, 3))
    store = await started_postgres(url, schema, quotas=quotas)
    # A second replica opens the migrated schema as it is.
    other = await started_postgres(url, schema, quotas=quotas)
    try:
        await store.create_bucket("chat")
        info = await store.get_bucket("chat")
        # chat/a: 6 retained + a 3-byte snapshot; chat/b: 5; __ds/x counts in no bucket.
        assert (info.used_bytes, info.used_streams) == (14, 2)
        result = await store.read("chat/a", 4, 1 << 20)
        assert b"".join(result.chunks) == b"456789"
        assert (await store.read("chat/b", Sentinel.BEGINNING, 1 << 20)).chunks == [b"bbbbb"]
        request = AppendRequest(path="chat/b", content_type=BYTES, messages=(b"123456",))
        assert (await other.append(request)).tail == 11
        with pytest.raises(QuotaExceeded):
            await store.append(request)
        assert (await other.get_bucket("chat")).used_bytes == 20
    finally:
        await store.stop()
        await other.stop()
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await conn.execute(f"SET search_path = {schema}")
        version = await (await conn.execute("SELECT value FROM meta")).fetchone()
        functions = await (
            await conn.execute(
                "SELECT count(*) FROM pg_proc"
                " WHERE proname = 'ds_append' AND pronamespace = %s::regnamespace",
                (schema,),
            )
        ).fetchone()
    assert version == ("2",)
    # Version 1's ds_append is gone: a server of version 1 cannot write uncounted.
    assert functions == (1,)
