"""Request rates per token subject, enforced by Envoy's local rate limit filter.

Both committed configs carry ``envoy.filters.http.local_ratelimit`` right
after ``jwt_authn``. Its actions build a descriptor from the verified
``sub`` (jwt_authn's ``jwt_payload`` metadata) and the kind of request:
``append`` for every write method, ``read`` for GET and HEAD. A descriptor
entry with an empty value matches any sub and gives each sub a token bucket
of its own (Envoy keeps ``rate_limited_subjects`` of them, least recently
used first out: a bucket evicted at rest was full anyway). Requests without
a verified sub (``/healthz``, the viewer's page, subscription callbacks)
build no descriptor and are not limited here. Past the bucket: ``429`` with
``Retry-After: 1``, before the request reaches ds-server.

The committed values are ``SubjectLimits``' defaults (a test keeps them
equal); ``apply`` writes a deployment's own. docs/security.md ("Limits per
subject") gives the reasoning for the defaults.
"""

from __future__ import annotations

import copy
import math

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from ds_proxy import envoy_config as ec

LOCAL_RATELIMIT = "envoy.filters.http.local_ratelimit"
# Descriptor values of the request kinds (the actions in the committed configs).
APPEND = "append"
READ = "read"
# Refill in steps of about a tenth of a second: smooth enough, and above
# Envoy's 50 ms floor for a fill interval.
_REFILL_STEP_SECS = 0.1


class SubjectLimits(BaseSettings):
    """Rates per token subject (``sub``), from ``DS_PROXY__*``; ``0`` lifts a limit."""

    model_config = SettingsConfigDict(env_prefix="DS_PROXY__", extra="ignore", frozen=True)

    appends_per_sec: int = Field(
        default=500,
        ge=0,
        description="write requests (POST, PUT, DELETE, ...) one subject may make per second, "
        "sustained; more get `429` (`0` = no limit)",
    )
    append_burst: int = Field(
        default=1000,
        ge=1,
        description="write requests one subject may make at once, above the rate",
    )
    reads_per_sec: int = Field(
        default=1000,
        ge=0,
        description="read requests (GET, HEAD: catch-up, SSE and long-poll starts, listings) one "
        "subject may make per second, sustained; more get `429` (`0` = no limit)",
    )
    read_burst: int = Field(
        default=2000, ge=1, description="read requests one subject may make at once, above the rate"
    )
    rate_limited_subjects: int = Field(
        default=100_000,
        ge=1,
        description="subjects whose request counts Envoy keeps at once (least recently seen "
        "dropped first; a dropped subject starts again with a full burst)",
    )


def token_bucket(per_sec: int, burst: int) -> ec.Config:
    """An Envoy token bucket refilling ``per_sec`` tokens a second, holding ``burst``."""
    tokens = max(1, math.ceil(per_sec * _REFILL_STEP_SECS))
    interval_ms = round(tokens * 1000 / per_sec)
    return {
        "max_tokens": burst,
        "tokens_per_fill": tokens,
        "fill_interval": f"{interval_ms / 1000:g}s",
    }


def apply(config: ec.Config, limits: SubjectLimits) -> ec.Config:
    """A copy of ``config`` whose per-subject rate limits are ``limits``."""
    result = copy.deepcopy(config)
    ratelimit = ec.http_filter(result, LOCAL_RATELIMIT)
    ratelimit["max_dynamic_descriptors"] = limits.rate_limited_subjects
    rates = {
        APPEND: (limits.appends_per_sec, limits.append_burst),
        READ: (limits.reads_per_sec, limits.read_burst),
    }
    ratelimit["descriptors"] = [
        {
            "entries": [{"key": "sub", "value": ""}, {"key": "kind", "value": kind}],
            "token_bucket": token_bucket(per_sec, burst),
        }
        for kind, (per_sec, burst) in rates.items()
        # No descriptor, no limit: the filter has no default bucket to fall back on.
        if per_sec > 0
    ]
    return result
