"""Metrics and request logs of real ``ds-server`` processes, read over sockets and stderr."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from ds_stack import components
from ds_stack.launcher import Process
from ds_stack.ports import free_port

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class LoggedServer:
    """A ds-server at ``info``, its stderr in ``log_path``."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / f"ds-server-{self.port}.log"
        self.process = Process(
            components.ds_server(
                self.port,
                env={"DS_STORAGE__MODE": "memory", **env},
                log_level="info",
                log_path=self.log_path,
            )
        )

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")

    def wait_for_log(self, pattern: str, timeout: float = 10.0) -> re.Match[str]:
        """The first match of ``pattern`` in the log, once it is there."""
        deadline = time.monotonic() + timeout
        while (found := re.search(pattern, self.log(), re.MULTILINE)) is None:
            assert time.monotonic() < deadline, f"no {pattern!r} in:\n{self.log()}"
            time.sleep(0.05)
        return found


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., LoggedServer]]:
    """Start a LoggedServer with extra ``DS_*`` settings; stopped after the test."""
    started: list[LoggedServer] = []

    def start(**env: str) -> LoggedServer:
        server = LoggedServer(tmp_path, env)
        server.process.start()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.process.stop()
