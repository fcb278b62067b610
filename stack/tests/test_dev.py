"""``make dev`` (``python -m ds_stack.dev``): Ctrl-C, a second one, restarts, reset.

The stack itself is exercised by the e2e suite; this is the command around
it: what it prints, that Ctrl-C leaves no process behind, that its state
survives a restart, and what a second ``make dev`` is told.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psutil
import psycopg
import pytest
from ds_stack import ports
from ds_stack.ports import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

READY_SECS = 120  # only against a hang


@pytest.fixture
def state_dir() -> Iterator[Path]:
    # Under /tmp and traversable: Postgres runs as its own user and must reach its data.
    path = Path(tempfile.mkdtemp(prefix="ds-dev-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _ports() -> dict[str, int]:
    return {
        flag: free_port()
        for flag in (
            "--port",
            "--server-port",
            "--admin-port",
            "--pg-port",
            "--sync-port",
            "--server-metrics-port",
        )
    }


def _command(state: Path, chosen: dict[str, int], *extra: str) -> list[str]:
    flags = [item for flag, port in chosen.items() for item in (flag, str(port))]
    return [sys.executable, "-m", "ds_stack.dev", "--state-dir", str(state), *flags, *extra]


@contextlib.contextmanager
def _running(
    state: Path, chosen: dict[str, int], log: Path, *extra: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``make dev`` in its own process group, as in a terminal; Ctrl-C'd on exit."""
    with log.open("wb") as out:
        launcher = subprocess.Popen(
            _command(state, chosen, *extra),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + READY_SECS
        while "ready in" not in log.read_text():
            assert launcher.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield launcher
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGINT)  # what the terminal sends on Ctrl-C
        try:
            # A hang guard, not a speed check: the components stop one after
            # another, each with up to 10 s before SIGKILL, on a busy machine.
            launcher.wait(timeout=180)
        finally:
            if launcher.poll() is None:
                launcher.kill()
                launcher.wait()


def _assert_logs_rotated(logs: Path, max_bytes: int, keep: int) -> None:
    """Every component's log within its size, at most ``keep`` old files, no line cut."""
    names = {p.name for p in logs.iterdir()}
    assert {"envoy.log", "envoy.log.1", "envoy.log.2"} <= names, sorted(names)
    for component in ("ds-server", "envoy", "ds-sync", "heartbeat", "snapshots"):
        assert f"{component}.log" in names, sorted(names)
        assert f"{component}.log.{keep + 1}" not in names, sorted(names)
    for path in logs.iterdir():
        data = path.read_bytes()
        assert len(data) <= max_bytes or data.count(b"\n") == 1, (path, len(data))
        assert data.endswith(b"\n"), path
    # Envoy's access lines (JSON) are whole in every file.
    for name in ("envoy.log.2", "envoy.log.1"):
        lines = (logs / name).read_text().splitlines()
        access = [json.loads(line) for line in lines if line.startswith("{")]
        assert access, name
    # Postgres's own log too.
    for path in (logs.parent / "postgres").glob("postgres.log*"):
        assert path.stat().st_size <= max_bytes, path


def _family(pid: int) -> list[psutil.Process]:
    parent = psutil.Process(pid)
    return [parent, *parent.children(recursive=True)]


