"""``ds-dev`` (``make dev``): the whole stack in the foreground until Ctrl-C.

``ds-dev reset`` removes its state, ``ds-dev env`` prints shell exports for
the running stack, ``ds-dev psql`` opens psql on its database, and
``ds-dev spark analytics|snapshots`` run the ds-spark jobs against it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ds_settings import defaults

from ds_stack.dev import banner
from ds_stack.dev.config import (
    LOG_KEEP,
    LOG_MAX_MB,
    SNAPSHOT_SECS,
    StackConfig,
    log_rotation_of,
)
from ds_stack.dev.lock import AlreadyRunning, NotRunning, StateLock, held, running_stack
from ds_stack.dev.stack import Stack
from ds_stack.launcher import LaunchError, PortInUse
from ds_stack.postgres import PostgresError
from ds_stack.postgres._placement import remove_data

if TYPE_CHECKING:
    from types import FrameType

# Each port flag and the make variable that sets it (`make dev PORT=8081`).
MAKE_VARIABLES = {
    "--port": "PORT",
    "--server-port": "SERVER_PORT",
    "--admin-port": "ADMIN_PORT",
    "--pg-port": "PG_PORT",
    "--sync-port": "SYNC_PORT",
    "--server-metrics-port": "SERVER_METRICS_PORT",
}
_WATCH_SECS = 0.5


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ds-dev", description=__doc__)
    parser.add_argument("--state-dir", type=Path, default=Path(".dev"), help="make: DEV_DIR")
    for flag, default, what in (
        ("--port", defaults.GATEWAY_PORT, "Envoy, the gateway"),
        ("--server-port", defaults.SERVER_PORT, "ds-server"),
        ("--admin-port", defaults.ADMIN_PORT, "Envoy admin"),
        ("--pg-port", defaults.POSTGRES_PORT, "Postgres"),
        ("--sync-port", defaults.SYNC_PORT, "ds-sync's /metrics and /healthz"),
        ("--server-metrics-port", defaults.SERVER_METRICS_PORT, "ds-server's /metrics"),
    ):
        parser.add_argument(
            flag, type=int, default=default, help=f"{what} (make: {MAKE_VARIABLES[flag]})"
        )
    parser.add_argument("--heartbeat-secs", type=float, default=5.0, help="make: HEARTBEAT_SECS")
    parser.add_argument(
        "--snapshot-secs",
        type=float,
        default=SNAPSHOT_SECS,
        help="run the session snapshot job (Spark) this often; 0: never (make: SNAPSHOT_SECS)",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="ds-server replicas on the postgres store behind Envoy (make dev-cluster: 3)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="the gateway serves TLS and HTTP/2 with a self-signed certificate (make: TLS=1)",
    )
    parser.add_argument(
        "--syncs",
        type=int,
        default=1,
        help="ds-sync processes sharing the work (make dev-cluster: 2); process i's /metrics "
        "is on the sync port + 10 * (i - 1)",
    )
    parser.add_argument(
        "--log-max-mb",
        type=_positive,
        default=LOG_MAX_MB,
        help="each component's log starts a new file past this many MiB (make: LOG_MAX_MB)",
    )
    parser.add_argument(
        "--log-keep",
        type=_not_negative,
        default=LOG_KEEP,
        help="old log files kept per component, NAME.log.1 the newest (make: LOG_KEEP)",
    )
    parser.add_argument(
        "--balance",
        choices=("MAGLEV", "ROUND_ROBIN"),
        default="MAGLEV",
        help="how Envoy spreads requests over replicas (default: by stream path)",
    )
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("reset", help="delete the stack's state (streams, Postgres, logs)")
    commands.add_parser("env", help="print shell exports for the running stack")
    psql = commands.add_parser(
        "psql", help="psql on the running stack's database (the system's or the bundled one)"
    )
    psql.add_argument("psql_args", nargs="*", help="passed to psql (`ds-dev psql -c 'SELECT 1'`)")
    spark = commands.add_parser("spark", help="run a ds-spark job against the running stack")
    spark.add_argument("job", choices=["analytics", "snapshots"])
    spark.add_argument("job_args", nargs=argparse.REMAINDER)
    return parser


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def main(argv: list[str] | None = None) -> None:
    """Run the stack (no command), or one of the commands."""
    argv = sys.argv[1:] if argv is None else argv
    # Everything after `psql` is psql's (`ds-dev psql -At -c ...`), passed on as it is.
    psql_args: list[str] = []
    if "psql" in argv:
        cut = argv.index("psql") + 1
        argv, psql_args = argv[:cut], argv[cut:]
    args = _parser().parse_args(argv)
    if args.command == "reset":
        _reset(args.state_dir)
    elif args.command == "env":
        _env(args.state_dir)
    elif args.command == "psql":
        _psql(args.state_dir, psql_args)
    elif args.command == "spark":
        _spark(args.state_dir, args.job, args.job_args)
    else:
        config = StackConfig(
            state_dir=args.state_dir,
            gateway_port=args.port,
            server_port=args.server_port,
            admin_port=args.admin_port,
            postgres_port=args.pg_port,
            sync_port=args.sync_port,
            server_metrics_port=args.server_metrics_port,
            heartbeat_secs=args.heartbeat_secs,
            snapshot_secs=max(0.0, args.snapshot_secs),
            replicas=max(1, args.replicas),
            syncs=max(1, args.syncs),
            balance=args.balance,
            tls=args.tls,
            electric_url=os.environ.get("ELECTRIC_URL") or None,
            log_rotation=log_rotation_of(args.log_max_mb, args.log_keep),
        )
        sys.exit(run(config))


class _Stopping:
    """Whether the stack is stopping: then a signal is ignored, as a second Ctrl-C is."""

    now = False


def _stop_on_signal(signum: int, frame: FrameType | None) -> None:
    # Once stopping (the first signal, or a component that exited), a signal
    # is ignored here rather than by SIG_IGN: set first thing, the flag leaves
    # no moment for a second one to interrupt the stop, and children started
    # meanwhile don't inherit an ignored SIGTERM.
    if _Stopping.now:
        return
    _Stopping.now = True
    raise KeyboardInterrupt


class _Printer:
    def __init__(self, config: StackConfig) -> None:
        self.config = config

    def tokens(self, tokens: dict[str, str]) -> None:
        banner.say(banner.urls(self.config, tokens["user"]))

    def ready(self, component: str, seconds: float) -> None:
        banner.say(banner.ready_line(component, seconds, self.config))


def run(config: StackConfig) -> int:
    """Start the stack, watch it until Ctrl-C (or a component exits), stop it; the exit status."""
    # A closed terminal (SIGHUP) or `kill` (SIGTERM) stops the stack as Ctrl-C does.
    # SIGINT too, explicitly: a process started in the background by a
    # non-interactive shell inherits SIGINT ignored, and Python then never
    # turns it into KeyboardInterrupt, so Ctrl-C sent to its group would do nothing.
    _Stopping.now = False
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_on_signal)
    lock = StateLock(config.state)
    try:
        lock.acquire()
    except AlreadyRunning as running:
        banner.complain(str(running))
        return 1
    stack = Stack(config)
    status = 0
    try:
        stack.start(_Printer(config))
        lock.publish(description(config, stack))
        reset = "dev-cluster-reset" if config.clustered else "dev-reset"
        banner.say(
            f"ready in {time.monotonic() - stack.started_at:.1f} s "
            f"(Ctrl-C stops everything; `make {reset}` deletes the data)"
        )
        status = _watch(stack)
    except PortInUse as taken:
        banner.complain(_port_message(taken, config))
        status = 1
    except (LaunchError, PostgresError, RuntimeError) as failed:
        banner.complain(str(failed))
        status = 1
    except KeyboardInterrupt:
        pass
    finally:
        # A second signal must not cut the shutdown short (a service manager or
        # `timeout` signals the launcher and then its group). Each component
        # still gets SIGKILL after its stop timeout, so this always ends.
        _Stopping.now = True
        stopping = time.monotonic()
        stack.stop()
        lock.release()
        if stack.started_at:
            banner.say(f"stopped everything in {time.monotonic() - stopping:.1f} s")
    return status


def _watch(stack: Stack) -> int:
    while True:
        gone = stack.exited()
        if gone is not None:
            name, how = gone
            if not stack.carries_on_without(name):
                banner.complain(f"{name} exited ({how}); stopping everything")
                return 1
            # A cluster carries on without one replica (or one of its ds-sync processes),
            # as it would in production.
            banner.complain(f"{name} exited ({how}); the others serve, starting it again")
            try:
                stack.restart(name)
            except LaunchError as failed:
                banner.complain(f"{failed}; stopping everything")
                return 1
            banner.say(f"{name} is back")
        time.sleep(_WATCH_SECS)


def _port_message(taken: PortInUse, config: StackConfig) -> str:
    flag = next((f for f, port in config.ports().items() if port == taken.port), None)
    variable = MAKE_VARIABLES.get(flag.split()[0]) if flag else None
    other = f" or choose another: make dev {variable}=..." if variable else ""
    return f"{taken}; is another `make dev` running? Stop it{other}"


def description(config: StackConfig, stack: Stack) -> dict[str, object]:
    """What ``stack.json`` says of a running stack (``ds-dev env``, ``psql``, ``spark`` read it)."""
    return {
        "gateway_url": config.gateway_url,
        "server_url": config.server_url,
        "postgres_url": config.postgres_url,
        "sync_url": config.sync_url,
        "token": stack.tokens["user"],
        "state_dir": str(config.state),
        # Clients of a TLS gateway trust its self-signed certificate through this.
        "trust_env": config.trust_env(),
    }


def _reset(state_dir: Path) -> None:
    state = state_dir.resolve()
    if held(state):
        banner.complain(f"`make dev` is running on {state}: stop it first (Ctrl-C)")
        sys.exit(1)
    if not state.exists():
        banner.say(f"nothing to reset: {state} does not exist")
        return
    # As root in a private home, Postgres's data lives elsewhere behind a link: that too.
    remove_data(state / "postgres")
    shutil.rmtree(state)
    banner.say(f"removed {state} (streams, Postgres, logs); the next `make dev` starts empty")


def _running(state_dir: Path) -> dict[str, object]:
    try:
        return running_stack(state_dir.resolve())
    except NotRunning as exc:
        banner.complain(f"{exc}: start it with `make dev` in another terminal")
        sys.exit(1)


def _trust_env(info: dict[str, object]) -> dict[str, str]:
    """What a client of the running stack's gateway needs to trust it (TLS: its certificate)."""
    trust = info.get("trust_env")
    return {str(k): str(v) for k, v in trust.items()} if isinstance(trust, dict) else {}


def _env(state_dir: Path) -> None:
    info = _running(state_dir)
    exports = "".join(f"export {name}={value}\n" for name, value in _trust_env(info).items())
    banner.say(
        f"export DS_TOKEN={info['token']}\n"
        f"export DS_GATEWAY_URL={info['gateway_url']}\n"
        f"{exports}"
        f"export POSTGRES_URL={info['postgres_url']}"
    )


def _psql(state_dir: Path, psql_args: list[str]) -> NoReturn:
    info = _running(state_dir)
    command = banner.psql_command()
    os.execvp(command, [command, str(info["postgres_url"]), *psql_args])


def _spark(state_dir: Path, job: str, job_args: list[str]) -> None:
    info = _running(state_dir)
    env = {
        **os.environ,
        **_trust_env(info),
        "DS_SERVER_URL": str(info["gateway_url"]),
        "POSTGRES_URL": str(info["postgres_url"]),
        "DS_SPARK__TOKEN": str(info["token"]),
        "DS_SPARK__OUTPUT_DIR": str(Path(str(info["state_dir"])) / "spark-output"),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    command = [sys.executable, "-m", "ds_spark", job, *job_args]
    os.execve(sys.executable, command, env)
