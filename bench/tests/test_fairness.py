"""ds_bench.fairness, short: tenant A's excess is refused and tenant B's requests never are.

The same run as ``ds-bench fairness`` (real Envoy, real ds-server, A's flood
in a process of its own), with two-second phases. It asserts what holds
whatever the machine's load: who is refused, and that every stream holds
exactly what was accepted into it. The latencies are printed (``-s``),
never asserted; ``make bench`` runs the long form for the figures.
"""

from __future__ import annotations

from ds_bench.fairness import Limits, Plan, markdown, run

PLAN = Plan(
    phase_secs=2.0,
    b_rate=20.0,
    a_writers=8,
    a_extra_live=5,
    backend="memory",
    limits=Limits(
        appends_per_sec=50, append_burst=50, reads_per_sec=50, read_burst=100, live_cap=5
    ),
)


def test_a_flooding_tenant_is_refused_and_the_other_is_not() -> None:
    result = run(PLAN)
    print("\n" + markdown(result))
    verdict = result.verdict
    assert verdict.b_refused == {}
    assert verdict.b_errors == 0
    # B's writes and reads are exact, A flooding or not.
    assert verdict.b_stored_exactly
    assert verdict.b_delivered_exactly
    assert [phase.b.appends for phase in result.phases] == [
        phase.b.deliveries for phase in result.phases
    ]
    # A's excess: appends past its rate refused by Envoy, live reads past its cap by ds-server.
    flood = result.phases[1].a
    assert flood is not None
    assert flood.appends_rate_limited > 0
    assert flood.appends_accepted > 0
    assert flood.live_opened == PLAN.limits.live_cap
    assert flood.live_refused_by_cap == PLAN.a_extra_live
    assert flood.other == {}
    assert flood.errors == 0
    # Only what Envoy let through was stored.
    assert verdict.a_stored_exactly
    assert verdict.passed
