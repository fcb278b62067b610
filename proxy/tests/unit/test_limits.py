"""ds_proxy.limits: per-subject request rates in Envoy's local rate limit filter."""

from __future__ import annotations

import pytest
from ds_proxy import envoy_config as ec
from ds_proxy import limits
from ds_proxy.limits import SubjectLimits, token_bucket
from ds_proxy.paths import DEV_CONFIG, PROD_TEMPLATE

DEV = ec.load(DEV_CONFIG)
PROD = ec.load(PROD_TEMPLATE)


@pytest.mark.parametrize(
    ("per_sec", "burst", "expected"),
    [
        (500, 1000, {"max_tokens": 1000, "tokens_per_fill": 50, "fill_interval": "0.1s"}),
        (1000, 2000, {"max_tokens": 2000, "tokens_per_fill": 100, "fill_interval": "0.1s"}),
        # Fewer than ten a second: one token at a time, no faster than the rate.
        (4, 8, {"max_tokens": 8, "tokens_per_fill": 1, "fill_interval": "0.25s"}),
        (1, 1, {"max_tokens": 1, "tokens_per_fill": 1, "fill_interval": "1s"}),
        (7, 7, {"max_tokens": 7, "tokens_per_fill": 1, "fill_interval": "0.143s"}),
        (25, 5, {"max_tokens": 5, "tokens_per_fill": 3, "fill_interval": "0.12s"}),
    ],
)
def test_token_bucket_refills_at_the_rate(
    per_sec: int, burst: int, expected: dict[str, object]
) -> None:
    bucket = token_bucket(per_sec, burst)
    assert bucket == expected
    interval = float(str(bucket["fill_interval"]).rstrip("s"))
    # Envoy refuses fill intervals under 50 ms; the rate is kept to the millisecond.
    assert interval >= 0.05
    assert abs(int(str(bucket["tokens_per_fill"])) / interval - per_sec) / per_sec < 0.01


@pytest.mark.parametrize("config", [DEV, PROD], ids=["dev", "prod"])
def test_the_committed_configs_hold_the_defaults(config: ec.Config) -> None:
    assert limits.apply(config, SubjectLimits()) == config


def test_apply_writes_a_deployments_limits() -> None:
    chosen = SubjectLimits(
        appends_per_sec=20,
        append_burst=40,
        reads_per_sec=50,
        read_burst=60,
        rate_limited_subjects=7,
    )
    applied = ec.http_filter(limits.apply(DEV, chosen), limits.LOCAL_RATELIMIT)
    assert applied["max_dynamic_descriptors"] == 7
    assert applied["descriptors"] == [
        {
            "entries": [{"key": "sub", "value": ""}, {"key": "kind", "value": "append"}],
            "token_bucket": token_bucket(20, 40),
        },
        {
            "entries": [{"key": "sub", "value": ""}, {"key": "kind", "value": "read"}],
            "token_bucket": token_bucket(50, 60),
        },
    ]
    # The committed config is untouched.
    assert ec.http_filter(DEV, limits.LOCAL_RATELIMIT)["max_dynamic_descriptors"] == 100_000


def test_zero_lifts_a_limit() -> None:
    applied = limits.apply(DEV, SubjectLimits(appends_per_sec=0))
    kinds = [
        descriptor["entries"][1]["value"]
        for descriptor in ec.http_filter(applied, limits.LOCAL_RATELIMIT)["descriptors"]
    ]
    assert kinds == ["read"]


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_PROXY__APPENDS_PER_SEC", "30")
    monkeypatch.setenv("DS_PROXY__READ_BURST", "90")
    assert SubjectLimits().appends_per_sec == 30
    assert SubjectLimits().read_burst == 90
