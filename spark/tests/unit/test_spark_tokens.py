"""The server's token as the source's options carry it: a string, or a file to read."""

from __future__ import annotations

from pathlib import Path

from ds_spark.tokens import token_of, token_options


def test_the_sources_token_options_carry_a_string_or_a_file() -> None:
    assert token_options(None) == {}
    assert token_options("abc") == {"token": "abc"}
    assert token_options(Path("/run/t")) == {"tokenFile": "/run/t"}
    assert token_of({"tokenFile": "/run/t", "token": "abc"}) == Path("/run/t")
    assert token_of({"token": "abc"}) == "abc"
    assert token_of({}) is None
