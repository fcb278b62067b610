"""ds_server.cluster.leadership: one leader per schema, never one for every schema of a database."""

from __future__ import annotations

import pytest
from ds_server.cluster.leadership import DEFAULT_SCHEMA, LOCK_KEY, Leadership, lock_key
from ds_server.postgres_database import PostgresDatabase
from ds_server.settings import StorageSection


def test_the_default_schema_keeps_its_key_and_every_other_has_its_own() -> None:
    # An upgrade from the single key never sees two leaders of the default schema.
    assert StorageSection.model_fields["postgres_schema"].default == DEFAULT_SCHEMA
    assert lock_key(DEFAULT_SCHEMA) == LOCK_KEY
    keys = {lock_key(schema) for schema in ("ds_server", "tenant_a", "tenant_b", "t_1", "t_2")}
    assert len(keys) == 5
    assert all(-(2**63) <= key < 2**63 for key in keys)
    assert lock_key("tenant_a") == lock_key("tenant_a")


class _Votes:
    def __init__(self) -> None:
        self.elected = 0

    async def elect(self) -> None:
        self.elected += 1

    async def depose(self) -> None:
        self.elected -= 1


def _campaigner(url: str, schema: str, name: str, votes: _Votes) -> Leadership:
    # A database of its own, as each replica has.
    database = PostgresDatabase(url, schema=schema)
    return Leadership(database, f"http://{name}", votes.elect, votes.depose)


@pytest.mark.parametrize("first_schema", ["ds_server", "other_a"])
async def test_deployments_on_one_database_each_elect_their_own_leader(
    postgres_db: str, first_schema: str
) -> None:
    """Two schemas of one database: a leader each (before, the second never got one:
    every subscription request there was 503, as the request fuzzer found)."""
    votes = {schema: _Votes() for schema in (first_schema, "other_b")}
    campaigners = [
        _campaigner(postgres_db, first_schema, "a1", votes[first_schema]),
        _campaigner(postgres_db, first_schema, "a2", votes[first_schema]),
        _campaigner(postgres_db, "other_b", "b1", votes["other_b"]),
    ]
    try:
        for campaigner in campaigners:
            await campaigner.start()
        a1, a2, b1 = campaigners
        # One leader in each schema, and the other replica of the first knows it.
        assert [a1.is_leader, a2.is_leader, b1.is_leader] == [True, False, True]
        assert a2.leader_url == "http://a1"
        assert b1.leader_url == "http://b1"
        assert votes[first_schema].elected == votes["other_b"].elected == 1
    finally:
        for campaigner in campaigners:
            await campaigner.stop()
            await campaigner.database.close()
