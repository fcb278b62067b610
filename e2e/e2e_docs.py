"""Running a documentation page's blocks as its reader would, against the suite's stack.

The reader's checkout is a directory of links to this repository's top-level
entries, except ``.dev``, which links to the running stack's state: so
``.venv/bin/ds-dev env``, ``ds-dev psql`` and ``make analytics`` reach the
suite's stack exactly as they reach ``make dev``'s. The pages show the
default ports (8080, 54321, ...); the stack runs on free ones, and each
default is replaced by the stack's port before a block runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from doc_blocks import ROOT, Block, page_blocks, runs_here
from ds_settings import defaults
from ds_stack.ports import free_port

if TYPE_CHECKING:
    from ds_stack.dev import StackConfig

NODE_DIR = ROOT / "tests" / "node"
# `make example-chat`'s port (EXAMPLE_PORT in the Makefile), moved to a free one.
EXAMPLE_PORT = 3000
BLOCK_TIMEOUT_SECS = 300.0
# A status line of `curl -i` that says a request failed.
_FAILED_STATUS = re.compile(r"^HTTP/[\d.]+ [45]\d\d", re.MULTILINE)


def reader_checkout(stack_state: Path, where: Path) -> Path:
    """A directory that looks like this checkout with ``.dev`` being the stack's state."""
    where.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name not in {".dev", ".dev-cluster", ".git"}:
            (where / entry.name).symlink_to(entry)
    (where / ".dev").symlink_to(stack_state)
    return where


def with_stack_ports(code: str, config: StackConfig, example_port: int) -> str:
    """The block with each of the reference stack's ports replaced by the running stack's."""
    ports = {
        EXAMPLE_PORT: example_port,
        defaults.GATEWAY_PORT: config.gateway_port,
        defaults.SERVER_PORT: config.server_port,
        defaults.ADMIN_PORT: config.admin_port,
        defaults.POSTGRES_PORT: config.postgres_port,
        defaults.SYNC_PORT: config.sync_port,
        defaults.SERVER_METRICS_PORT: config.server_metrics_port,
    }
    return re.sub(
        r"(127\.0\.0\.1|localhost):(\d+)\b",
        lambda m: f"{m.group(1)}:{ports.get(int(m.group(2)), int(m.group(2)))}",
        code,
    )


class Shell:
    """One bash for a page: its blocks run in it in order, so variables carry over."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.env_file = cwd.parent / f"env-{uuid.uuid4().hex}"
        self._process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={
                **{k: v for k, v in os.environ.items() if not k.startswith(("DS_", "POSTGRES_"))},
                **env,
            },
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._send("set -eo pipefail\n")

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _send(self, text: str) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(text)
        self._process.stdin.flush()

    def run(self, code: str, where: str) -> str:
        """Run one block (its stdin empty, as a reader's pasted commands); what it printed."""
        marker = f"__block_done_{uuid.uuid4().hex}"
        self._send(f"{{\n{code}\n}} < /dev/null\nenv -0 > {self.env_file}\necho; echo {marker}\n")
        output: list[str] = []
        deadline = time.monotonic() + BLOCK_TIMEOUT_SECS
        while True:
            try:
                line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                ran = "".join(output)
                raise AssertionError(f"{where} ran {BLOCK_TIMEOUT_SECS:.0f} s:\n{ran}") from None
            if line is None:
                raise AssertionError(f"{where} failed (the shell exited):\n{''.join(output)}")
            if line.strip() == marker:
                return "".join(output)
            output.append(line)

    def environment(self) -> dict[str, str]:
        """The shell's exported variables after its last block."""
        if not self.env_file.exists():
            return {}  # no block has run yet
        text = self.env_file.read_text(encoding="utf-8")
        return dict(item.split("=", 1) for item in text.split("\0") if "=" in item)

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)
        self._reader.join(timeout=30)
        if self._process.stdout is not None:
            self._process.stdout.close()
        self.env_file.unlink(missing_ok=True)


def run_typescript(code: str, env: dict[str, str], scratch: Path, where: str) -> str:
    """Compile the block with TypeScript and run it with Node; what it printed."""
    scratch.mkdir(parents=True, exist_ok=True)
    modules = scratch / "node_modules"
    if not modules.exists():
        modules.symlink_to(NODE_DIR / "node_modules")
    source = scratch / f"block-{uuid.uuid4().hex[:8]}.ts"
    source.write_text(code, encoding="utf-8")
    done = subprocess.run(
        ["node", str(NODE_DIR / "run-typescript.mjs"), str(source)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=BLOCK_TIMEOUT_SECS,
        check=False,
    )
    assert done.returncode == 0, f"{where} failed:\n{done.stdout}{done.stderr}"
    return done.stdout


def run_sql(code: str, postgres_url: str) -> list[tuple[object, ...]]:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        cursor = conn.execute(code)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


class PageRun:
    """One page's blocks, run in order; what ran, by language."""

    def __init__(self, page: str, config: StackConfig, scratch: Path) -> None:
        self.page = page
        self.config = config
        self.scratch = scratch
        self.ran: dict[str, int] = {}
        self.outputs: list[tuple[Block, str]] = []
        self.example_port = free_port()
        self._background: list[int] = []

    def run(self) -> dict[str, object]:
        """Run the page; its Python namespace (for the test to check what the page says)."""
        checkout = reader_checkout(self.config.state, self.scratch / "checkout")
        shell = Shell(checkout, {"EXAMPLE_PORT": str(self.example_port)})
        namespace: dict[str, object] = {"__name__": f"docs:{self.page}"}
        saved = dict(os.environ)
        here = Path.cwd()
        try:
            for block in page_blocks(self.page):
                if runs_here(block):
                    self._run_block(block, shell, namespace, checkout)
                    self.ran[block.language] = self.ran.get(block.language, 0) + 1
        finally:
            for group in self._background:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGTERM)
            shell.close()
            os.chdir(here)
            os.environ.clear()
            os.environ.update(saved)
        return namespace

    def _run_block(
        self, block: Block, shell: Shell, namespace: dict[str, object], checkout: Path
    ) -> None:
        where = f"docs/{block}"
        code = with_stack_ports(block.code, self.config, self.example_port)
        if block.in_background:
            # A server until Ctrl-C: in its own process group, stopped after the page.
            log = self.scratch / f"background-{block.line}.log"
            script = self.scratch / f"background-{block.line}.sh"
            script.write_text(code, encoding="utf-8")
            output = shell.run(f"setsid bash {script} > {log} 2>&1 < /dev/null &\necho $!", where)
            self._background.append(int(output.split()[-1]))
        elif block.language == "bash":
            output = shell.run(code, where)
            failed = _FAILED_STATUS.search(output)
            assert failed is None, f"{where}: a request failed ({failed.group(0)}):\n{output}"
        elif block.language == "python":
            # As the reader runs it: in the checkout, with what the shell exported.
            os.chdir(checkout)
            os.environ.update(shell.environment())
            exec(compile(code, where, "exec"), namespace)
            output = ""
        elif block.language == "typescript":
            output = run_typescript(code, shell.environment(), self.scratch / "ts", where)
        elif block.language == "sql":
            rows = run_sql(code, self.config.postgres_url)
            output = "\n".join(map(str, rows))
        elif block.language == "json":
            json.loads(code)
            output = ""
        else:
            raise AssertionError(f"{where}: no runner for {block.language!r}")
        self.outputs.append((block, output))
