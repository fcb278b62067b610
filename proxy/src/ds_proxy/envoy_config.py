"""Reading, adjusting and writing Envoy bootstrap configs as plain data.

The committed configs (rendered from one template: ds_proxy.envoy_template)
are complete, valid Envoy files; code never templates text. It loads the
YAML, changes named fields (ports, issuer, JWKS source), and writes the
result, so `envoy --mode validate` checks exactly what is committed.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from pathlib import Path

Config = dict[str, Any]

HCM = "envoy.filters.network.http_connection_manager"
JWT_AUTHN = "envoy.filters.http.jwt_authn"
UPSTREAM_CLUSTER = "ds_server"
JWKS_CLUSTER = "jwks_provider"


def load(path: Path) -> Config:
    """Parse a YAML config."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(config, dict):
        raise ValueError(f"{path} is not an Envoy bootstrap mapping")
    return config


def dump(config: Config) -> str:
    """Serialise a config as YAML (key order kept)."""
    return yaml.safe_dump(config, sort_keys=False, width=1000)


def listener(config: Config) -> Config:
    """The single public listener."""
    listeners: list[Config] = config["static_resources"]["listeners"]
    if len(listeners) != 1:
        raise ValueError("expected exactly one listener")
    return listeners[0]


def http_connection_manager(config: Config) -> Config:
    """The listener's HTTP connection manager settings."""
    for chain in listener(config)["filter_chains"]:
        for network_filter in chain["filters"]:
            if network_filter["name"] == HCM:
                typed: Config = network_filter["typed_config"]
                return typed
    raise ValueError("no http_connection_manager")


def http_filter(config: Config, name: str) -> Config:
    """The typed config of the HTTP filter ``name``."""
    for entry in http_connection_manager(config)["http_filters"]:
        if entry["name"] == name:
            typed: Config = entry["typed_config"]
            return typed
    raise ValueError(f"no HTTP filter {name}")


def jwt_providers(config: Config) -> dict[str, Config]:
    """The jwt_authn providers by name."""
    providers: dict[str, Config] = http_filter(config, JWT_AUTHN)["providers"]
    return providers


def cluster(config: Config, name: str) -> Config:
    """The static cluster ``name``."""
    for entry in config["static_resources"]["clusters"]:
        if entry["name"] == name:
            found: Config = entry
            return found
    raise ValueError(f"no cluster {name}")


def endpoint_address(config: Config, cluster_name: str) -> Config:
    """The socket address of a cluster's single endpoint."""
    endpoints = cluster(config, cluster_name)["load_assignment"]["endpoints"]
    address: Config = endpoints[0]["lb_endpoints"][0]["endpoint"]["address"]["socket_address"]
    return address


def localize(
    config: Config,
    *,
    listen_port: int,
    upstream_port: int,
    admin_port: int | None,
    listen_address: str = "127.0.0.1",
    upstream_address: str = "127.0.0.1",
) -> Config:
    """A copy of ``config`` on the given loopback ports (admin removed when None)."""
    local = copy.deepcopy(config)
    socket = listener(local)["address"]["socket_address"]
    socket["address"] = listen_address
    socket["port_value"] = listen_port
    upstream = endpoint_address(local, UPSTREAM_CLUSTER)
    upstream["address"] = upstream_address
    upstream["port_value"] = upstream_port
    if admin_port is None:
        local.pop("admin", None)
    else:
        local["admin"]["address"]["socket_address"]["port_value"] = admin_port
    return local


def write(config: Config, path: Path) -> Path:
    """Write ``config`` to ``path`` and return it."""
    path.write_text(dump(config), encoding="utf-8")
    return path
