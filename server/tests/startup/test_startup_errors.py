"""Every setting ds-server can't start with ends as docs/configuration.md promises.

One line on stderr naming the variable (or flag), exit status 2, no
traceback, for each way configuration can stop a start: a value that fails
validation, an unknown backend, an unusable data directory, a taken port, a
host that isn't this machine's. Each case runs a real ``ds-server`` process;
they run a few at a time, since each spends most of its life importing.
Which values fail validation is tested in-process (unit/test_settings.py).
"""

from __future__ import annotations

import os
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from support.server_process import free_port, run_to_exit

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterator
    from pathlib import Path

BACKENDS = "file-durable, file-fast, memory, postgres, sqlite"
# Root ignores file permissions; without these two capabilities it is held to them.
WITHOUT_DAC_OVERRIDE = (
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
)


@dataclass(frozen=True)
class Case:
    env: dict[str, str]
    # The whole line starts with this...
    names: str
    # ...and says this.
    reason: str
    args: tuple[str, ...] = ()
    # Held to file permissions, even when the tests run as root.
    unprivileged: bool = False


@dataclass(frozen=True)
class Places:
    """Things on this machine the cases point at."""

    tmp: Path
    a_file: Path
    read_only_dir: Path
    taken_port: int

    def fill(self, text: str) -> str:
        return text.format(
            tmp=self.tmp,
            a_file=self.a_file,
            read_only_dir=self.read_only_dir,
            taken_port=self.taken_port,
        )


CASES = {
    "unknown-backend": Case(
        {"DS_STORAGE__MODE": "mysql"},
        "DS_STORAGE__MODE='mysql': ",
        f"not one of: {BACKENDS}",
    ),
    "data-dir-is-a-file": Case(
        {"DS_STORAGE__MODE": "sqlite", "DS_STORAGE__DATA_DIR": "{a_file}"},
        "DS_STORAGE__DATA_DIR='{a_file}': ",
        "{a_file} can't be used: not a directory",
    ),
    "data-dir-below-a-file": Case(
        {"DS_STORAGE__MODE": "file-durable", "DS_STORAGE__DATA_DIR": "{a_file}/streams"},
        "DS_STORAGE__DATA_DIR='{a_file}/streams': ",
        "{a_file}/streams can't be used: not a directory",
    ),
    "data-dir-not-writable": Case(
        {"DS_STORAGE__MODE": "file-fast", "DS_STORAGE__DATA_DIR": "{read_only_dir}"},
        "DS_STORAGE__DATA_DIR='{read_only_dir}': ",
        "{read_only_dir} can't be used: Permission denied ({read_only_dir}/LOCK)",
        unprivileged=True,
    ),
    "port-taken": Case(
        {"DS_SERVER__PORT": "{taken_port}"},
        "DS_SERVER__PORT={taken_port}: ",
        "127.0.0.1:{taken_port} is already in use by another process",
    ),
    "port-flag-taken": Case(
        {},
        "--port={taken_port}: ",
        "127.0.0.1:{taken_port} is already in use by another process",
        args=("--port", "{taken_port}"),
    ),
    "host-unknown": Case(
        {"DS_SERVER__HOST": "no-such-host.invalid"},
        "DS_SERVER__HOST='no-such-host.invalid': ",
        "can't resolve 'no-such-host.invalid'",
    ),
    "host-not-this-machine": Case(
        # TEST-NET-1 (RFC 5737): never a local address.
        {"DS_SERVER__HOST": "192.0.2.1"},
        "DS_SERVER__HOST='192.0.2.1': ",
        "can't listen on '192.0.2.1': Cannot assign requested address",
    ),
    "timeout-not-a-number": Case(
        {"DS_SERVER__LONG_POLL_TIMEOUT_SECS": "soon"},
        "DS_SERVER__LONG_POLL_TIMEOUT_SECS='soon': ",
        "Input should be a valid number",
    ),
    "section-not-json": Case(
        {"DS_SERVER": "{{port"},
        "DS_SERVER: ",
        "not a JSON object of its settings",
    ),
}


def _run(case: Case, places: Places) -> subprocess.CompletedProcess[str]:
    env = {
        # A case that doesn't name them must not fail on them: memory and a free port.
        "DS_STORAGE__MODE": "memory",
        "DS_STORAGE__DATA_DIR": str(places.tmp / "unused"),
        "DS_SERVER__PORT": str(free_port()),
        **{name: places.fill(value) for name, value in case.env.items()},
    }
    args = [places.fill(arg) for arg in case.args]
    wrapper = WITHOUT_DAC_OVERRIDE if case.unprivileged and os.geteuid() == 0 else ()
    return run_to_exit(env, *args, wrapper=wrapper)


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Places]:
    tmp = tmp_path_factory.mktemp("startup")
    a_file = tmp / "a-file"
    a_file.write_bytes(b"")
    read_only_dir = tmp / "read-only"
    read_only_dir.mkdir(mode=0o555)
    with socket.create_server(("127.0.0.1", 0)) as holder:
        yield Places(tmp, a_file, read_only_dir, holder.getsockname()[1])


@pytest.fixture(scope="module")
def outcomes(places: Places) -> dict[str, subprocess.CompletedProcess[str]]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(_run, case, places) for name, case in CASES.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", CASES)
def test_a_setting_that_cannot_work_is_one_line_and_status_2(
    name: str, places: Places, outcomes: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    case, done = CASES[name], outcomes[name]
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    line = done.stderr.removesuffix("\n")
    assert "\n" not in line, done.stderr
    assert line.startswith("ds-server: error: " + places.fill(case.names)), line
    assert places.fill(case.reason) in line, line
