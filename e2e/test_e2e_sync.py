"""Postgres and the streams kept in step by ds-sync, both ways, through the gateway."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from e2e_clients import JSON, Reader, append, create, wait_until
from e2e_events import message, presence
from e2e_stack import E2E, unique

if TYPE_CHECKING:
    import httpx

PG_ITEMS = "/v1/stream/pg-items"


def _tail(e2e: E2E, path: str) -> str:
    with e2e.client() as http:
        response = http.head(path)
        assert response.status_code == 200, response.text
        return response.headers["Stream-Next-Offset"]


def _pg_items_reader(e2e: E2E) -> Reader:
    """A reader of pg-items from its current tail: it sees only what happens from now on."""
    token = e2e.token("items-reader", read="pg-items", write="pg-items")
    return Reader(
        f"{e2e.url}{PG_ITEMS}", {"Authorization": f"Bearer {token}"}, _tail(e2e, PG_ITEMS)
    )


def _of_title(messages: list[Any], titles: set[str]) -> list[Any]:
    return [
        m for m in messages if isinstance(m.get("value"), dict) and m["value"]["title"] in titles
    ]


async def test_postgres_to_stream(e2e: E2E) -> None:
    """A row inserted into items reaches a reader of pg-items as a State Protocol insert."""
    title = unique("row")
    reader = _pg_items_reader(e2e)
    [(row_id, created)] = e2e.sql(
        "INSERT INTO items (title, body) VALUES (%s, 'from e2e') RETURNING id, created_at", title
    )
    await reader.read_until(lambda seen: bool(_of_title(seen, {title})))
    [change] = _of_title(reader.messages, {title})
    assert change["type"] == "items"
    assert change["key"] == str(row_id)
    assert change["headers"]["operation"] == "insert"
    assert change["headers"]["txid"].isdigit()
    assert change["value"]["id"] == row_id
    assert change["value"]["body"] == "from e2e"
    assert change["value"]["created_at"].startswith(created.strftime("%Y-%m-%dT%H:%M:%S"))


def test_stream_to_postgres(e2e: E2E) -> None:
    """Events appended to a session become session_events rows: one per message, in stream
    order, with type, key, operation and event time taken from either event shape."""
    session = unique("to-pg")
    path = f"/ds/sessions/{session}"
    events = [
        presence("bob", "online", t=0),
        message("msg:1", "user", "a question", t=1.5),
        message("msg:1", "user", "the question", operation="update", t=2),
        {"not": "a session event"},
    ]
    with e2e.client() as http:
        create(http, path)
        append(http, path, events[0])
        append(http, path, *events[1:])
    stream = f"sessions/{session}"
    query = (
        "SELECT ds_offset, event_index, event_type, event_key, operation, event_time, payload "
        "FROM session_events WHERE stream_name = %s ORDER BY ds_offset, event_index"
    )
    rows = wait_until(
        lambda: (found := e2e.sql(query, stream)) and len(found) == len(events) and found,
        what="the session's rows",
    )
    assert [row[6] for row in rows] == events
    assert [row[2:5] for row in rows] == [
        ("presence", "user:bob", "set"),
        ("message", "msg:1", "insert"),
        ("message", "msg:1", "update"),
        (None, None, None),
    ]
    assert [row[5].isoformat() if row[5] else None for row in rows] == [
        "2026-11-26T10:00:00+00:00",
        "2026-11-26T10:00:01.500000+00:00",
        "2026-11-26T10:00:02+00:00",
        None,
    ]
    # A read from the start begins at offset 0; every offset is a 20-digit byte position.
    assert rows[0][0] == "0" * 20
    assert all(len(row[0]) == 20 and row[0].isdigit() for row in rows)


async def test_round_trip(e2e: E2E) -> None:
    """A chat message goes stream -> session_events; an application turns the row into an
    items row; that change comes back as a pg-items message to a live reader."""
    session = unique("trip")
    text = unique("ask")
    reader = _pg_items_reader(e2e)
    with e2e.client() as http:
        create(http, f"/ds/sessions/{session}", message("msg:1", "user", text))
    stream = f"sessions/{session}"
    [(payload,)] = wait_until(
        lambda: e2e.sql("SELECT payload FROM session_events WHERE stream_name = %s", stream),
        what="the message in session_events",
    )
    # The application's step: a task row made from the synced message.
    e2e.sql(
        "INSERT INTO items (title, body) VALUES (%s, %s) RETURNING id",
        payload["value"]["text"],
        f"from {stream}",
    )
    await reader.read_until(lambda seen: bool(_of_title(seen, {text})))
    [change] = _of_title(reader.messages, {text})
    assert change["value"]["body"] == f"from {stream}"
    assert change["headers"]["operation"] == "insert"


async def test_update_and_delete_reach_the_stream(e2e: E2E) -> None:
    """Updates and deletes of items rows reach pg-items in commit order, and applying
    pg-items as the State Protocol says gives exactly the rows the table holds."""
    kept, gone = unique("kept"), unique("gone")
    reader = _pg_items_reader(e2e)
    [(kept_id,)] = e2e.sql("INSERT INTO items (title) VALUES (%s) RETURNING id", kept)
    [(gone_id,)] = e2e.sql("INSERT INTO items (title) VALUES (%s) RETURNING id", gone)
    e2e.sql("UPDATE items SET body = 'edited' WHERE id = %s RETURNING id", kept_id)
    e2e.sql("UPDATE items SET title = %s WHERE id = %s RETURNING id", gone + "-renamed", gone_id)
    e2e.sql("DELETE FROM items WHERE id = %s RETURNING id", gone_id)
    keys = {str(kept_id), str(gone_id)}
    ours = lambda seen: [m for m in seen if m.get("key") in keys]  # noqa: E731
    await reader.read_until(lambda seen: len(ours(seen)) == 5)
    changes = ours(reader.messages)
    assert [(c["key"], c["headers"]["operation"]) for c in changes] == [
        (str(kept_id), "insert"),
        (str(gone_id), "insert"),
        (str(kept_id), "update"),
        (str(gone_id), "update"),
        (str(gone_id), "delete"),
    ]
    assert changes[2]["value"]["body"] == "edited"
    assert changes[3]["value"]["title"] == gone + "-renamed"
    assert changes[4]["value"] is None
    state: dict[str, Any] = {}
    for change in changes:
        if change["headers"]["operation"] == "delete":
            state.pop(change["key"], None)
        else:
            state[change["key"]] = change["value"]
    rows = e2e.sql("SELECT id, title, body FROM items WHERE id = ANY(%s)", [kept_id, gone_id])
    assert {key: (v["id"], v["title"], v["body"]) for key, v in state.items()} == {
        str(row[0]): row for row in rows
    }


def test_heartbeat_reaches_both_directions(e2e: E2E) -> None:
    """The heartbeat producer's rows are in items and pg-items, and its session events in
    session-events and session_events, as in the reference stack's dev profile."""
    wait_until(
        lambda: (
            e2e.sql("SELECT count(*) FROM items WHERE title LIKE 'heartbeat %%'")[0][0] >= 1
            and e2e.sql(
                "SELECT count(*) FROM session_events WHERE stream_name = 'session-events' "
                "AND payload->'value'->>'author' = 'producer:heartbeat'"
            )[0][0]
            >= 1
        ),
        timeout=30,
        what="heartbeat rows in items and session_events",
    )
    with e2e.client() as http:
        body = http.get(PG_ITEMS, params={"offset": "-1"}).json()
    assert any(
        isinstance(m.get("value"), dict) and m["value"]["title"].startswith("heartbeat ")
        for m in body
    )


