"""The access log hook: lines batched on the loop, written later, all of them by ``close``."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from ds_server.observability.access_log import MAX_BATCH, AccessLog
from ds_server.observability.line_writer import LineWriter
from ds_server.observability.request_lines import dropped_line

if TYPE_CHECKING:
    from pathlib import Path


def serve(hook: AccessLog, count: int, first: int = 0) -> None:
    for i in range(first, first + count):
        scope: Any = {
            "method": "POST",
            "path": "/v1/stream/a",
            "headers": [(b"x-request-id", f"r{i}".encode())],
        }
        hook.request_finished(scope, 0.0, 204)


def logged_ids(path: Path) -> list[str]:
    return [line.rsplit("id=", 1)[1] for line in path.read_text().splitlines()]


def test_lines_wait_for_the_flush_interval_then_are_written_together(tmp_path: Path) -> None:
    path = tmp_path / "log"

    async def run() -> None:
        with path.open("wb") as out:
            writer = LineWriter(out.fileno(), lambda n: dropped_line(n, "text").encode())
            hook = AccessLog("text", writer, flush_secs=0.2)
            serve(hook, 3)
            await asyncio.sleep(0)
            writer.drain(5)
            assert path.read_text() == ""  # not on the request's path
            await asyncio.sleep(0.4)
            writer.drain(5)
            assert logged_ids(path) == ["r0", "r1", "r2"]
            serve(hook, 2, first=3)
            hook.close()  # shutdown: at once, without waiting for the interval
            assert logged_ids(path) == ["r0", "r1", "r2", "r3", "r4"]

    asyncio.run(run())


def test_a_burst_is_written_whole_in_order_in_batches_of_at_most_max_batch(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log"
    batches: list[int] = []

    class Counting(LineWriter):
        def write(self, data: bytes, lines: int) -> None:
            batches.append(lines)
            super().write(data, lines)

    async def run() -> None:
        with path.open("wb") as out:
            hook = AccessLog("json", Counting(out.fileno(), lambda n: b""), flush_secs=60)
            serve(hook, 3 * MAX_BATCH + 5)
            hook.close()

    asyncio.run(run())
    ids = [json.loads(line)["request_id"] for line in path.read_text().splitlines()]
    assert ids == [f"r{i}" for i in range(3 * MAX_BATCH + 5)]
    assert batches == [MAX_BATCH, MAX_BATCH, MAX_BATCH, 5]


def test_a_request_that_ended_without_a_response_is_logged_with_status_0(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log"

    async def run() -> None:
        with path.open("wb") as out:
            hook = AccessLog("text", LineWriter(out.fileno(), lambda n: b""))
            scope: Any = {"method": "GET", "path": "/v1/stream/a", "headers": []}
            hook.request_finished(scope, 0.0, 0)
            hook.close()

    asyncio.run(run())
    assert path.read_text().startswith("INFO ds_server.access GET /v1/stream/a 0 ")