def test_dev_stack_prints_its_urls_stops_on_ctrl_c_and_keeps_its_data(
    state_dir: Path, tmp_path: Path
) -> None:
    chosen = _ports()
    gateway = f"http://127.0.0.1:{chosen['--port']}"
    postgres = f"postgresql://postgres:password@127.0.0.1:{chosen['--pg-port']}/durable_streams"
    log = tmp_path / "dev.log"
    # Component logs rotated at 8 KiB (16 MiB by default), two old files kept.
    rotation = ("--log-max-mb", str(8 / 1024), "--log-keep", "2")
    with _running(state_dir, chosen, log, *rotation) as launcher:
        out = log.read_text()
        token = re.search(r"export DS_TOKEN=(\S+)", out)
        assert token is not None, out
        assert "ds-dev psql -c" in out
        # The banner's psql line reaches the stack's database.
        psql = subprocess.run(
            [
                sys.executable,
                "-m",
                "ds_stack.dev",
                "--state-dir",
                str(state_dir),
                "psql",
                "-At",
                "-c",
                "SELECT current_database(), inet_server_port()",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert psql.stdout.split() == [f"durable_streams|{chosen['--pg-port']}"], psql.stderr
        assert postgres in out
        for component in ("postgres", "ds-server", "envoy", "ds-sync", "heartbeat", "snapshots"):
            assert re.search(rf"^  {component} +ready ", out, re.MULTILINE), out
        auth = {"Authorization": f"Bearer {token.group(1)}", "Content-Type": "application/json"}
        created = httpx.put(f"{gateway}/v1/stream/kept/room", headers=auth, content=b'[{"n":1}]')
        assert created.status_code == 201
        # ds-server answers nothing without the gateway's identity.
        direct = f"http://127.0.0.1:{chosen['--server-port']}/v1/stream/kept/room"
        refused = httpx.get(direct, params={"offset": "-1"})
        assert refused.status_code == 401
        assert "send requests through the gateway" in refused.text
        # The session viewer, and the token the dev stack offers it: every bucket, from Envoy.
        assert httpx.get(f"{gateway}/ui/").status_code == 200
        offered = httpx.get(f"{gateway}/ui/dev-token.json")
        assert offered.status_code == 200
        assert offered.headers["cache-control"] == "no-store"
        assert offered.json()["sub"] == "dev"
        viewer = {"Authorization": f"Bearer {offered.json()['token']}"}
        assert httpx.put(f"{gateway}/ds/anybucket", headers=viewer).status_code == 201
        with httpx.Client() as client:
            for _ in range(200):  # ~60 kB of Envoy's access log
                assert client.get(f"{gateway}/ui/").status_code == 200
        children = _family(launcher.pid)
        assert len(children) >= 6  # the launcher, ds-server, envoy, postgres (+ its own), ...
    assert launcher.returncode == 0, log.read_text()
    _assert_logs_rotated(state_dir / "logs", 8192, keep=2)
    assert log.read_text().rstrip().splitlines()[-1].startswith("stopped everything in ")
    gone = psutil.wait_procs(children, timeout=10)[1]
    assert gone == [], f"left behind: {[p.pid for p in gone]}"
    assert all(ports.is_free(port) for port in chosen.values())
    assert not (state_dir / "stack.json").exists()

    # Started again on the same state: the stream and the Postgres rows are still there.
    with _running(state_dir, chosen, log):
        again = re.search(r"export DS_TOKEN=(\S+)", log.read_text())
        assert again is not None
        read = httpx.get(
            f"{gateway}/v1/stream/kept/room",
            params={"offset": "-1"},
            headers={"Authorization": f"Bearer {again.group(1)}"},
        )
        assert read.json() == [{"n": 1}]
        with psycopg.connect(postgres) as conn:
            [(beats,)] = conn.execute(
                "SELECT count(*) FROM items WHERE title LIKE 'heartbeat %%'"
            ).fetchall()
        assert beats >= 2  # one per start at least

        # A second `make dev` on the same state says so, and starts nothing.
        second = subprocess.run(
            _command(state_dir, _ports()), capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 1
        assert second.stdout == ""
        assert second.stderr.startswith(
            f"ds-dev: another `make dev` is already running on {state_dir} (pid "
        )
        assert f"gateway {gateway}" in second.stderr
        # On other state but the same ports: the port, who holds it, and how to choose another.
        elsewhere = Path(tempfile.mkdtemp(prefix="ds-dev-test-"))
        try:
            third = subprocess.run(
                _command(elsewhere, chosen), capture_output=True, text=True, timeout=60
            )
        finally:
            shutil.rmtree(elsewhere, ignore_errors=True)
        assert third.returncode == 1
        assert third.stdout == ""
        assert re.match(
            rf"ds-dev: port {chosen['--port']} is already in use by pid \d+ \(.*envoy.*\); "
            r"is another `make dev` running\? Stop it or choose another: make dev PORT=\.\.\.$",
            third.stderr.strip(),
        ), third.stderr

        refused = subprocess.run(
            [sys.executable, "-m", "ds_stack.dev", "--state-dir", str(state_dir), "reset"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 1
        assert "stop it first" in refused.stderr
    reset = subprocess.run(
        [sys.executable, "-m", "ds_stack.dev", "--state-dir", str(state_dir), "reset"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert reset.returncode == 0, reset.stderr
    assert not state_dir.exists()


def test_dev_stack_with_tls_serves_https_and_its_own_clients_trust_it(
    state_dir: Path, tmp_path: Path
) -> None:
    """`make dev TLS=1`: the gateway serves https with a self-signed certificate kept in the
    state; the stack's own clients (heartbeat, ds-sync) reach it, and `env` says what to trust."""
    chosen = _ports()
    gateway = f"https://127.0.0.1:{chosen['--port']}"
    postgres = f"postgresql://postgres:password@127.0.0.1:{chosen['--pg-port']}/durable_streams"
    log = tmp_path / "dev.log"
    with _running(state_dir, chosen, log, "--tls"):
        out = log.read_text()
        cert = state_dir / "tls" / "gateway.crt"
        assert f"gateway    {gateway}" in out
        assert f"curl --cacert {cert}" in out
        token = re.search(r"export DS_TOKEN=(\S+)", out)
        assert token is not None, out
        trusted = ssl.create_default_context(cafile=cert)
        with httpx.Client(verify=trusted, timeout=30.0) as https:
            assert https.get(f"{gateway}/ui/").status_code == 200
            auth = {"Authorization": f"Bearer {token.group(1)}"}
            assert https.get(f"{gateway}/ds/sessions/streams", headers=auth).status_code == 200
        # The heartbeat appends through the TLS gateway and ds-sync carries it into Postgres.
        deadline = time.monotonic() + READY_SECS
        while True:
            with psycopg.connect(postgres) as conn:
                [(rows,)] = conn.execute("SELECT count(*) FROM session_events").fetchall()
            if rows:
                break
            assert time.monotonic() < deadline, (state_dir / "logs" / "heartbeat.log").read_text()
            time.sleep(0.5)
        shell = subprocess.run(
            [sys.executable, "-m", "ds_stack.dev", "--state-dir", str(state_dir), "env"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert f"export SSL_CERT_FILE={cert}" in shell.stdout
        assert f"export DS_GATEWAY_URL={gateway}" in shell.stdout


def test_a_second_signal_does_not_cut_the_shutdown_short(state_dir: Path, tmp_path: Path) -> None:
    # A service manager (or `timeout`) may signal twice: the launcher, then its group.
    log = tmp_path / "dev.log"
    with _running(state_dir, _ports(), log) as launcher:
        children = _family(launcher.pid)
        launcher.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while "stopped everything" not in log.read_text() and launcher.poll() is None:
            # Again and again while the stack stops: none of them may interrupt it.
            launcher.send_signal(signal.SIGTERM)
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        launcher.wait(timeout=180)
    assert launcher.returncode == 0, log.read_text()
    assert "Traceback" not in log.read_text()
    assert log.read_text().rstrip().splitlines()[-1].startswith("stopped everything in ")
    gone = psutil.wait_procs(children, timeout=10)[1]
    assert gone == [], f"left behind: {[p.pid for p in gone]}"
