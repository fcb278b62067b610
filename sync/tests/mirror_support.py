"""Test support for the Postgres → stream direction: reading pg-{table}, materialising it."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import msgspec
import psycopg
from ds_stack.launcher import Process, ProcessSpec

if TYPE_CHECKING:
    from collections.abc import Callable

_decode = msgspec.json.Decoder()


def delete_stream(server_url: str, stream: str) -> None:
    """Remove a pg-{table} stream an earlier test left on the shared server."""
    response = httpx.delete(f"{server_url}/v1/stream/{stream}")
    assert response.status_code in (204, 404), response.text


def read_raw(server_url: str, stream: str) -> list[bytes]:
    """Every message of a top-level JSON stream, as stored (empty when there is no stream)."""
    from durable_sessions.protocol import split_json_arrays as split_arrays

    found: list[bytes] = []
    offset = "-1"
    with httpx.Client(timeout=30) as http:
        while True:
            response = http.get(f"{server_url}/v1/stream/{stream}", params={"offset": offset})
            if response.status_code == 404:
                return found
            assert response.status_code == 200, response.text
            found += split_arrays(response.content)
            offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Up-To-Date") == "true":
                return found


def read_messages(server_url: str, stream: str) -> list[dict[str, Any]]:
    return [_decode.decode(raw) for raw in read_raw(server_url, stream)]


def controls(messages: list[dict[str, Any]]) -> list[str]:
    return [m["headers"]["control"] for m in messages if "control" in m.get("headers", {})]


def changes(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if "control" not in m.get("headers", {})]


def materialise(messages: list[dict[str, Any]], type_name: str) -> dict[str, Any]:
    """The State Protocol's materialisation of one type: key → value (reset clears)."""
    state: dict[str, Any] = {}
    for message in messages:
        headers = message.get("headers", {})
        if headers.get("control") == "reset":
            state.clear()
            continue
        if "control" in headers or message.get("type") != type_name:
            continue
        if headers["operation"] in ("insert", "update"):
            state[message["key"]] = message["value"]
        elif headers["operation"] == "delete":
            state.pop(message["key"], None)
        else:
            raise AssertionError(f"unknown operation in {message}")
    return state


def duplicates(messages: list[dict[str, Any]]) -> int:
    """Change messages seen more than once between two resets (txid + key + operation + value)."""
    doubled = 0
    seen: Counter[bytes] = Counter()
    for message in messages:
        headers = message.get("headers", {})
        if headers.get("control") == "reset":
            seen.clear()
            continue
        if "control" in headers:
            continue
        identity = msgspec.json.encode(
            [headers.get("txid"), message["key"], headers["operation"], message.get("value")],
            order="sorted",
        )
        seen[identity] += 1
        doubled += seen[identity] > 1
    return doubled


def items_rows(postgres_url: str) -> dict[str, dict[str, Any]]:
    """SELECT * FROM items as sessions.md §4 maps it, computed here independently."""
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute("SELECT id, title, body, created_at FROM items").fetchall()
    return {
        str(id_): {
            "id": id_,
            "title": title,
            "body": body,
            "created_at": None if created is None else created.astimezone(UTC).isoformat(),
        }
        for id_, title, body, created in rows
    }


