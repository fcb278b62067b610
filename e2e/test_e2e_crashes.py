"""Crashes and restarts of the real processes, while clients keep writing and reading.

Each scenario SIGKILLs (or restarts) one component of the shared stack in
the middle of traffic, starts it again through the same launcher, and
counts: every acknowledged or retried message is delivered and stored
exactly once (lost = 0, doubled = 0). Each leaves the stack running.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from e2e_clients import Producer, Reader, create, wait_until
from e2e_events import message
from e2e_stack import E2E, unique

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

pytestmark = pytest.mark.restarts


def _event(stream: int, n: int) -> Any:
    return message(f"msg:{stream}-{n}", "user", f"{stream}/{n}")


def _keys(session: str, streams: int, per_stream: int) -> dict[str, list[str]]:
    return {
        f"sessions/{session}-{s}": [f"msg:{s}-{n}" for n in range(per_stream)]
        for s in range(streams)
    }


def _stored(e2e: E2E, session: str) -> dict[str, list[str]]:
    """Each stream's event keys in session_events, in stream order."""
    rows = e2e.sql(
        "SELECT stream_name, event_key FROM session_events WHERE stream_name LIKE %s "
        "ORDER BY stream_name, ds_offset, event_index",
        f"sessions/{session}-%",
    )
    stored: dict[str, list[str]] = {}
    for stream, key in rows:
        stored.setdefault(stream, []).append(key)
    return stored


def _lost_and_doubled(expected: dict[str, list[str]], got: dict[str, list[str]]) -> tuple[int, int]:
    lost = doubled = 0
    for stream, keys in expected.items():
        counts = Counter(got.get(stream, []))
        lost += sum(1 for key in keys if counts[key] == 0)
        doubled += sum(count - 1 for count in counts.values() if count > 1)
    return lost, doubled


async def _produce(producers: list[Producer], per_stream: int, batch: int, pause: float) -> None:
    async def run(s: int, producer: Producer) -> None:
        for n in range(0, per_stream, batch):
            await producer.append(*(_event(s, k) for k in range(n, min(n + batch, per_stream))))
            await asyncio.sleep(pause)

    await asyncio.gather(*(run(s, p) for s, p in enumerate(producers)))


async def _when(progress: Callable[[], bool], action: Callable[[], Awaitable[None]]) -> None:
    """Run ``action`` once ``progress`` holds (polled)."""
    async with asyncio.timeout(120):
        # Polled: progress is a count the producers move, not an event they set.
        while not progress():  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    await action()


def _metric(e2e: E2E, name: str) -> float:
    """One of ds-sync's unlabelled metrics."""
    text = httpx.get(f"{e2e.stack.config.sync_url}/metrics", timeout=10).text
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return float(value)
    raise AssertionError(f"ds-sync has no metric {name}")


def _report(capsys: pytest.CaptureFixture[str], line: str) -> None:
    with capsys.disabled():
        print(f"\ne2e: {line}")


async def _noop() -> None:
    pass


async def test_kill9_of_ds_server_with_readers_and_producers_running(
    e2e: E2E, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGKILL of ds-server while producers append and SSE readers follow: producers retry
    until acknowledged, readers reconnect from their offsets, ds-sync catches up, and every
    message is read and stored exactly once, in each producer's order."""
    session, streams, per_stream = unique("srvkill"), 4, 60
    with e2e.client() as http:
        for s in range(streams):
            create(http, f"/ds/sessions/{session}-{s}")
    headers = {"Authorization": f"Bearer {e2e.token()}"}
    readers = [Reader(f"{e2e.url}/ds/sessions/{session}-{s}", headers) for s in range(streams)]
    async with e2e.async_client() as http:
        producers = [Producer(http, f"/ds/sessions/{session}-{s}", f"p{s}") for s in range(streams)]
        reading = [
            asyncio.create_task(reader.read_until(lambda got: len(got) >= per_stream))
            for reader in readers
        ]

        read_at_kill: list[int] = []

        async def crash() -> None:
            read_at_kill.extend(len(reader.messages) for reader in readers)
            e2e.stack.server.kill()  # SIGKILL of the real process
            await asyncio.to_thread(e2e.stack.server.start)

        def mid_stream() -> bool:
            # Every reader live on the server about to die (it has read), every
            # producer a third of the way through.
            return min(p.seq for p in producers) >= per_stream // 3 and all(
                reader.messages for reader in readers
            )

        await asyncio.gather(
            _produce(producers, per_stream, batch=1, pause=0.02),
            _when(mid_stream, crash),
        )
        await asyncio.gather(*reading)

    expected = _keys(session, streams, per_stream)
    assert sum(p.retries for p in producers) > 0, "the kill hit no append in flight"
    # Cut off mid-stream, whether the client resumed inside follow() (its own
    # SSE reconnect) or by a new read_until round (counted in reconnects).
    assert all(read_at_kill), "a reader was not yet reading when the server died"
    assert sum(read_at_kill) < streams * per_stream, "the readers had everything before the kill"
    read = {
        f"sessions/{session}-{s}": [m["key"] for m in r.messages] for s, r in enumerate(readers)
    }
    assert _lost_and_doubled(expected, read) == (0, 0)
    assert read == expected  # and in order
    wait_until(lambda: _stored(e2e, session) == expected, timeout=90, what="ds-sync caught up")
    assert e2e.stack.exited() is None
    _report(
        capsys,
        f"ds-server SIGKILLed with {streams} producers x {per_stream} appends and {streams} "
        f"SSE readers running: {sum(p.retries for p in producers)} appends retried "
        f"({sum(p.duplicates for p in producers)} were stored already), readers reconnected "
        f"{sum(r.reconnects for r in readers)} times; read and session_events: 0 lost, "
        "0 doubled, in order",
    )


