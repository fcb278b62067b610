"""PostgreSQL older than 14 is refused at start in one line; 14 and newer pass."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from ds_schema.migrate import MigrationError, migrate
from ds_schema.postgres_version import unsupported, version_text


def test_versions_read_as_postgres_writes_them() -> None:
    assert version_text(150018) == "15.18"
    assert version_text(180001) == "18.1"
    assert version_text(90624) == "9.6.24"


def test_fourteen_and_newer_pass_older_is_named_with_the_minimum() -> None:
    for supported in (140000, 140023, 150018, 160015, 170011, 180001, 190000):
        assert unsupported(supported) is None
    assert unsupported(130011) == (
        "PostgreSQL 13.11 is not supported: ds-sync needs PostgreSQL 14 or newer"
    )
    assert "ds-spark needs" in (unsupported(90624, "ds-spark") or "")
    assert unsupported(0) is None  # unknown: left to the statements that follow


class OldServer:
    """What migrate() sees of a PostgreSQL 13 connection: only its version."""

    info = SimpleNamespace(server_version=130011)

    def transaction(self) -> Any:
        raise AssertionError("nothing may run on a server that is refused")


def test_migrate_refuses_an_old_server_before_touching_it() -> None:
    with pytest.raises(MigrationError, match=r"^PostgreSQL 13\.11 is not supported"):
        migrate(OldServer())  # type: ignore[arg-type]
