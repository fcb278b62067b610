"""The gateway's Envoy configs, rendered from one template.

``proxy/envoy/envoy.template.yaml`` holds everything the configs share.
Each variant sets only what differs between them: where the listener and
admin bind, how the ``ds_server`` cluster finds ds-server, and each
jwt_authn provider's issuer, audiences and JWKS source (with the cluster the
production JWKS is fetched from). The rendered files are committed, complete
and valid, so Envoy, ``ds-proxy-render`` and readers use them as they are;
``python -m ds_proxy.envoy_template --check`` (and a test) fails while one
differs from its rendering.
"""

from __future__ import annotations

import argparse
import copy
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ds_proxy import envoy_config as ec
from ds_proxy.keys import jwks_json, load_private_key
from ds_proxy.paths import CONTAINER_CONFIG, DEV_CONFIG, PROD_TEMPLATE, TEMPLATE

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

# Placeholders of the production template, filled by ds-proxy-render.
PLACEHOLDER_HOST = "issuer.example.invalid"
PLACEHOLDER_ISSUER = f"https://{PLACEHOLDER_HOST}/"
PLACEHOLDER_JWKS_URI = f"https://{PLACEHOLDER_HOST}/.well-known/jwks.json"
TEST_ISSUER = "durable-streams-test"
AUDIENCES = ["durable-streams"]

_DEV_HEADER = """\
# Envoy in front of ds-server for LOCAL DEVELOPMENT AND TESTS ONLY.
#
# Tokens are checked against the committed test-only key in proxy/keys/
# (inlined below as local_jwks): its private half is public, so this file must
# never guard real data. Production uses envoy.prod.yaml (remote_jwks),
# rendered by `ds-proxy-render`. docs/security.md explains every choice here.
#
# Ports: Envoy 127.0.0.1:8080 -> ds-server 127.0.0.1:4437; admin 127.0.0.1:9901.
# `make dev` and the tests rewrite the ports (ds_proxy.envoy_config.localize).
"""

_CONTAINER_HEADER = """\
# Envoy in a container with the TEST-ONLY key: what `ds-proxy-serve` runs
# without DS_PROXY__JWKS_URI (docker-compose.yml). As envoy.yaml, but the
# listener and admin bind every interface (the container's loopback is its
# own; compose publishes admin on the host's loopback only) and ds-server is
# found by name (DS_PROXY__UPSTREAM_HOST and the ports replace these).
"""

_PROD_HEADER = """\
# Envoy in front of ds-server: PRODUCTION TEMPLATE.
#
# Render it with `ds-proxy-render` (ds_proxy.render), which fills in from the
# environment:
#   DS_PROXY__ISSUER        the token issuer ("iss")
#   DS_PROXY__AUDIENCES     accepted audiences ("aud"), comma-separated
#   DS_PROXY__JWKS_URI      the identity provider's JWKS URL (https)
#   DS_PROXY__UPSTREAM_HOST / DS_PROXY__UPSTREAM_PORT   ds-server (ds-server:4437)
# and a few optional ones (see docs/security.md). The template itself is a
# valid Envoy config with placeholder values, so `envoy --mode validate` checks
# it as committed.
"""

_GENERATED = """\
#
# GENERATED from envoy.template.yaml by `make envoy-configs`: edit the template;
# its comments explain each setting.

"""


def _test_key_providers() -> dict[str, Any]:
    return {
        "issuer": TEST_ISSUER,
        "audiences": list(AUDIENCES),
        "local_jwks": {"inline_string": jwks_json(load_private_key())},
    }


def _remote_jwks_providers() -> dict[str, Any]:
    return {
        "issuer": PLACEHOLDER_ISSUER,
        "audiences": list(AUDIENCES),
        "remote_jwks": {
            "http_uri": {"uri": PLACEHOLDER_JWKS_URI, "cluster": ec.JWKS_CLUSTER, "timeout": "5s"},
            "cache_duration": "300s",
            "async_fetch": {},
            "retry_policy": {"num_retries": 3},
        },
    }


def _no_clusters() -> list[ec.Config]:
    return []


def _jwks_cluster() -> list[ec.Config]:
    """The identity provider's JWKS endpoint (ds-proxy-render points it at the real one)."""
    return [
        {
            "name": ec.JWKS_CLUSTER,
            "type": "STRICT_DNS",
            "dns_lookup_family": "V4_PREFERRED",
            "connect_timeout": "5s",
            "load_assignment": {
                "cluster_name": ec.JWKS_CLUSTER,
                "endpoints": [
                    {
                        "lb_endpoints": [
                            {
                                "endpoint": {
                                    "address": {
                                        "socket_address": {
                                            "address": PLACEHOLDER_HOST,
                                            "port_value": 443,
                                        }
                                    }
                                }
                            }
                        ]
                    }
                ],
            },
            "transport_socket": {
                "name": "envoy.transport_sockets.tls",
                "typed_config": {
                    "@type": "type.googleapis.com/"
                    "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
                    "sni": PLACEHOLDER_HOST,
                    "common_tls_context": {
                        "validation_context": {
                            "trusted_ca": {"filename": "/etc/ssl/certs/ca-certificates.crt"}
                        }
                    },
                },
            },
        }
    ]