async def test_kill9_of_ds_sync_during_a_burst(
    e2e: E2E, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGKILL of ds-sync, twice, during a burst of appends and items inserts: after each
    restart it resumes from its committed checkpoints; session_events and pg-items end with
    every event and row exactly once."""
    session, streams, per_stream = unique("synckill"), 8, 80
    titles = [unique("burst-row") for _ in range(20)]
    with e2e.client() as http:
        for s in range(streams):
            create(http, f"/ds/sessions/{session}-{s}")
        pg_tail = http.head("/v1/stream/pg-items").headers["Stream-Next-Offset"]
    kills = 0

    async def crash_sync_twice(progress: Callable[[float], bool]) -> None:
        nonlocal kills
        sync = e2e.stack.sync
        assert sync is not None
        for share in (0.25, 0.6):
            await _when(lambda share=share: progress(share), _noop)
            sync.kill()  # SIGKILL of the real process
            kills += 1
            await asyncio.sleep(0.3)
            await asyncio.to_thread(sync.start)

    async def insert_rows() -> None:
        for title in titles:
            await asyncio.to_thread(
                e2e.sql, "INSERT INTO items (title) VALUES (%s) RETURNING id", title
            )
            await asyncio.sleep(0.05)

    async with e2e.async_client() as http:
        producers = [Producer(http, f"/ds/sessions/{session}-{s}", f"b{s}") for s in range(streams)]

        def progress(share: float) -> bool:
            return min(p.seq for p in producers) * 4 >= per_stream * share

        await asyncio.gather(
            _produce(producers, per_stream, batch=4, pause=0.01),
            insert_rows(),
            crash_sync_twice(progress),
        )
    assert kills == 2
    expected = _keys(session, streams, per_stream)
    wait_until(lambda: _stored(e2e, session) == expected, timeout=120, what="session_events")
    assert _lost_and_doubled(expected, _stored(e2e, session)) == (0, 0)

    reader = Reader(
        f"{e2e.url}/v1/stream/pg-items", {"Authorization": f"Bearer {e2e.token()}"}, pg_tail
    )
    wanted = set(titles)
    ours = lambda got: [m["value"]["title"] for m in got if _title(m) in wanted]  # noqa: E731
    await reader.read_until(lambda got: set(ours(got)) == wanted)
    await asyncio.sleep(0.5)  # a doubled change would arrive right behind
    await reader.read_until(lambda got: True, give_up_secs=10)
    assert Counter(ours(reader.messages)) == Counter(titles)
    assert e2e.stack.exited() is None
    _report(
        capsys,
        f"ds-sync SIGKILLed {kills} times during {streams} x {per_stream} events and "
        f"{len(titles)} items inserts: session_events and pg-items 0 lost, 0 doubled",
    )


def _title(change: Any) -> str | None:
    value = change.get("value") if isinstance(change, dict) else None
    return value.get("title") if isinstance(value, dict) else None


async def test_postgres_restart(e2e: E2E, capsys: pytest.CaptureFixture[str]) -> None:
    """Postgres stops (fast shutdown) and starts again while producers write sessions:
    ds-sync rides through, every event is stored exactly once, and rows inserted after the
    restart reach pg-items."""
    session, streams, per_stream = unique("pgrestart"), 3, 60
    with e2e.client() as http:
        for s in range(streams):
            create(http, f"/ds/sessions/{session}-{s}")
        pg_tail = http.head("/v1/stream/pg-items").headers["Stream-Next-Offset"]

    errors_before = _metric(e2e, "ds_sync_database_errors_total")

    async def restart_postgres() -> None:
        await asyncio.to_thread(e2e.stack.postgres.stop)
        await asyncio.sleep(1.0)
        await asyncio.to_thread(e2e.stack.postgres.start)

    async with e2e.async_client() as http:
        producers = [Producer(http, f"/ds/sessions/{session}-{s}", f"r{s}") for s in range(streams)]
        await asyncio.gather(
            _produce(producers, per_stream, batch=1, pause=0.05),
            _when(lambda: min(p.seq for p in producers) >= per_stream // 4, restart_postgres),
        )
    title = unique("after-restart")
    e2e.sql("INSERT INTO items (title) VALUES (%s) RETURNING id", title)

    expected = _keys(session, streams, per_stream)
    wait_until(lambda: _stored(e2e, session) == expected, timeout=120, what="session_events")
    reader = Reader(
        f"{e2e.url}/v1/stream/pg-items", {"Authorization": f"Bearer {e2e.token()}"}, pg_tail
    )
    await reader.read_until(lambda got: any(_title(m) == title for m in got))
    assert [_title(m) for m in reader.messages].count(title) == 1
    errors = _metric(e2e, "ds_sync_database_errors_total") - errors_before
    assert errors > 0, "ds-sync never met the restart"
    assert e2e.stack.exited() is None
    _report(
        capsys,
        f"Postgres restarted during {streams} x {per_stream} appends; ds-sync met "
        f"{int(errors)} database errors and stayed up: session_events 0 lost, 0 doubled; "
        "a row inserted after the restart reached pg-items once",
    )
