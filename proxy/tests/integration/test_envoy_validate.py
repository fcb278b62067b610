"""Every committed config, and a rendered production config, pass ``envoy --mode validate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_proxy import envoy_config as ec
from ds_proxy.local_cert import install, make_certificate
from ds_proxy.paths import CONTAINER_CONFIG, DEV_CONFIG, PROD_TEMPLATE
from ds_proxy.render import render_production, validate
from ds_proxy.settings import ProxySettings
from ds_proxy.tls import with_tls

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    "config",
    [DEV_CONFIG, CONTAINER_CONFIG, PROD_TEMPLATE],
    ids=["dev", "container", "prod-template"],
)
def test_committed_config_is_valid(config: Path) -> None:
    validate(config)


def test_rendered_production_config_is_valid(tmp_path: Path) -> None:
    settings = ProxySettings(
        issuer="https://login.example.com/",
        audiences=("durable-streams", "durable-streams-admin"),
        jwks_uri="https://login.example.com/.well-known/jwks.json",
        upstream_host="10.0.0.7",
        upstream_port=4437,
    )
    rendered = render_production(ec.load(PROD_TEMPLATE), settings)
    validate(ec.write(rendered, tmp_path / "envoy.yaml"))


def test_a_broken_config_is_rejected(tmp_path: Path) -> None:
    config = ec.load(DEV_CONFIG)
    ec.jwt_providers(config)["ds_bearer"]["no_such_field"] = True
    with pytest.raises(ValueError, match="envoy rejected"):
        validate(ec.write(config, tmp_path / "broken.yaml"))


def test_rendered_production_config_with_tls_is_valid(tmp_path: Path) -> None:
    cert, key = install(tmp_path / "certs", *make_certificate())
    settings = ProxySettings(
        issuer="https://login.example.com/",
        audiences=("durable-streams",),
        jwks_uri="https://login.example.com/.well-known/jwks.json",
        tls_cert_file=cert,
        tls_key_file=key,
    )
    out = tmp_path / "envoy.yaml"
    rendered = with_tls(render_production(ec.load(PROD_TEMPLATE), settings), settings, out)
    validate(ec.write(rendered, out))
