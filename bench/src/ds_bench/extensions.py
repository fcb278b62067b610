"""The /ds extensions under load: server memory while bootstrapping a 1 GiB stream,
and the space a snapshot frees.

For each backend: fill one stream with 1 GiB in 1 MiB appends, stream its
``/bootstrap`` to /dev/null while sampling the server's RSS every 50 ms,
then publish a snapshot that keeps the last 10 % and measure the data
directory (allocated bytes, as ``du`` counts them) before and after.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psutil

from ds_bench.servers import DsServer

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

BOOTSTRAP_BACKENDS = ("sqlite", "file-durable", "memory")
DISK_BACKENDS = ("sqlite", "file-durable")
MiB = 1024 * 1024
SAMPLE_SECS = 0.05
RETAINED_SHARE = 0.10
# Space is freed lazily (sqlite vacuums a megabyte at a time while idle), so
# "settled" means unchanged for a while, not unchanged between two looks.
_QUIET_SECS = 10.0
_SETTLE_LIMIT_SECS = 300.0


@dataclass(frozen=True, slots=True)
class BootstrapFigures:
    backend: str
    stream_bytes: int
    fill_seconds: float
    rss_before: int
    rss_peak: int
    bootstrap_seconds: float
    body_bytes: int


@dataclass(frozen=True, slots=True)
class SpaceFigures:
    backend: str
    measure: str  # "data dir" (allocated bytes) or "server RSS"
    stream_bytes: int
    retained_bytes: int
    before: int
    after: int
    settle_seconds: float


class RssSampler:
    """The peak resident set size of a process, sampled on a thread."""

    def __init__(self, pid: int, interval: float = SAMPLE_SECS) -> None:
        self._process = psutil.Process(pid)
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.peak = 0
        self.samples = 0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, int(self._process.memory_info().rss))
            self.samples += 1
            self._stop.wait(self._interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def disk_usage(root: Path) -> int:
    """Bytes allocated under ``root`` (file blocks; holes and unlinked files are free)."""
    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_blocks * 512
            except FileNotFoundError:
                continue  # removed while walking
    return total


def _settled(measure: Callable[[], int], quiet: float = _QUIET_SECS) -> tuple[int, float]:
    """The value once it stayed the same for ``quiet`` seconds, and when it last changed."""
    started = time.perf_counter()
    value = measure()
    stable_since = started
    while time.perf_counter() - started < _SETTLE_LIMIT_SECS:
        time.sleep(0.25)
        current = measure()
        if current != value:
            value, stable_since = current, time.perf_counter()
        elif time.perf_counter() - stable_since >= quiet:
            break
    return value, stable_since - started


def _fill(http: httpx.Client, stream: str, total_bytes: int, append_bytes: int) -> list[str]:
    """Append ``total_bytes`` in ``append_bytes`` pieces; the offset after each."""
    block = os.urandom(append_bytes)
    offsets = []
    for index in range(total_bytes // append_bytes):
        # A different first bytes per append, so no two appends are alike.
        body = index.to_bytes(8, "big") + block[8:]
        response = http.post(
            stream, content=body, headers={"Content-Type": "application/octet-stream"}
        )
        response.raise_for_status()
        offsets.append(response.headers["Stream-Next-Offset"])
    return offsets


def _bootstrap_to_devnull(http: httpx.Client, stream: str) -> int:
    received = 0
    with http.stream("GET", f"{stream}/bootstrap") as response, open(os.devnull, "wb") as sink:
        response.raise_for_status()
        tail = b""
        for chunk in response.iter_raw(MiB):
            sink.write(chunk)
            received += len(chunk)
            tail = (tail + chunk)[-256:]
    if not tail.rstrip(b"\r\n").endswith(b"--"):
        raise RuntimeError("the bootstrap body has no closing delimiter")
    return received


def run_backend(
    backend: str, data_root: Path, total_bytes: int, append_bytes: int
) -> tuple[BootstrapFigures, SpaceFigures]:
    """Fill, bootstrap and snapshot one stream on a fresh server of ``backend``."""
    with tempfile.TemporaryDirectory(prefix=f"ds-bench-ext-{backend}-", dir=data_root) as tmp:
        data_dir = Path(tmp)
        extra = {"DS_LIMITS__MAX_STREAM_BYTES": str(total_bytes + 64 * MiB)}
        with (
            DsServer(backend, data_dir, extra_env=extra) as server,
            httpx.Client(base_url=server.url, timeout=300.0) as http,
        ):
            http.put("/ds/bench").raise_for_status()
            stream = "/ds/bench/big"
            http.put(
                stream, headers={"Content-Type": "application/octet-stream"}
            ).raise_for_status()
            started = time.perf_counter()
            offsets = _fill(http, stream, total_bytes, append_bytes)
            fill_seconds = time.perf_counter() - started
            stream_bytes = int(offsets[-1])
            rss_before, _ = _settled(server.rss_bytes, quiet=2.0)
            with RssSampler(server.pid) as sampler:
                started = time.perf_counter()
                body_bytes = _bootstrap_to_devnull(http, stream)
                bootstrap_seconds = time.perf_counter() - started
            boot = BootstrapFigures(
                backend=backend,
                stream_bytes=stream_bytes,
                fill_seconds=fill_seconds,
                rss_before=rss_before,
                rss_peak=max(sampler.peak, rss_before),
                bootstrap_seconds=bootstrap_seconds,
                body_bytes=body_bytes,
            )
            durable = backend in DISK_BACKENDS
            measure = (lambda: disk_usage(data_dir)) if durable else server.rss_bytes
            before, _ = _settled(measure)
            keep_from = offsets[round(len(offsets) * (1 - RETAINED_SHARE)) - 1]
            http.put(f"{stream}/snapshot/{keep_from}", content=b"folded state").raise_for_status()
            after, settle_seconds = _settled(measure)
            space = SpaceFigures(
                backend=backend,
                measure="data dir" if durable else "server RSS",
                stream_bytes=stream_bytes,
                retained_bytes=stream_bytes - int(keep_from),
                before=before,
                after=after,
                settle_seconds=settle_seconds,
            )
    return boot, space


def _mib(value: int) -> str:
    return f"{value / MiB:,.0f} MiB"


def markdown(boots: list[BootstrapFigures], spaces: list[SpaceFigures]) -> str:
    lines = [
        "| backend | stream | fill s | RSS before | peak RSS during bootstrap | growth "
        "| bootstrap s | MiB/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for b in boots:
        lines.append(
            f"| {b.backend} | {_mib(b.stream_bytes)} | {b.fill_seconds:.1f} | "
            f"{_mib(b.rss_before)} | {_mib(b.rss_peak)} | {_mib(b.rss_peak - b.rss_before)} | "
            f"{b.bootstrap_seconds:.1f} | {b.body_bytes / MiB / b.bootstrap_seconds:,.0f} |"
        )
    lines += [
        "",
        "| backend | measure | stream | retained | before snapshot | after snapshot "
        "| freed | settled in s |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in spaces:
        lines.append(
            f"| {s.backend} | {s.measure} | {_mib(s.stream_bytes)} | {_mib(s.retained_bytes)} | "
            f"{_mib(s.before)} | {_mib(s.after)} | {_mib(s.before - s.after)} | "
            f"{s.settle_seconds:.1f} |"
        )
    return "\n".join(lines) + "\n"


def write_results(out_dir: Path, boots: list[BootstrapFigures], spaces: list[SpaceFigures]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    payload = {
        "kind": "extensions",
        "bootstrap": [asdict(b) for b in boots],
        "space": [asdict(s) for s in spaces],
    }
    path = out_dir / f"extensions-{stamp}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    (out_dir / f"extensions-{stamp}.md").write_text(markdown(boots, spaces))
    return path


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``extensions`` subcommand's options."""
    parser = sub.add_parser(
        "extensions", help="server RSS while bootstrapping 1 GiB; space freed by a snapshot"
    )
    parser.add_argument("--backends", default=",".join(BOOTSTRAP_BACKENDS))
    parser.add_argument("--bytes", type=int, default=1024 * MiB, help="stream size")
    parser.add_argument("--append-bytes", type=int, default=MiB)
    parser.add_argument(
        "--data-root",
        type=Path,
        default=Path(tempfile.gettempdir()),
        help="where servers keep their data (a real disk, to measure space)",
    )


def run(args: argparse.Namespace, out_dir: Path) -> None:
    """Measure every backend asked for; print the tables and write the results."""
    boots: list[BootstrapFigures] = []
    spaces: list[SpaceFigures] = []
    for backend in (b for b in args.backends.split(",") if b):
        print(f"{backend}: filling {_mib(args.bytes)} ...", flush=True)
        boot, space = run_backend(backend, args.data_root, args.bytes, args.append_bytes)
        boots.append(boot)
        spaces.append(space)
    path = write_results(out_dir, boots, spaces)
    print(markdown(boots, spaces))
    print(f"results: {path}")
