"""Catch-up ETags and If-None-Match matching."""

from __future__ import annotations

import pytest
from ds_server.protocol.etag import matches, read_etag

START = "00000000000000000000"
END = "00000000000000000010"


def test_etag_format() -> None:
    assert read_etag("m1", START, END, closed=False) == f'"m1:{START}:{END}"'


def test_closure_changes_the_etag() -> None:
    open_tag = read_etag("m1", START, END, closed=False)
    closed_tag = read_etag("m1", START, END, closed=True)
    assert closed_tag != open_tag
    assert closed_tag == f'"m1:{START}:{END}:c"'


def test_etag_varies_with_stream_id_and_range() -> None:
    tags = {
        read_etag("m1", START, END, closed=False),
        read_etag("m2", START, END, closed=False),
        read_etag("m1", END, END, closed=False),
        read_etag("m1", START, START, closed=False),
    }
    assert len(tags) == 4


def test_matches_exact_weak_list_and_star() -> None:
    tag = read_etag("m1", START, END, closed=False)
    assert matches(tag, tag)
    assert matches(f"W/{tag}", tag)
    assert matches(f'"other", {tag}', tag)
    assert matches(f'  {tag}  ,"x"', tag)
    assert matches("*", tag)


@pytest.mark.parametrize("header", [None, "", '"nope"', "m1:0:10", '"m1:0:10'])
def test_non_matching(header: str | None) -> None:
    assert not matches(header, read_etag("m1", START, END, closed=False))


def test_open_etag_does_not_match_closed_response() -> None:
    open_tag = read_etag("m1", START, END, closed=False)
    assert not matches(open_tag, read_etag("m1", START, END, closed=True))
