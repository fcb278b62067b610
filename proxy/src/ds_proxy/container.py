"""``ds-proxy-serve``: Envoy as a container runs it (the proxy image's command).

With ``DS_PROXY__JWKS_URI`` set, the production template rendered from the
``DS_PROXY__*`` settings (``remote_jwks``; the same checks as
``ds-proxy-render``). Without it, ``proxy/envoy/envoy.container.yaml``, which
trusts the committed TEST-ONLY key, listening on all interfaces with ds-server
at ``DS_PROXY__UPSTREAM_HOST``: what docker-compose.yml runs. Either way the
config is written to ``--out`` and Envoy replaces this process.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pydantic import ValidationError

from ds_proxy import envoy_config as ec
from ds_proxy import limits, tls
from ds_proxy.paths import CONTAINER_CONFIG, PROD_TEMPLATE, envoy_binary
from ds_proxy.render import check_live_timeouts, check_upstream_idle_timeout, render_production
from ds_proxy.settings import GatewayAddresses, ProxySettings

PRODUCTION_SWITCH = "DS_PROXY__JWKS_URI"


def development_config(container: ec.Config, addresses: GatewayAddresses) -> ec.Config:
    """The container config (every interface, ds-server by name) on ``addresses``."""
    return ec.localize(
        container,
        listen_port=addresses.listen_port,
        upstream_port=addresses.upstream_port,
        admin_port=addresses.admin_port,
        listen_address="0.0.0.0",
        upstream_address=addresses.upstream_host,
    )


def container_config() -> tuple[ec.Config, str]:
    """The config to run, from the environment, and one line saying which it is.

    Raises ValueError (pydantic's ValidationError among them) when a setting is unusable.
    """
    environ = dict(os.environ)
    if environ.get(PRODUCTION_SWITCH):
        settings = ProxySettings()  # type: ignore[call-arg]  # fields come from the environment
        check_live_timeouts(settings, environ)
        rendered = render_production(ec.load(PROD_TEMPLATE), settings)
        check_upstream_idle_timeout(rendered, environ)
        return rendered, f"production config: tokens checked against {settings.jwks_uri}"
    container = limits.apply(ec.load(CONTAINER_CONFIG), limits.SubjectLimits())
    config = development_config(container, GatewayAddresses())
    return config, (
        "development config: tokens checked against the TEST-ONLY key in proxy/keys "
        f"(set {PRODUCTION_SWITCH} for production)"
    )


def main(argv: list[str] | None = None) -> None:
    """Write the chosen config and exec Envoy on it."""
    parser = argparse.ArgumentParser(prog="ds-proxy-serve", description=__doc__)
    default_out = Path(os.environ.get("TMPDIR", "/tmp")) / "envoy.yaml"
    parser.add_argument("--out", type=Path, default=default_out, help="where the config goes")
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    try:
        config, description = container_config()
    except (ValidationError, ValueError) as exc:
        parser.exit(2, f"ds-proxy-serve: {exc}\n")
    try:
        config = tls.with_tls(config, tls.TlsFiles(), args.out)
    except (ValidationError, ValueError) as exc:
        parser.exit(2, f"ds-proxy-serve: {exc}\n")
    path = ec.write(config, args.out)
    print(f"ds-proxy-serve: {description}", file=sys.stderr, flush=True)
    envoy = envoy_binary()
    # No hot restart: it needs shared memory a container may not have.
    os.execv(
        envoy,
        [envoy, "-c", str(path), "--disable-hot-restart", "--log-level", args.log_level],
    )


if __name__ == "__main__":
    main()
