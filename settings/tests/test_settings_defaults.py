"""The stack's defaults and the URLs made of them."""

from __future__ import annotations

from ds_settings import defaults


def test_the_local_stack_urls() -> None:
    assert defaults.SERVER_URL == "http://127.0.0.1:4437"
    assert defaults.POSTGRES_URL == "postgresql://postgres:password@127.0.0.1:54321/durable_streams"


def test_a_url_of_another_port_or_database() -> None:
    assert defaults.server_url(5000) == "http://127.0.0.1:5000"
    assert defaults.postgres_url(6000, database="other") == (
        "postgresql://postgres:password@127.0.0.1:6000/other"
    )


def test_credentials_and_names_are_quoted() -> None:
    url = defaults.postgres_url(user="a b", password="p@ss/word", database="d/b")
    assert url == "postgresql://a%20b:p%40ss%2Fword@127.0.0.1:54321/d%2Fb"
