"""``ds-bench probe app`` drives the real ds-server app in-process."""

from __future__ import annotations

import math

from ds_bench.probes import app_costs


async def test_app_probe_measures_appends_and_deliveries() -> None:
    append_us, delivery_us = await app_costs(subscribers=20, appends=50)
    # Every reader got every one of the probe's 30 appends, or app_costs would
    # still be waiting; what comes back are real, finite timings.
    assert 0 < append_us < 1e6
    assert 0 < delivery_us < 1e6
    assert math.isfinite(append_us + delivery_us)
