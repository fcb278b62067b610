"""ds_server.auth.recent: a bounded map of recent results."""

from __future__ import annotations

from ds_server.auth.recent import RecentResults


def test_a_kept_result_is_found_and_a_missing_one_is_none() -> None:
    results: RecentResults[str, int] = RecentResults(4)
    results.put("a", 1)
    assert results.get("a") == 1
    assert results.get("b") is None


def test_past_its_size_the_oldest_result_goes_first() -> None:
    results: RecentResults[str, int] = RecentResults(2)
    for n, key in enumerate("abc"):
        results.put(key, n)
    assert len(results) == 2
    assert results.get("a") is None
    assert (results.get("b"), results.get("c")) == (1, 2)
