"""The committed Envoy configs are the template's renderings, byte for byte."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_proxy import envoy_config as ec
from ds_proxy import envoy_template as et
from ds_proxy.paths import TEMPLATE

if TYPE_CHECKING:
    from pathlib import Path

VARIANTS = pytest.mark.parametrize("variant", list(et.VARIANTS.values()), ids=list(et.VARIANTS))


@VARIANTS
def test_the_committed_config_is_its_rendering(variant: et.Variant) -> None:
    # `make envoy-configs` writes them; an edit to a rendered file alone fails here.
    assert variant.path.read_text(encoding="utf-8") == et.rendered_text(variant)


def test_nothing_is_stale() -> None:
    assert et.stale() == []


def test_the_template_leaves_what_differs_to_the_variants() -> None:
    template = ec.load(TEMPLATE)
    assert "address" not in ec.listener(template)["address"]["socket_address"]
    assert "type" not in ec.cluster(template, ec.UPSTREAM_CLUSTER)
    for provider in ec.jwt_providers(template).values():
        assert not {"issuer", "audiences", "local_jwks", "remote_jwks"} & set(provider)


@VARIANTS
def test_rendering_leaves_the_template_alone(variant: et.Variant) -> None:
    template = ec.load(TEMPLATE)
    et.render(template, variant)
    assert template == ec.load(TEMPLATE)


def test_variants_differ_only_where_they_say() -> None:
    dev, container, prod = (ec.load(v.path) for v in (et.DEV, et.CONTAINER, et.PRODUCTION))
    assert ec.endpoint_address(dev, ec.UPSTREAM_CLUSTER)["address"] == "127.0.0.1"
    assert ec.cluster(dev, ec.UPSTREAM_CLUSTER)["type"] == "STATIC"
    for by_name in (container, prod):
        assert ec.cluster(by_name, ec.UPSTREAM_CLUSTER)["type"] == "STRICT_DNS"
        assert ec.listener(by_name)["address"]["socket_address"]["address"] == "0.0.0.0"
    assert container["admin"]["address"]["socket_address"]["address"] == "0.0.0.0"
    assert prod["admin"]["address"]["socket_address"]["address"] == "127.0.0.1"
    assert ec.jwt_providers(container) == ec.jwt_providers(dev)
    assert [c["name"] for c in prod["static_resources"]["clusters"]] == [
        ec.UPSTREAM_CLUSTER,
        ec.JWKS_CLUSTER,
    ]


def test_check_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "envoy.yaml"
    copy.write_text(et.rendered_text(et.DEV) + "# edited by hand\n", encoding="utf-8")
    monkeypatch.setitem(et.VARIANTS, "dev", et.Variant(**{**vars(et.DEV), "path": copy}))
    assert et.stale() == [copy]
    with pytest.raises(SystemExit) as exited:
        et.main(["--check"])
    assert exited.value.code == 1
