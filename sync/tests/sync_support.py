"""Test support: a real ds-sync process, and helpers to write streams and read the tables."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import msgspec
import psycopg
from ds_stack import components
from ds_stack.launcher import LaunchError, Process
from ds_stack.ports import free_port

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

JSON = {"Content-Type": "application/json"}


async def passed(progress: list[int], threshold: int) -> None:
    """Until a load's counter of operations done has passed ``threshold``."""
    while progress[0] < threshold:  # noqa: ASYNC110 - a plain counter; polling is simplest
        await asyncio.sleep(0.005)


async def kill_at(sync: SyncProcess, thresholds: list[int], progress: list[int]) -> list[int]:
    """SIGKILL ds-sync when the load passes each threshold; restart it at once. The counts
    at which it was killed."""
    killed_at = []
    for threshold in thresholds:
        await passed(progress, threshold)
        sync.kill()
        killed_at.append(progress[0])
        await asyncio.to_thread(sync.start, wait=False)
    return killed_at


def wait_until(check: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class SyncProcess:
    """``python -m ds_sync`` with test settings, through the one launcher; stopped with
    SIGTERM (or killed) by the test."""

    server_url: str
    postgres_url: str
    streams: str
    env: dict[str, str] = field(default_factory=dict)
    name: str = field(default_factory=lambda: "t" + uuid.uuid4().hex[:10])
    log_path: Path = field(init=False)
    process: Process | None = None
    starts: int = 0

    def __post_init__(self) -> None:
        label = self.env.get("DS_SYNC__INSTANCE", self.name)
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"ds-sync-{label}.log"
        self.log_path.unlink(missing_ok=True)

    def start(self, *, wait: bool = True) -> None:
        self.metrics_port = free_port()
        spec = components.ds_sync(
            server_url=self.server_url,
            postgres_url=self.postgres_url,
            metrics_port=self.metrics_port,
            env={
                "DS_SYNC__STREAMS": self.streams,
                "DS_SYNC__NAME": self.name,
                "DS_SYNC__IDLE_SECS": "1",
                "DS_SYNC__WAKE_INTERVAL_SECS": "0.05",
                # Discovery by wakes unless a test asks for rescans.
                "DS_SYNC__RESCAN_SECS": "600",
                # No table mirrors unless a test asks: pg-{table} streams are shared by the
                # tests' server.
                "DS_SYNC__TABLES": "",
                # Tests that read a pg-{table} stream's whole history need all of it;
                # the compaction tests turn it on.
                "DS_SYNC__COMPACT_AFTER_BYTES": "0",
                **self.env,
            },
            log_path=self.log_path,
        )
        self.process = Process(spec)
        self.process.launch()
        self.starts += 1
        if wait:
            try:
                self.process.wait_ready()
            except LaunchError as exc:
                raise AssertionError(f"ds-sync did not get ready: {exc}\n{self.log()}") from None

    def ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"ds-sync exited early:\n{self.log()}")
        try:
            url = f"http://127.0.0.1:{self.metrics_port}/healthz"
            return httpx.get(url, timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def metrics(self) -> str:
        return httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5).text

    def metric(self, name: str) -> float:
        """One unlabelled metric's value from /metrics."""
        for line in self.metrics().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return float(value)
        raise AssertionError(f"no metric {name}")

    def stop(self) -> int:
        """SIGTERM, as an orchestrator would; the exit status."""
        process, self.process = self.process, None
        if process is None:
            return 0
        status = process.stop() or 0
        if status == -signal.SIGKILL:
            raise AssertionError(f"ds-sync ignored SIGTERM:\n{self.log()}")
        return status

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        process, self.process = self.process, None
        if process is not None:
            process.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    @property
    def instance(self) -> str:
        return self.env.get("DS_SYNC__INSTANCE", "")

    def __enter__(self) -> SyncProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process is not None:
            self.kill()


@dataclass(frozen=True)
class Streams:
    """Creates and writes streams in one bucket of the test server."""

    server_url: str
    bucket: str

    def url(self, stream_id: str) -> str:
        return f"{self.server_url}/v1/stream/{self.bucket}/{stream_id}"

    def path(self, stream_id: str) -> str:
        return f"{self.bucket}/{stream_id}"

    def create(self, stream_id: str, content_type: str = "application/json") -> str:
        response = httpx.put(self.url(stream_id), headers={"Content-Type": content_type})
        assert response.status_code == 201, response.text
        return self.path(stream_id)

    def append(self, stream_id: str, *messages: Any) -> str:
        """Append messages (one request); the Stream-Next-Offset."""
        body = msgspec.json.encode(list(messages))
        response = httpx.post(self.url(stream_id), content=body, headers=JSON)
        assert response.status_code in (200, 204), response.text
        return response.headers["Stream-Next-Offset"]

    def append_raw(self, stream_id: str, body: bytes) -> str:
        response = httpx.post(self.url(stream_id), content=body, headers=JSON)
        assert response.status_code in (200, 204), response.text
        return response.headers["Stream-Next-Offset"]

    def close(self, stream_id: str) -> None:
        response = httpx.post(self.url(stream_id), headers={**JSON, "Stream-Closed": "true"})
        assert response.status_code in (200, 204), response.text

    def delete(self, stream_id: str) -> None:
        assert httpx.delete(self.url(stream_id)).status_code == 204

    def read_all(self, stream_id: str) -> list[bytes]:
        """Every message of the stream, in order, as the raw JSON the server stores."""
        from durable_sessions.protocol import split_json_arrays as split_arrays

        messages: list[bytes] = []
        offset = "-1"
        while True:
            response = httpx.get(self.url(stream_id), params={"offset": offset})
            assert response.status_code == 200, response.text
            messages += split_arrays(response.content)
            offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Up-To-Date") == "true":
                return messages


def rows(postgres_url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(postgres_url) as conn:
        return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]


def count_events(postgres_url: str, stream: str | None = None) -> int:
    if stream is None:
        return int(rows(postgres_url, "SELECT count(*) FROM session_events")[0][0])
    sql = "SELECT count(*) FROM session_events WHERE stream_name = %s"
    return int(rows(postgres_url, sql, stream)[0][0])


def checkpoint(postgres_url: str, stream: str) -> tuple[str, str] | None:
    found = rows(
        postgres_url,
        "SELECT next_offset, status FROM sync_checkpoints WHERE stream_name = %s",
        stream,
    )
    return (found[0][0], found[0][1]) if found else None


# A short lease, so the tests see takeovers within a few seconds.
GROUP_LEASE_TTL_SECS = "2"


def group(
    server_url: str, postgres_url: str, streams: str, size: int, **env: str
) -> list[SyncProcess]:
    """``size`` ds-sync processes (not started) sharing one consumer name: one group."""
    name = "g" + uuid.uuid4().hex[:10]
    return [
        SyncProcess(
            server_url,
            postgres_url,
            streams,
            env={
                "DS_SYNC__INSTANCE": f"{name}-{chr(ord('a') + n)}",
                "DS_SYNC__LEASE_TTL_SECS": GROUP_LEASE_TTL_SECS,
                **env,
            },
            name=name,
        )
        for n in range(size)
    ]


def shards_held(postgres_url: str, name: str) -> dict[str, list[int]]:
    """Instance -> the shards it recorded holding (sync_instances), for the group ``name``."""
    found = rows(
        postgres_url,
        "SELECT instance, shards FROM sync_instances WHERE consumer = %s ORDER BY instance",
        name,
    )
    return {str(instance): sorted(shards) for instance, shards in found}
