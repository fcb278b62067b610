"""``make dev``: ds-server on loopback with Envoy in front of it; Ctrl-C stops both.

Only Envoy's port is meant to be used: ds-server listens on 127.0.0.1 and
enforces bucket scopes from the identity Envoy forwards (DS_AUTH__MODE=gateway).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import TYPE_CHECKING, NoReturn

from ds_proxy import envoy_config as ec
from ds_proxy import ports, processes
from ds_proxy.dev_token import mint_dev_token, with_dev_token
from ds_proxy.paths import DEV_CONFIG

if TYPE_CHECKING:
    from types import FrameType


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


_PORT_FLAGS = "other ports: --listen-port, --server-port, --admin-port"


def _fail(message: str) -> NoReturn:
    print(f"ds-dev: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def _banner(listen_port: int, server_port: int, admin_port: int) -> str:
    base = f"http://127.0.0.1:{listen_port}"
    return f"""
durable-sessions dev stack
  gateway   {base}   (Envoy, JWT required except /healthz and /ui/)
  viewer    {base}/ui/   (the session viewer; it offers a dev token for every bucket)
  ds-server http://127.0.0.1:{server_port}   (loopback only; reach it through the gateway)
  admin     http://127.0.0.1:{admin_port}   (Envoy admin)

  TOKEN=$(.venv/bin/ds-token --sub alice --bucket chat)
  curl -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
       {base}/v1/stream/chat/room-1
  curl -N -H "Authorization: Bearer $TOKEN" '{base}/v1/stream/chat/room-1?offset=-1&live=sse'

Ctrl-C stops both.
"""


def main(argv: list[str] | None = None) -> None:
    """Run the local stack until interrupted."""
    parser = argparse.ArgumentParser(prog="ds-dev", description=__doc__)
    parser.add_argument("--listen-port", type=int, default=8080)
    parser.add_argument("--server-port", type=int, default=4437)
    parser.add_argument("--admin-port", type=int, default=9901)
    parser.add_argument("--server-log-level", default="info", choices=["debug", "info", "warning"])
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    config = ec.localize(
        ec.load(DEV_CONFIG),
        listen_port=args.listen_port,
        upstream_port=args.server_port,
        admin_port=args.admin_port,
    )
    # Only this launcher's in-memory copy gets the route (ds_proxy.dev_token).
    config = with_dev_token(config, mint_dev_token())
    server = processes.ds_server(
        args.server_port,
        argv=[sys.executable, "-m", "ds_server", "--log-level", args.server_log_level],
    )
    gateway = processes.envoy(config, admin_port=args.admin_port)
    try:
        # All three before starting either: a second `make dev` beside a running
        # one must stop here, not print the banner of a stack that isn't its own.
        ports.require_free((args.listen_port, args.server_port, args.admin_port))
        server.start()
        gateway.start()
        print(_banner(args.listen_port, args.server_port, args.admin_port), flush=True)
        while server.poll() is None and gateway.poll() is None:
            time.sleep(0.5)
        exited = server if server.poll() is not None else gateway
        print(f"{exited.name} exited ({exited.poll()}); stopping", file=sys.stderr, flush=True)
        raise SystemExit(1)
    except ports.PortInUse as taken:
        _fail(f"{taken}; is another `make dev` running? ({_PORT_FLAGS})")
    except processes.LaunchError as failed:
        _fail(str(failed))
    except KeyboardInterrupt:
        pass
    finally:
        gateway.stop()
        server.stop()


if __name__ == "__main__":
    main()
