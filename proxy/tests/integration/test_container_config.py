"""``ds-proxy-serve`` picks the config a container runs, and Envoy accepts both."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_proxy import envoy_config as ec
from ds_proxy.container import container_config
from ds_proxy.render import validate
from pydantic import ValidationError

if TYPE_CHECKING:
    from pathlib import Path

PRODUCTION = {
    "DS_PROXY__ISSUER": "https://login.example.com/",
    "DS_PROXY__AUDIENCES": "durable-streams",
    "DS_PROXY__JWKS_URI": "https://login.example.com/.well-known/jwks.json",
    "DS_PROXY__UPSTREAM_HOST": "server",
}


@pytest.fixture(autouse=True)
def _no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ISSUER", "AUDIENCES", "JWKS_URI", "UPSTREAM_HOST", "UPSTREAM_PORT"):
        monkeypatch.delenv(f"DS_PROXY__{name}", raising=False)


def test_without_a_jwks_uri_the_test_key_config_runs_on_every_interface(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DS_PROXY__UPSTREAM_HOST", "server")
    config, description = container_config()
    assert "TEST-ONLY" in description
    assert ec.listener(config)["address"]["socket_address"] == {
        "address": "0.0.0.0",
        "port_value": 8080,
    }
    assert config["admin"]["address"]["socket_address"]["address"] == "0.0.0.0"
    upstream = ec.cluster(config, ec.UPSTREAM_CLUSTER)
    assert upstream["type"] == "STRICT_DNS"
    assert ec.endpoint_address(config, ec.UPSTREAM_CLUSTER) == {
        "address": "server",
        "port_value": 4437,
    }
    assert all("local_jwks" in provider for provider in ec.jwt_providers(config).values())
    validate(ec.write(config, tmp_path / "envoy.yaml"))


def test_with_a_jwks_uri_the_production_template_is_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PRODUCTION.items():
        monkeypatch.setenv(name, value)
    config, description = container_config()
    assert PRODUCTION["DS_PROXY__JWKS_URI"] in description
    for provider in ec.jwt_providers(config).values():
        assert provider["issuer"] == PRODUCTION["DS_PROXY__ISSUER"]
        assert provider["remote_jwks"]["http_uri"]["uri"] == PRODUCTION["DS_PROXY__JWKS_URI"]
    # Production keeps admin on loopback.
    assert config["admin"]["address"]["socket_address"]["address"] == "127.0.0.1"
    validate(ec.write(config, tmp_path / "envoy.yaml"))


def test_a_jwks_uri_without_an_issuer_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_PROXY__JWKS_URI", PRODUCTION["DS_PROXY__JWKS_URI"])
    with pytest.raises(ValidationError, match="issuer"):
        container_config()