def normalised_items(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Materialised items with created_at parsed and written as isoformat (for comparison)."""
    found = {}
    for key, value in state.items():
        created = value["created_at"]
        if created is not None:
            created = datetime.fromisoformat(created).astimezone(UTC).isoformat()
        found[key] = {**value, "created_at": created}
    return found


def mirror_row(postgres_url: str, table: str) -> dict[str, Any] | None:
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT status, detail, next_seq, producer_epoch, position::text, "
            "pending_position IS NOT NULL FROM sync_mirrors WHERE table_name = %s",
            (table,),
        ).fetchone()
    if row is None:
        return None
    keys = ("status", "detail", "next_seq", "epoch", "position", "pending")
    return dict(zip(keys, row, strict=True))


class ElectricFake:
    """``electric_fake.py`` as a process of its own (a stand-in for Electric: see its docstring)."""

    def __init__(self, port: int, *args: str) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.args = args
        self.process: Process | None = None
        self.log_path = Path(tempfile.gettempdir()) / f"electric-fake-{self.port}.log"

    def start(self, *args: str) -> None:
        script = Path(__file__).resolve().parent / "electric_fake.py"
        command = (sys.executable, str(script), "--port", str(self.port), *(args or self.args))
        self.process = Process(
            ProcessSpec(
                name="electric stand-in",
                argv=command,
                ready=self._answers,
                serves_port=self.port,
                log_path=self.log_path,
                ready_timeout_secs=20,
            )
        )
        self.process.start()

    def _answers(self) -> bool:
        try:
            httpx.get(f"{self.url}/_fake/none", timeout=1)
        except httpx.TransportError:
            return False
        return True

    def get(self, path: str) -> Any:
        return httpx.get(f"{self.url}{path}", timeout=10).json()

    def post(self, path: str, body: Any) -> Any:
        return httpx.post(f"{self.url}{path}", json=body, timeout=10).json()

    def kill(self) -> None:
        """SIGKILL: open connections drop, as when Electric's host dies."""
        process, self.process = self.process, None
        if process is not None:
            process.kill()


def wait_for_stream(
    server_url: str,
    stream: str,
    check: Callable[[list[dict[str, Any]]], bool],
    timeout: float = 30.0,
    what: str = "the stream",
) -> list[dict[str, Any]]:
    """The stream's messages once ``check`` passes on them; read only when its tail moved
    (a HEAD a tenth of a second otherwise), so waiting costs the writers little CPU."""
    deadline = time.monotonic() + timeout
    read_at: str | None = None
    while True:
        response = httpx.head(f"{server_url}/v1/stream/{stream}", timeout=10)
        tail = response.headers.get("Stream-Next-Offset")
        if tail != read_at:
            read_at = tail
            messages = read_messages(server_url, stream)
            if check(messages):
                return messages
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Follower(threading.Thread):
    """A reader following a top-level stream from its start with long-polls, as a live
    client would: every message it gets, in order, and how often it was answered 410."""

    def __init__(self, server_url: str, stream: str, token: str | None = None) -> None:
        super().__init__(daemon=True)
        self.url = f"{server_url}/v1/stream/{stream}"
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.messages: list[dict[str, Any]] = []
        self.offset = "-1"
        self.gone = 0
        self.error: BaseException | None = None
        self._stop_event = threading.Event()

    def run(self) -> None:
        from durable_sessions.protocol.json_mode import split_json_arrays as split_arrays

        try:
            with httpx.Client(timeout=60, headers=self.headers) as http:
                while not self._stop_event.is_set():
                    params = {"offset": self.offset, "live": "long-poll"}
                    try:
                        response = http.get(self.url, params=params)
                    except httpx.TransportError:  # a gateway restarting, a busy machine
                        time.sleep(0.2)
                        continue
                    if response.status_code == 410:
                        self.gone += 1
                        return
                    if response.status_code == 204:
                        continue
                    assert response.status_code == 200, response.text
                    self.messages += [_decode.decode(raw) for raw in split_arrays(response.content)]
                    self.offset = response.headers["Stream-Next-Offset"]
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=90)
        if self.error is not None:
            raise self.error


def bootstrap_state(server_url: str, stream: str) -> tuple[dict[str, Any], int, int]:
    """A late reader: the stream's bootstrap materialised (snapshot, then messages);
    the state, the bootstrap's size in bytes and the snapshot offset (-1: none)."""
    from durable_sessions import parse_bootstrap

    response = httpx.get(f"{server_url}/v1/stream/{stream}/bootstrap", timeout=30)
    assert response.status_code == 200, response.text
    begun = parse_bootstrap(response.headers["content-type"], response.content, response.headers)
    messages = [] if begun.snapshot is None else list(_decode.decode(begun.snapshot))
    messages += [_decode.decode(body) for _, body in begun.messages]
    return materialise(messages, "items"), len(response.content), int(begun.snapshot_offset)


NODE_READER = Path(__file__).resolve().parents[2] / "tests" / "node" / "materialize.mjs"


class NodeReader:
    """The official @durable-streams/state MaterializedState reading a stream as docs/sync.md
    says (tests/node/materialize.mjs): bootstrap, then follow until ``until``."""

    def __init__(self, stream_url: str, until: str = "-", token: str = "") -> None:
        if not (NODE_READER.parent / "node_modules").is_dir():
            raise AssertionError("tests/node has no node_modules: run `make setup`")
        command = ["node", str(NODE_READER), stream_url, "items", until]
        self.process = subprocess.Popen(
            [*command, *([f"Bearer {token}"] if token else [])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait_bootstrapped(self) -> None:
        """Until the reader has read the stream's bootstrap and follows it."""
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        assert line.strip() == "bootstrapped", line + self.process.stderr.read()

    def result(self, timeout: float = 180) -> dict[str, Any]:
        """``rows`` (key → row), ``bootstraps`` and ``bootstrap_bytes``, once it is done."""
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            raise AssertionError(f"the Node reader did not finish: {err}") from None
        assert self.process.returncode == 0, err
        result: dict[str, Any] = _decode.decode(out)
        return result


def node_materialise(server_url: str, stream: str, until: str = "-") -> dict[str, Any]:
    """The Node reader's result, read from the stream's start (its bootstrap) to ``until``."""
    return NodeReader(f"{server_url}/v1/stream/{stream}", until).result()
