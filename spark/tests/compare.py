"""Column-by-column comparison of Spark's analytics with the plain-Python answer key."""

from __future__ import annotations

import math
from typing import Any


def differences(
    expected: dict[Any, dict[str, Any]], actual: dict[Any, dict[str, Any]], columns: tuple[str, ...]
) -> list[str]:
    """Every (row, column) whose values differ; floats within 1e-9 relative."""
    found = []
    for key in sorted(set(expected) | set(actual), key=str):
        if key not in actual or key not in expected:
            found.append(f"{key}: only in {'expected' if key in expected else 'actual'}")
            continue
        for column in columns:
            want, got = expected[key][column], actual[key][column]
            if isinstance(want, float) and isinstance(got, float):
                same = math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-9)
            else:
                same = want == got
            if not same:
                found.append(f"{key}.{column}: expected {want!r}, got {got!r}")
    return found
