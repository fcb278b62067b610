"""Envoy in front of several ds-server replicas: endpoints, balancing, health checks, retries.

The replicas share one Postgres store (docs/scale-out.md). Any replica can
serve any request, so balancing is a choice of speed, not of correctness:

- ``MAGLEV`` (the default) hashes the stream path, query string left out, so
  a stream's appends and reads stick to one replica (its cached state stays
  current and its appends group-commit together); when a replica fails only
  its streams move.
- ``ROUND_ROBIN`` spreads consecutive requests over all replicas (what the
  conformance run through the cluster uses, to exercise every cross-replica
  path).

Active health checks on ``/healthz`` take a killed replica out within about a
second; requests that never reached a replica (refused connection, reset
before the request was sent) are retried on another, which is safe for any
method. A request a replica received and then lost is not retried: the
client's own retry (idempotent producers) decides.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from ds_proxy import envoy_config as ec

if TYPE_CHECKING:
    from collections.abc import Sequence

POLICIES = ("MAGLEV", "ROUND_ROBIN")
HEALTH_PATH = "/healthz"
# The path without its query: the part of a request that names the stream.
_PATH_ONLY = {
    "header": {
        "header_name": ":path",
        "regex_rewrite": {"pattern": {"regex": r"\?.*$"}, "substitution": ""},
    }
}
_SAFE_RETRIES = {
    "retry_on": "connect-failure,refused-stream,reset-before-request",
    "num_retries": 3,
    "retry_host_predicate": [
        {
            "name": "envoy.retry_host_predicates.previous_hosts",
            "typed_config": {
                "@type": "type.googleapis.com/"
                "envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate"
            },
        }
    ],
    "host_selection_retry_max_attempts": 5,
}


def replicate(
    config: ec.Config,
    upstreams: Sequence[tuple[str, int]],
    *,
    policy: str = "MAGLEV",
) -> ec.Config:
    """A copy of ``config`` whose ds-server cluster is ``upstreams``, balanced by ``policy``."""
    if policy not in POLICIES:
        raise ValueError(f"balancing policy must be one of {', '.join(POLICIES)}")
    if not upstreams:
        raise ValueError("at least one upstream")
    result = copy.deepcopy(config)
    cluster = ec.cluster(result, ec.UPSTREAM_CLUSTER)
    cluster["lb_policy"] = policy
    cluster["load_assignment"]["endpoints"] = [
        {
            "lb_endpoints": [
                {"endpoint": {"address": {"socket_address": {"address": host, "port_value": port}}}}
                for host, port in upstreams
            ]
        }
    ]
    cluster["health_checks"] = [
        {
            "timeout": "1s",
            "interval": "1s",
            # Also while the cluster is idle (Envoy's default then is 60 s).
            "no_traffic_interval": "1s",
            "unhealthy_threshold": 1,
            "healthy_threshold": 1,
            "http_health_check": {"path": HEALTH_PATH},
        }
    ]
    # Any upstream connection failure marks the host failed at once, between checks.
    cluster["outlier_detection"] = {
        "consecutive_local_origin_failure": 1,
        "split_external_local_origin_errors": True,
        "base_ejection_time": "2s",
        "max_ejection_percent": 100,
    }
    for route in _upstream_routes(result):
        action = route["route"]
        if policy == "MAGLEV":
            action["hash_policy"] = [copy.deepcopy(_PATH_ONLY)]
        action["retry_policy"] = copy.deepcopy(_SAFE_RETRIES)
    return result


def _upstream_routes(config: ec.Config) -> list[ec.Config]:
    routes: list[ec.Config] = []
    hcm = ec.http_connection_manager(config)
    for host in hcm["route_config"]["virtual_hosts"]:
        for route in host["routes"]:
            action = route.get("route")
            if action is not None and action.get("cluster") == ec.UPSTREAM_CLUSTER:
                routes.append(route)
    return routes
