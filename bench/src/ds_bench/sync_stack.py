"""``ds-bench sync``'s running stack: Postgres, ds-server, the ds-sync processes under test,
and a measured window's CPU and background load."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psutil
import psycopg
from ds_stack.postgres import EmbeddedPostgres, PostgresConfig

from ds_bench import _machine, sync_load, sync_profile
from ds_bench.servers import DsServer, ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator


def _tree_cpu() -> float:
    """CPU seconds used so far by this process and every process below it (servers, Postgres)."""
    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system
    return total


class Background:
    """How busy other work kept the machine during a scenario (a share of all cores)."""

    def __enter__(self) -> Background:
        self.share = 0.0
        self._busy = _machine.snapshot().busy
        self._ours = _tree_cpu()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        wall = (time.perf_counter() - self._wall) * (os.cpu_count() or 1)
        other = (_machine.snapshot().busy - self._busy) - (_tree_cpu() - self._ours)
        self.share = max(0.0, other / wall) if wall > 0 else 0.0


class Window:
    """One measured window: ds-sync's CPU over it (utime + stime, as ``/proc/<pid>/stat``
    counts them, through psutil, summed over the group's processes), how often it was woken
    (voluntary context switches: each costs CPU of its own, more the longer the sleep),
    other work's share of the machine, and a profile (of the first process) when asked."""

    def __init__(
        self, sync: SyncGroup, profile: Path | None = None, *, since_ready: bool = False
    ) -> None:
        self._sync = sync
        self._profile = profile
        # From each process's readiness rather than from now: work that began before.
        self._since_ready = since_ready
        self.cpu_seconds = 0.0
        self.wakeups = 0
        self.background = 0.0

    def __enter__(self) -> Window:
        self._stack = contextlib.ExitStack()
        if self._profile is not None:
            self._stack.enter_context(sync_profile.recording(self._sync.pid, self._profile))
        self._machine = self._stack.enter_context(Background())
        self._cpu = self._sync.ready_cpu if self._since_ready else self._sync.cpu_seconds()
        self._wakeups = self._sync.wakeups()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu_seconds = self._sync.cpu_seconds() - self._cpu
        self.wakeups = self._sync.wakeups() - self._wakeups
        self._stack.close()
        self.background = self._machine.share
        if self._profile is not None and exc[0] is None:
            summary = sync_profile.top(self._profile)
            self._profile.with_name(self._profile.name.replace(".pyspy.", ".profile.")).write_text(
                summary
            )
            print(summary, flush=True)

    def us_per(self, events: int) -> float:
        return self.cpu_seconds / max(1, events) * 1e6

    def wakeups_per(self, events: int) -> float:
        return self.wakeups / max(1, events)


class SyncService(ServerProcess):
    """``python -m ds_sync run`` against the bench's server and database."""

    label = "ds-sync"

    def __init__(self, server_url: str, postgres_url: str, streams: str, **settings: str) -> None:
        super().__init__()
        self._env = {
            "DS_SERVER_URL": server_url,
            "POSTGRES_URL": postgres_url,
            "DS_SYNC__STREAMS": streams,
            "DS_SYNC__NAME": "bench-" + uuid.uuid4().hex[:8],
            "DS_SYNC__METRICS_PORT": str(self.port),
            # No table mirrored unless a scenario asks: each would add a replication slot.
            "DS_SYNC__TABLES": "",
        }
        self.settings(**settings)

    def settings(self, **settings: str) -> None:
        """``DS_SYNC__{NAME}`` settings, before it starts."""
        self._env.update({f"DS_SYNC__{name.upper()}": value for name, value in settings.items()})

    def command(self) -> list[str]:
        return [sys.executable, "-m", "ds_sync", "run", "--log-level", "warning"]

    def environment(self) -> dict[str, str]:
        return {**os.environ, **self._env}

    def is_ready(self) -> bool:
        return httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200

    def metric(self, name: str) -> float:
        for line in httpx.get(f"{self.url}/metrics", timeout=5).text.splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return float(value)
        raise RuntimeError(f"ds-sync has no metric {name}")


