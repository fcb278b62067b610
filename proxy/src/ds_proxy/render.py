"""``ds-proxy-render``: the production Envoy config from the template and ``DS_PROXY__*``.

    DS_PROXY__ISSUER=https://login.example.com/ \\
    DS_PROXY__AUDIENCES=durable-streams \\
    DS_PROXY__JWKS_URI=https://login.example.com/.well-known/jwks.json \\
    ds-proxy-render --out /etc/envoy/envoy.yaml --validate
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError

from ds_proxy import envoy_config as ec
from ds_proxy import limits, tls
from ds_proxy.paths import PROD_TEMPLATE, envoy_binary
from ds_proxy.settings import ProxySettings

_RENDERED_HEADER = "# Rendered by ds-proxy-render from proxy/envoy/envoy.prod.yaml; edit that.\n"

# ds-server's defaults for the two ways it ends a live read.
_SERVER_LIVE_DEFAULTS = {
    "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": 60.0,
    "DS_SERVER__LONG_POLL_TIMEOUT_SECS": 30.0,
}


_SERVER_KEEP_ALIVE_DEFAULT = 75.0


def render_production(template: ec.Config, settings: ProxySettings) -> ec.Config:
    """A copy of ``template`` with the deployment's issuer, audiences, JWKS, addresses, limits."""
    config = limits.apply(template, settings)
    ec.listener(config)["address"]["socket_address"]["port_value"] = settings.listen_port
    config["admin"]["address"]["socket_address"]["port_value"] = settings.admin_port
    upstream = ec.endpoint_address(config, ec.UPSTREAM_CLUSTER)
    upstream["address"] = settings.upstream_host
    upstream["port_value"] = settings.upstream_port
    ec.http_connection_manager(config)["stream_idle_timeout"] = (
        f"{settings.stream_idle_timeout_secs}s"
    )
    for provider in ec.jwt_providers(config).values():
        provider["issuer"] = settings.issuer
        provider["audiences"] = list(settings.audiences)
        provider["clock_skew_seconds"] = settings.clock_skew_secs
        remote = provider["remote_jwks"]
        remote["http_uri"]["uri"] = settings.jwks_uri
        remote["cache_duration"] = f"{settings.jwks_cache_secs}s"
    _point_jwks_cluster(config, settings)
    return config


def _point_jwks_cluster(config: ec.Config, settings: ProxySettings) -> None:
    parts = urlsplit(settings.jwks_uri)
    host = parts.hostname or ""
    secure = parts.scheme == "https"
    jwks = ec.cluster(config, ec.JWKS_CLUSTER)
    address = ec.endpoint_address(config, ec.JWKS_CLUSTER)
    address["address"] = host
    address["port_value"] = parts.port or (443 if secure else 80)
    if secure:
        tls = jwks["transport_socket"]["typed_config"]
        tls["sni"] = host
        tls["common_tls_context"]["validation_context"]["trusted_ca"] = {
            "filename": settings.ca_bundle
        }
    else:
        jwks.pop("transport_socket", None)


def check_live_timeouts(settings: ProxySettings, environ: dict[str, str]) -> None:
    """Refuse an idle timeout that would cut SSE or long-poll before the server does."""
    for name, default in _SERVER_LIVE_DEFAULTS.items():
        server_secs = float(environ.get(name, default))
        if settings.stream_idle_timeout_secs <= server_secs:
            raise ValueError(
                f"DS_PROXY__STREAM_IDLE_TIMEOUT_SECS ({settings.stream_idle_timeout_secs}) "
                f"must exceed {name} ({server_secs:g})"
            )


def check_upstream_idle_timeout(config: ec.Config, environ: dict[str, str]) -> None:
    """Refuse an upstream idle timeout that lets ds-server close idle connections first.

    Whoever closes an idle connection races the other side's next request on
    it; Envoy must be the one that closes, or a request can meet a reset.
    """
    options = ec.cluster(config, ec.UPSTREAM_CLUSTER)["typed_extension_protocol_options"]
    http_options = options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
    envoy_secs = float(http_options["common_http_protocol_options"]["idle_timeout"].rstrip("s"))
    server_secs = float(environ.get("DS_SERVER__KEEP_ALIVE_SECS", _SERVER_KEEP_ALIVE_DEFAULT))
    if envoy_secs >= server_secs:
        raise ValueError(
            f"DS_SERVER__KEEP_ALIVE_SECS ({server_secs:g}) must exceed the upstream idle "
            f"timeout of the template ({envoy_secs:g} s)"
        )


def validate(path: Path) -> None:
    """Run ``envoy --mode validate`` on a config file; raise on failure."""
    result = subprocess.run(
        [envoy_binary(), "--mode", "validate", "--disable-hot-restart", "-c", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise ValueError(f"envoy rejected {path}:\n{result.stdout}{result.stderr}")


def main(argv: list[str] | None = None) -> None:
    """Render, optionally validate, and write (or print) the production config."""
    parser = argparse.ArgumentParser(
        prog="ds-proxy-render",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--template", type=Path, default=PROD_TEMPLATE)
    parser.add_argument("--out", type=Path, help="write here (default: stdout)")
    parser.add_argument("--validate", action="store_true", help="run envoy --mode validate")
    args = parser.parse_args(argv)
    try:
        settings = ProxySettings()  # type: ignore[call-arg]  # fields come from the environment
        check_live_timeouts(settings, dict(os.environ))
        rendered = render_production(ec.load(args.template), settings)
        check_upstream_idle_timeout(rendered, dict(os.environ))
    except (ValidationError, ValueError) as exc:
        parser.exit(2, f"ds-proxy-render: {exc}\n")
    if settings.enabled and args.out is None:
        parser.exit(
            2, "ds-proxy-render: with TLS, give --out (the certificate's SDS file goes beside it)\n"
        )
    if args.out is not None:
        try:
            rendered = tls.with_tls(rendered, settings, args.out)
        except ValueError as exc:
            parser.exit(2, f"ds-proxy-render: {exc}\n")
    text = _RENDERED_HEADER + ec.dump(rendered)
    if args.out is None and not args.validate:
        sys.stdout.write(text)
        return
    out = args.out or Path(os.environ.get("TMPDIR", "/tmp")) / "envoy.rendered.yaml"
    out.write_text(text, encoding="utf-8")
    if args.validate:
        try:
            validate(out)
        except ValueError as exc:
            parser.exit(1, f"ds-proxy-render: {exc}\n")
    if args.out is None:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
