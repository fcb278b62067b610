"""One ds-server per data directory, for every backend that has one; the lock dies with its holder.

Two servers on one sqlite store served stale reads and lost an acknowledged
stream; these run real processes on the same directory.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import httpx
import pytest
from support.server_process import ServerProcess, free_port, run_to_exit

if TYPE_CHECKING:
    from pathlib import Path

DURABLE_BACKENDS = ("sqlite", "file-durable", "file-fast")
# Generous: these requests wait for nothing but a possibly busy machine.
TIMEOUT = 60.0


def storage(mode: str, data_dir: Path) -> dict[str, str]:
    return {"DS_STORAGE__MODE": mode, "DS_STORAGE__DATA_DIR": str(data_dir)}


def read(stream: str) -> httpx.Response:
    return httpx.get(stream, params={"offset": "-1"}, timeout=TIMEOUT)


@pytest.mark.parametrize("mode", DURABLE_BACKENDS)
def test_a_second_server_is_refused_until_the_first_dies(mode: str, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = ServerProcess(env=storage(mode, data_dir))
    first.start()
    try:
        stream = f"{first.url}/v1/stream/kept"
        assert httpx.put(stream, content=b"acknowledged", timeout=TIMEOUT).status_code == 201
        first_pid = first.pid

        refused = run_to_exit({**storage(mode, data_dir), "DS_SERVER__PORT": str(free_port())})

        assert refused.returncode == 2
        assert refused.stdout == ""
        assert refused.stderr == (
            f"ds-server: error: DS_STORAGE__DATA_DIR={str(data_dir)!r}: "
            f"{data_dir} is in use by another ds-server (pid {first_pid})\n"
        )
        # The first server was not disturbed.
        assert read(stream).content == b"acknowledged"
    finally:
        first.kill()  # SIGKILL: no chance to unlock anything itself

    # The file stays behind; only the kernel's lock on it counted, and it went with the process.
    assert (data_dir / "LOCK").read_text() == f"{first_pid}\n"
    with ServerProcess(env=storage(mode, data_dir)) as second:
        assert (data_dir / "LOCK").read_text() == f"{second.pid}\n"
        kept = read(f"{second.url}/v1/stream/kept")
        assert (kept.status_code, kept.content) == (200, b"acknowledged")


def test_the_memory_backend_uses_no_data_dir(tmp_path: Path) -> None:
    # Nothing is stored there, so nothing is locked or even looked at: a file will do.
    not_a_directory = tmp_path / "file"
    not_a_directory.write_bytes(b"")
    with ServerProcess(env=storage("memory", not_a_directory)) as server:
        assert httpx.get(f"{server.url}/healthz", timeout=TIMEOUT).status_code == 200
    assert os.listdir(tmp_path) == ["file"]
