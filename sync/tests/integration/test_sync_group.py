"""Several ds-sync processes share the session streams: shards, leases, takeover."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ds_sync.sessions.shards import shard_of
from sync_support import count_events, group, rows, shards_held, wait_until

if TYPE_CHECKING:
    import pytest
    from sync_support import Streams

SHARDS = 8
STREAMS = 16
COMMITTED = 'ds_sync_events_total{direction="stream_to_postgres"}'


def _event(n: int) -> dict[str, object]:
    return {"type": "message", "key": f"msg:{n}", "value": {"n": n}}


def test_processes_divide_the_shards_and_a_killed_ones_are_taken_over(
    ds_server: str, postgres_db: str, streams: Streams, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [streams.create(f"s{n}") for n in range(STREAMS)]
    first, second = group(ds_server, postgres_db, f"{streams.bucket}/*", 2)
    try:
        first.start()
        second.start()
        name = first.name

        def divided() -> dict[str, list[int]] | None:
            held = shards_held(postgres_db, name)
            shards = [s for found in held.values() for s in found]
            fair = len(held) == 2 and all(len(found) == SHARDS // 2 for found in held.values())
            return held if fair and sorted(shards) == list(range(SHARDS)) else None

        held = wait_until(divided, timeout=60, what="each process holding half the shards")
        for n, _ in enumerate(paths):
            streams.append(f"s{n}", _event(n))
        wait_until(lambda: count_events(postgres_db) == STREAMS, what="every stream synced")
        # Both processes committed: the streams were divided, not all read by one.
        counts = {p.instance: p.metric(COMMITTED) for p in (first, second)}

        # SIGKILL the first: its shards' streams go on being synced by the second.
        victim = [p for n, p in enumerate(paths) if shard_of(p, SHARDS) in held[first.instance]]
        killed_at = time.monotonic()
        first.kill()
        for n, path in enumerate(paths):
            streams.append(path.split("/")[1], _event(STREAMS + n))
        victim_keys = [f"msg:{STREAMS + paths.index(p)}" for p in victim]

        def taken_over() -> bool:
            found = rows(
                postgres_db,
                "SELECT count(*) FROM session_events WHERE event_key = ANY(%s)",
                victim_keys,
            )
            return found[0][0] == len(victim_keys)

        wait_until(taken_over, timeout=60, what="the killed process's streams synced")
        took = time.monotonic() - killed_at
        wait_until(
            lambda: shards_held(postgres_db, name).get(second.instance) == list(range(SHARDS)),
            timeout=30,
            what="the survivor holding every shard",
        )
        assert count_events(postgres_db) == 2 * STREAMS
        duplicated = rows(
            postgres_db,
            "SELECT count(*) FROM (SELECT event_key FROM session_events GROUP BY event_key "
            "HAVING count(*) > 1) d",
        )[0][0]
        assert duplicated == 0
        assert second.stop() == 0
        with capsys.disabled():
            print(
                f"\ngroup of 2: shards {held}; events committed {counts}; first SIGKILLed, "
                f"its {len(victim)} streams' new events in session_events {took:.1f}s later "
                f"(lease TTL 2 s); 0 duplicated"
            )
        assert all(count > 0 for count in counts.values())
    finally:
        first.kill()
        second.kill()


def test_a_process_stopping_hands_its_shards_over_at_once(
    ds_server: str, postgres_db: str, streams: Streams
) -> None:
    first, second = group(ds_server, postgres_db, f"{streams.bucket}/*", 2)
    try:
        first.start()
        second.start()
        name = first.name
        wait_until(
            lambda: len(shards_held(postgres_db, name).get(second.instance, [])) == SHARDS // 2,
            timeout=60,
            what="the second process holding its half",
        )
        assert second.stop() == 0
        # Released, not left to run out: the first holds them all, and the second's row is gone.
        wait_until(
            lambda: shards_held(postgres_db, name) == {first.instance: list(range(SHARDS))},
            timeout=30,
            what="the first process holding every shard",
        )
        assert first.metric("ds_sync_shards_held") == SHARDS
    finally:
        first.kill()
        second.kill()


def test_rows_of_processes_gone_for_an_hour_are_deleted(
    ds_server: str, postgres_db: str, streams: Streams
) -> None:
    (live,) = group(ds_server, postgres_db, f"{streams.bucket}/*", 1)
    try:
        live.start()
        wait_until(lambda: shards_held(postgres_db, live.name), what="the live process's row")
        # What SIGKILLed processes leave: rows nobody renews, in this group and another.
        gone = [(live.name, "host-101", "2 hours"), ("other-group", "host-7", "3 hours")]
        recent = (live.name, "host-102", "5 minutes")
        for consumer, instance, age in [*gone, recent]:
            rows(
                postgres_db,
                "INSERT INTO sync_instances (consumer, instance, shards, seen_at) "
                "VALUES (%s, %s, '{}', now() - %s::interval) RETURNING 1",
                consumer,
                instance,
                age,
            )

        def forgotten() -> set[tuple[str, str]] | None:
            found = rows(postgres_db, "SELECT consumer, instance FROM sync_instances")
            return {(str(c), str(i)) for c, i in found} if len(found) == 2 else None

        left = wait_until(forgotten, what="the rows unseen for an hour deleted")
        # A process that died minutes ago is still shown; the live one of course.
        assert left == {(live.name, live.instance), recent[:2]}
    finally:
        live.stop()
