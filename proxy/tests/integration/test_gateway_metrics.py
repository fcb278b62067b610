"""Metrics are for the operator's scraper, never public through the gateway.

ds-server serves ``/metrics`` on a listener of its own (``DS_METRICS__PORT``)
that Envoy has no route to; Envoy's ``/stats/prometheus`` is on its admin
port, on loopback. Through the public listener both paths reach only the
application, which has neither.
"""

from __future__ import annotations

import httpx
import pytest
from gateway_stack import ADMIN, GatewayStack, bearer, tag

METRIC_PATHS = ["/metrics", "/stats/prometheus", "/stats"]


@pytest.mark.parametrize("path", METRIC_PATHS)
def test_no_metrics_through_the_gateway_without_a_token(
    stack: GatewayStack, client: httpx.Client, path: str
) -> None:
    request_id, headers = tag()
    response = client.get(path, headers=headers)
    assert response.status_code == 401
    assert not stack.reached_server(request_id)


@pytest.mark.parametrize("path", METRIC_PATHS)
def test_no_metrics_through_the_gateway_with_a_token(client: httpx.Client, path: str) -> None:
    response = client.get(path, headers=bearer(ADMIN))
    assert response.status_code == 404
    assert "ds_server_" not in response.text
    assert "envoy_" not in response.text


def test_envoy_exports_prometheus_stats_on_its_loopback_admin_port(stack: GatewayStack) -> None:
    assert httpx.get(f"{stack.url}/healthz").status_code == 200  # one request at least
    response = httpx.get(f"http://127.0.0.1:{stack.admin_port}/stats/prometheus", timeout=10)
    assert response.status_code == 200
    assert "# TYPE envoy_http_downstream_rq_total counter" in response.text
    assert "envoy_cluster_upstream_rq_total" in response.text
