"""Backoff with full jitter: bounded, growing ceilings, reset after success."""

from __future__ import annotations

import random

from ds_sync.backoff import Backoff


def test_delays_stay_under_a_doubling_ceiling_up_to_the_cap() -> None:
    backoff = Backoff(base=0.1, cap=1.0, rng=random.Random(7))
    ceilings = [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    for ceiling in ceilings:
        assert 0 <= backoff.next_delay() <= ceiling


def test_jitter_spreads_delays() -> None:
    delays = {Backoff(rng=random.Random(seed)).next_delay() for seed in range(20)}
    assert len(delays) == 20


def test_reset() -> None:
    backoff = Backoff(base=0.1, cap=10.0, rng=random.Random(1))
    for _ in range(10):
        backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() <= 0.1
