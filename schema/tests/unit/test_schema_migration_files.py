"""The shipped migration files: numbered, named and loadable from the package."""

from __future__ import annotations

from ds_schema.migrate import discover


def test_files_are_numbered_in_order() -> None:
    migrations = discover()
    versions = [m.version for m in migrations]
    assert versions == sorted(versions) == list(range(1, len(versions) + 1))
    assert {m.name for m in migrations} >= {"session_events", "items", "sync_state"}


def test_session_events_has_its_guard_key() -> None:
    first = discover()[0]
    assert "UNIQUE (stream_name, ds_offset, event_index)" in first.sql
