"""deploy/k8s: the Kubernetes manifests, checked without a cluster.

No Kubernetes cluster runs on these machines, so nothing here was applied.
What is checked: every file parses; each container runs the image compose
builds for that component, is given only variables its settings read (or
the shared DS_SERVER_URL / POSTGRES_URL), listens on the ports those
variables set and compose uses; every Service and probe points at a port
the container declares; ds-server runs one replica on a persistent volume
(one server per data directory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from test_compose_file import _names, services

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
# Each container, its compose service, and the settings that read its variables.
COMPONENTS = {
    "ds-server": ("server", ["ds_server.settings:Settings"]),
    "envoy": ("envoy", ["ds_proxy.settings:ProxySettings"]),
    "ds-sync": ("sync-service", ["ds_sync.settings:Settings"]),
}
SHARED = {"DS_SERVER_URL", "POSTGRES_URL"}


def documents() -> list[dict[str, Any]]:
    return [doc for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def containers() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(workload, container) for every container of every workload."""
    return [
        (doc, container)
        for doc in documents()
        if doc["kind"] in {"Deployment", "StatefulSet"}
        for container in doc["spec"]["template"]["spec"]["containers"]
    ]


def test_every_component_has_a_manifest() -> None:
    assert {c["name"] for _, c in containers()} == set(COMPONENTS)
    for doc in documents():
        assert doc["apiVersion"] in {"v1", "apps/v1"}
        assert doc["metadata"]["name"]


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_images_variables_and_ports_match_compose_and_settings(name: str) -> None:
    service, targets = COMPONENTS[name]
    _, container = next((w, c) for w, c in containers() if c["name"] == name)
    compose = services[service]
    assert container["image"] == compose["image"]
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert set(env) - SHARED <= _names(targets)
    declared = {port["containerPort"] for port in container["ports"]}
    port_settings = {k: int(v) for k, v in env.items() if k.endswith("_PORT") and v}
    listening = {p for k, p in port_settings.items() if not k.endswith("UPSTREAM_PORT")}
    assert listening - {9901} <= declared  # Envoy's admin stays on the pod's loopback
    compose_env = compose.get("environment", {})
    for key, port in port_settings.items():
        if key in compose_env:
            assert str(port) == str(compose_env[key]), key


def test_services_and_probes_name_declared_ports() -> None:
    ports = {c["name"]: {p["name"] for p in c["ports"]} for _, c in containers()}
    for doc in documents():
        if doc["kind"] == "Service":
            app = doc["spec"]["selector"]["app.kubernetes.io/name"]
            assert {p["targetPort"] for p in doc["spec"]["ports"]} <= ports[app]
    for _, container in containers():
        for probe in ("readinessProbe", "livenessProbe"):
            spec = container.get(probe)
            if spec is not None:
                action = spec.get("httpGet") or spec.get("tcpSocket")
                assert action["port"] in ports[container["name"]]
                assert spec.get("httpGet", {}).get("path", "/healthz") == "/healthz"


def test_ds_server_is_one_replica_on_a_persistent_volume() -> None:
    (server,) = [w for w, c in containers() if c["name"] == "ds-server"]
    assert server["kind"] == "StatefulSet"
    assert server["spec"]["replicas"] == 1
    mounts = server["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    claims = [t["metadata"]["name"] for t in server["spec"]["volumeClaimTemplates"]]
    env = {
        e["name"]: e.get("value")
        for e in server["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert any(
        m["name"] in claims and env["DS_STORAGE__DATA_DIR"].startswith(m["mountPath"])
        for m in mounts
    )
    assert env["DS_AUTH__MODE"] == "gateway"
