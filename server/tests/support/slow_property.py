"""A property test that is slow on purpose: run alone by unit/test_hypothesis_profile.py.

Each example takes longer than Hypothesis's default 200 ms deadline, as any
example may on a loaded machine. Not collected by the suite (its name does
not start with ``test_``).
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

EXAMPLE_SECS = 0.25


@settings(max_examples=2)
@given(st.booleans())
def test_a_slow_example(flag: bool) -> None:
    time.sleep(EXAMPLE_SECS)
