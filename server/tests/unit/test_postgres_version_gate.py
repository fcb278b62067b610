"""ds-server refuses a PostgreSQL older than 14 before it serves, in one line."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from ds_server.stores._postgres import version


class FakeConnection:
    def __init__(self, number: int, text: str) -> None:
        self.row = (number, text)

    def __enter__(self) -> FakeConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def execute(self, query: str) -> FakeConnection:
        assert "server_version_num" in query
        return self

    def fetchone(self) -> tuple[int, str]:
        return self.row


def serve_version(monkeypatch: pytest.MonkeyPatch, number: int, text: str) -> None:
    def connect(url: str, **options: Any) -> FakeConnection:
        return FakeConnection(number, text)

    monkeypatch.setattr(version.psycopg, "connect", connect)


def test_an_old_server_is_named_with_the_minimum(monkeypatch: pytest.MonkeyPatch) -> None:
    serve_version(monkeypatch, 130011, "13.11 (Debian 13.11-0+deb11u1)")
    assert version.unsupported_server("postgresql://h/d") == (
        "PostgreSQL 13.11 (Debian 13.11-0+deb11u1) is not supported: "
        "the postgres store needs 14 or newer"
    )


@pytest.mark.parametrize("number", [140000, 150018, 160015, 170011, 180001])
def test_fourteen_and_newer_pass(monkeypatch: pytest.MonkeyPatch, number: int) -> None:
    serve_version(monkeypatch, number, "x")
    assert version.unsupported_server("postgresql://h/d") is None


def test_an_unreachable_server_is_left_to_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(url: str, **options: Any) -> None:
        raise psycopg.OperationalError("connection refused")

    monkeypatch.setattr(version.psycopg, "connect", refuse)
    assert version.unsupported_server("postgresql://h/d") is None


def test_the_real_server_passes(postgres: Any) -> None:
    assert version.unsupported_server(postgres.url()) is None