async def test_a_thousand_sessions_in_one_burst(e2e: E2E) -> None:
    """1,000 sessions created at once through Envoy, each with its first event: every one is
    found by ds-sync and lands in session_events exactly once."""
    burst = unique("burst")
    count = 1000
    limit = asyncio.Semaphore(32)

    async def open_session(http: httpx.AsyncClient, n: int) -> None:
        body = json.dumps([message("msg:1", "user", f"{burst} {n}")])
        async with limit:
            response = await http.put(f"/ds/sessions/{burst}-{n}", content=body, headers=JSON)
        assert response.status_code == 201, response.text

    async with e2e.async_client() as http:
        await asyncio.gather(*(open_session(http, n) for n in range(count)))
    query = (
        "SELECT count(*), count(DISTINCT stream_name) FROM session_events WHERE stream_name LIKE %s"
    )
    wait_until(
        lambda: e2e.sql(query, f"sessions/{burst}-%")[0] == (count, count),
        timeout=180,
        what=f"{count} sessions in session_events",
    )
    texts = e2e.sql(
        "SELECT payload->'value'->>'text' FROM session_events WHERE stream_name LIKE %s",
        f"sessions/{burst}-%",
    )
    assert sorted(text for (text,) in texts) == sorted(f"{burst} {n}" for n in range(count))
