"""``python -m ds_proxy.gateway``: Envoy with the committed dev config on chosen ports.

Renders ``proxy/envoy/envoy.yaml`` with the given ports to ``--config-out``
and replaces itself with Envoy (``exec``), so whoever launched it holds
Envoy's own pid: its signals reach Envoy, and the port it listens on is
owned by that pid. ``--offer-dev-token`` adds the route that answers the
session viewer's dev token (``ds_proxy.dev_token``; a dev stack only).
Repeat ``--upstream-port`` for several ds-server replicas (``make dev-cluster``).
``--tls-cert-file``/``--tls-key-file`` (or ``DS_PROXY__TLS_*``) serve TLS with
HTTP/2 (``ds_proxy.tls``); ``--local-tls-dir`` does so with a self-signed
certificate kept in that directory (``make dev TLS=1``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ds_settings import defaults

from ds_proxy import envoy_config as ec
from ds_proxy import limits, tls
from ds_proxy.dev_token import mint_dev_token, with_dev_token
from ds_proxy.local_cert import ensure_local_certificate
from ds_proxy.paths import DEV_CONFIG, envoy_binary
from ds_proxy.replicas import POLICIES, replicate

if TYPE_CHECKING:
    from collections.abc import Sequence

LOOPBACK = "127.0.0.1"


def envoy_argv(config_path: Path, *, concurrency: int = 2, log_level: str = "warn") -> list[str]:
    """The Envoy command line that serves ``config_path``."""
    return [
        envoy_binary(),
        "-c",
        str(config_path),
        # No shared memory: several Envoys (parallel tests, a dev stack) never clash.
        "--disable-hot-restart",
        "--concurrency",
        str(concurrency),
        "--log-level",
        log_level,
        # Access log lines appear within a quarter second, not Envoy's default ten.
        "--file-flush-interval-msec",
        "250",
    ]


def render(
    config_out: Path,
    *,
    listen_port: int,
    upstream_ports: Sequence[int],
    admin_port: int,
    offer_dev_token: bool = False,
    balance: str = "MAGLEV",
    tls_files: tls.TlsFiles | None = None,
    clock_skew_secs: int | None = None,
) -> Path:
    """Write the dev config, on these loopback ports, to ``config_out``.

    Several upstream ports: ds-server replicas on one shared store, balanced
    and health-checked (``ds_proxy.replicas``). The per-subject rate limits
    come from ``DS_PROXY__*`` (``ds_proxy.limits``). ``clock_skew_secs`` replaces
    the config's allowance for ``exp``/``nbf`` (tests of expiring tokens: 1;
    Envoy reads 0 as its default, 60).
    """
    config = ec.localize(
        limits.apply(ec.load(DEV_CONFIG), limits.SubjectLimits()),
        listen_port=listen_port,
        upstream_port=upstream_ports[0],
        admin_port=admin_port,
    )
    if len(upstream_ports) > 1:
        config = replicate(config, [(LOOPBACK, port) for port in upstream_ports], policy=balance)
    if clock_skew_secs is not None:
        for provider in ec.jwt_providers(config).values():
            provider["clock_skew_seconds"] = clock_skew_secs
    if offer_dev_token:
        # Only this rendered copy gets the route; no committed config holds it.
        config = with_dev_token(config, mint_dev_token())
    config_out.parent.mkdir(parents=True, exist_ok=True)
    if tls_files is not None:
        config = tls.with_tls(config, tls_files, config_out)
    return ec.write(config, config_out)


def main(argv: list[str] | None = None) -> None:
    """Render the config, then become Envoy."""
    parser = argparse.ArgumentParser(prog="python -m ds_proxy.gateway", description=__doc__)
    parser.add_argument("--listen-port", type=int, default=defaults.GATEWAY_PORT)
    parser.add_argument(
        "--upstream-port",
        type=int,
        action="append",
        help="a ds-server port (repeat for replicas on one shared store; "
        f"default {defaults.SERVER_PORT})",
    )
    parser.add_argument(
        "--balance",
        choices=POLICIES,
        default="MAGLEV",
        help="how requests spread over several replicas (default: by stream path)",
    )
    parser.add_argument("--admin-port", type=int, default=defaults.ADMIN_PORT)
    parser.add_argument("--config-out", type=Path, required=True)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--log-level", default="warn")
    parser.add_argument(
        "--offer-dev-token",
        action="store_true",
        help="answer GET /ui/dev-token.json with a token for every bucket (dev stacks only)",
    )
    parser.add_argument("--tls-cert-file", type=Path, help="serve TLS with this certificate")
    parser.add_argument("--tls-key-file", type=Path, help="... and this key")
    parser.add_argument(
        "--local-tls-dir",
        type=Path,
        help="serve TLS with a self-signed certificate kept here (made when missing)",
    )
    parser.add_argument(
        "--clock-skew-secs",
        type=int,
        choices=range(1, 301),
        metavar="1-300",
        help="the clock skew allowed for exp/nbf (default: the config's, 30; Envoy reads 0 "
        "as its own default, 60)",
    )
    args = parser.parse_args(argv)
    tls_files = tls.TlsFiles()  # DS_PROXY__TLS_* unless the flags say
    if args.local_tls_dir is not None:
        cert, key = ensure_local_certificate(args.local_tls_dir)
        tls_files = tls.TlsFiles(tls_cert_file=cert, tls_key_file=key)
    elif args.tls_cert_file is not None or args.tls_key_file is not None:
        tls_files = tls.TlsFiles(tls_cert_file=args.tls_cert_file, tls_key_file=args.tls_key_file)
    path = render(
        args.config_out,
        listen_port=args.listen_port,
        upstream_ports=args.upstream_port or [defaults.SERVER_PORT],
        admin_port=args.admin_port,
        offer_dev_token=args.offer_dev_token,
        balance=args.balance,
        tls_files=tls_files,
        clock_skew_secs=args.clock_skew_secs,
    )
    command = envoy_argv(path, concurrency=args.concurrency, log_level=args.log_level)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