LOOPBACK = "127.0.0.1"
EVERY_INTERFACE = "0.0.0.0"
BY_NAME = "ds-server"


@dataclass(frozen=True)
class Variant:
    """What one rendered config sets over the template (by default: the dev config's)."""

    path: Path
    header: str
    listen_address: str = LOOPBACK
    admin_address: str = LOOPBACK
    upstream_host: str = LOOPBACK
    providers: Callable[[], dict[str, Any]] = _test_key_providers
    extra_clusters: Callable[[], list[ec.Config]] = _no_clusters

    @property
    def upstream_by_name(self) -> bool:
        """A host name (found through DNS), not an address."""
        return not self.upstream_host.replace(".", "").isdigit()


DEV = Variant(path=DEV_CONFIG, header=_DEV_HEADER)
CONTAINER = Variant(
    path=CONTAINER_CONFIG,
    header=_CONTAINER_HEADER,
    listen_address=EVERY_INTERFACE,
    admin_address=EVERY_INTERFACE,
    upstream_host=BY_NAME,
)
PRODUCTION = Variant(
    path=PROD_TEMPLATE,
    header=_PROD_HEADER,
    # Admin stays on loopback (the default): it can change Envoy's state.
    listen_address=EVERY_INTERFACE,
    upstream_host=BY_NAME,
    providers=_remote_jwks_providers,
    extra_clusters=_jwks_cluster,
)
VARIANTS = {"dev": DEV, "container": CONTAINER, "prod": PRODUCTION}


def render(template: ec.Config, variant: Variant) -> ec.Config:
    """The config ``variant`` makes of ``template`` (which is left as it was)."""
    config = copy.deepcopy(template)
    config["admin"]["address"]["socket_address"]["address"] = variant.admin_address
    _bind(ec.listener(config)["address"], variant.listen_address)
    providers = ec.jwt_providers(config)
    for name, shared in list(providers.items()):
        providers[name] = {**variant.providers(), **shared}
    clusters: list[ec.Config] = config["static_resources"]["clusters"]
    upstream = ec.cluster(config, ec.UPSTREAM_CLUSTER)
    name = upstream.pop("name")
    found = (
        {"type": "STRICT_DNS", "dns_lookup_family": "V4_PREFERRED"}
        if variant.upstream_by_name
        else {"type": "STATIC"}
    )
    clusters[clusters.index(upstream)] = {"name": name, **found, **upstream}
    endpoints = ec.cluster(config, ec.UPSTREAM_CLUSTER)["load_assignment"]["endpoints"]
    _bind(endpoints[0]["lb_endpoints"][0]["endpoint"]["address"], variant.upstream_host)
    clusters.extend(variant.extra_clusters())
    return config


def _bind(address: ec.Config, host: str) -> None:
    """Put ``host`` first in ``address``'s socket_address (the template gives the port)."""
    address["socket_address"] = {"address": host, **address["socket_address"]}


def rendered_text(variant: Variant, template_path: Path = TEMPLATE) -> str:
    """The file ``variant`` renders to: its header, then the config."""
    return variant.header + _GENERATED + ec.dump(render(ec.load(template_path), variant))


def stale() -> list[Path]:
    """The committed configs that differ from their rendering."""
    return [
        variant.path
        for variant in VARIANTS.values()
        if not variant.path.is_file()
        or variant.path.read_text(encoding="utf-8") != rendered_text(variant)
    ]


def main(argv: list[str] | None = None) -> None:
    """Write the rendered configs, or check that the committed ones are current."""
    parser = argparse.ArgumentParser(prog="python -m ds_proxy.envoy_template", description=__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="render every variant to its file")
    action.add_argument("--check", action="store_true", help="fail while a file is stale")
    args = parser.parse_args(argv)
    if args.write:
        for variant in VARIANTS.values():
            variant.path.write_text(rendered_text(variant), encoding="utf-8")
        return
    outdated = stale()
    if outdated:
        names = ", ".join(path.name for path in outdated)
        parser.exit(1, f"stale Envoy configs: {names} (run `make envoy-configs`)\n")
    print("Envoy configs: current", file=sys.stderr)


if __name__ == "__main__":
    main()