class SyncGroup:
    """``instances`` ds-sync processes sharing one consumer name: the session streams' shards
    divided between them, one mirror per table and standbys; a context manager that returns
    once the shards are divided (no process still claiming or handing back while measured)."""

    def __init__(
        self,
        server_url: str,
        postgres_url: str,
        streams: str,
        instances: int,
        *,
        divided: bool = True,
        **settings: str,
    ) -> None:
        name = "bench-" + uuid.uuid4().hex[:8]
        self._postgres_url = postgres_url
        self._divided = divided
        self.ready_cpu = 0.0  # the CPU each process had used when it became ready, summed
        self.processes = [
            SyncService(server_url, postgres_url, streams, name=name, instance=f"{name}-{n + 1}")
            for n in range(instances)
        ]
        for process in self.processes:
            process.settings(**settings)

    @property
    def pid(self) -> int:
        """The first process's (what ``--profile`` records)."""
        return self.processes[0].pid

    def cpu_seconds(self) -> float:
        return sum(process.cpu_seconds() for process in self.processes)

    def wakeups(self) -> int:
        return sum(process.wakeups() for process in self.processes)

    def metric(self, name: str) -> float:
        """A counter summed over the processes."""
        return sum(process.metric(name) for process in self.processes)

    def __enter__(self) -> SyncGroup:
        try:
            for process in self.processes:
                process.start()
                self.ready_cpu += process.cpu_seconds()
            if self._divided and len(self.processes) > 1:
                self._wait_divided()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            with contextlib.suppress(Exception):
                process.stop()

    def _wait_divided(self) -> None:
        # The default 8 shards: each process holds its share, no more.
        share = -(-8 // len(self.processes))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with psycopg.connect(self._postgres_url) as conn:
                held = [
                    int(row[0])
                    for row in conn.execute("SELECT cardinality(shards) FROM sync_instances")
                ]
            if len(held) == len(self.processes) and sum(held) == 8 and max(held) <= share:
                return
            time.sleep(0.2)
        raise RuntimeError(f"ds-sync processes never divided the shards: {held}")


class Stack:
    """Postgres and ds-server for the whole run; a database and a bucket per scenario."""

    def __init__(self, postgres: EmbeddedPostgres, server: DsServer, instances: int = 1) -> None:
        self.postgres = postgres
        self.server = server
        self.instances = instances

    @property
    def label(self) -> str:
        """What a scenario's name says of the ds-sync processes (nothing for one)."""
        return "" if self.instances == 1 else f", {self.instances} ds-sync processes"

    def syncs(
        self, database: str, streams: str, *, divided: bool = True, **settings: str
    ) -> SyncGroup:
        """The run's ds-sync processes for one scenario's database; ``divided``: entered once
        they have divided the shards."""
        return SyncGroup(
            self.server.url, database, streams, self.instances, divided=divided, **settings
        )

    def scenario(self, streams: int) -> tuple[str, str, list[str]]:
        """A fresh database URL, bucket and ``streams`` JSON streams in it."""
        database = self.postgres.create_database("bench_" + uuid.uuid4().hex[:10])
        bucket = "bench" + uuid.uuid4().hex[:10]
        base = self.server.url
        assert httpx.put(f"{base}/ds/{bucket}").status_code == 201
        urls = []
        with httpx.Client() as http:
            for n in range(streams):
                url = f"{base}/v1/stream/{bucket}/s{n}"
                assert http.put(url, headers=sync_load.JSON).status_code == 201
                urls.append(url)
        return database, bucket, urls


@contextlib.contextmanager
def stack(instances: int = 1) -> Iterator[Stack]:
    data_dir = Path(tempfile.mkdtemp(prefix="ds-postgres-bench-"))
    server_dir = Path(tempfile.mkdtemp(prefix="ds-server-bench-"))
    postgres = EmbeddedPostgres(
        PostgresConfig(data_dir=data_dir, settings={"track_commit_timestamp": "on"})
    )
    try:
        postgres.start()
        with DsServer("memory", server_dir) as server:
            assert isinstance(server, DsServer)
            yield Stack(postgres, server, instances)
    finally:
        postgres.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
        shutil.rmtree(server_dir, ignore_errors=True)
