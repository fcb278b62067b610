"""Every component's metrics, scraped as an operator's Prometheus would, and the dashboard.

``docs/grafana/durable-sessions.json`` queries only metrics the stack
exports: each name in its expressions is a family of a real scrape of
ds-server, ds-sync or Envoy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from e2e_stack import unique
from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from e2e_stack import E2E
    from prometheus_client.metrics_core import Metric

DASHBOARD = Path(__file__).resolve().parents[1] / "docs" / "grafana" / "durable-sessions.json"
_METRIC = re.compile(r"\b((?:ds_server|ds_sync|envoy)_[a-z0-9_]+)")
# Label matchers and grouping clauses name labels, not metrics.
_LABELS = re.compile(r"\{[^}]*\}|\b(?:by|without)\s*\([^)]*\)")
_SERIES_SUFFIX = re.compile(r"_(bucket|count|sum|total)$")


def scrape(url: str) -> dict[str, Metric]:
    response = httpx.get(url, timeout=10)
    assert response.status_code == 200, url
    return {family.name: family for family in text_string_to_metric_families(response.text)}


def queried_metrics(dashboard: dict[str, object]) -> set[str]:
    panels = dashboard["panels"]
    assert isinstance(panels, list)
    names: set[str] = set()
    for panel in panels:
        for target in panel.get("targets", []):
            expression = _LABELS.sub("", target["expr"])
            names |= {_SERIES_SUFFIX.sub("", name) for name in _METRIC.findall(expression)}
    return names


def test_each_component_exports_and_the_dashboard_queries_only_what_they_export(
    e2e: E2E,
) -> None:
    config = e2e.stack.config
    with e2e.client() as client:
        stream = f"/v1/stream/{unique('metered')}/room"
        assert client.put(stream, headers={"Content-Type": "application/json"}).status_code == 201
        assert client.post(stream, json={"n": 1}).status_code == 204
        # Never through the gateway, whatever the token.
        assert client.get("/metrics").status_code == 404
    server = scrape(config.server_metrics_url)
    sync = scrape(f"{config.sync_url}/metrics")
    envoy = scrape(f"{config.admin_url}/stats/prometheus")
    requests = {
        (s.labels["operation"], s.labels["status"]): s.value
        for s in server["ds_server_requests"].samples
    }
    assert requests["create", "201"] >= 1
    assert requests["append", "204"] >= 1
    assert "ds_sync_events" in sync
    assert "envoy_http_downstream_rq_xx" in envoy

    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    used = queried_metrics(dashboard)
    assert {"ds_server_requests", "ds_sync_lag_seconds", "envoy_http_downstream_rq_xx"} <= used
    # Growth before it hurts: retained bytes per stream family, mirrors' snapshot age.
    assert {"ds_server_family_retained_bytes", "ds_sync_table_snapshot_age_seconds"} <= used
    exported = server.keys() | sync.keys() | envoy.keys()
    assert used - exported == set()
