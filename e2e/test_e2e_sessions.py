"""Sessions through the gateway: the reference stack's protocol scenarios, end to end."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from e2e_clients import JSON, Producer, Reader, append, create, read_all, wait_until
from e2e_events import chunk, message, presence
from e2e_stack import E2E, unique

if TYPE_CHECKING:
    import httpx


def _synced_keys(e2e: E2E, stream: str) -> list[str | None]:
    rows = e2e.sql(
        "SELECT event_key FROM session_events WHERE stream_name = %s "
        "ORDER BY ds_offset, event_index",
        stream,
    )
    return [key for (key,) in rows]


def test_session_lifecycle(e2e: E2E) -> None:
    """A session is created, written, read, closed and deleted through Envoy, and its
    events reach session_events in stream order, with the columns sessions.md §3 names."""
    session = unique("life")
    path = f"/ds/sessions/{session}"
    events = [
        presence("alice", "online", t=0),
        message("msg:1", "user", "hello", t=1),
        chunk("msg:2", "Hi ", 0, t=2),
        chunk("msg:2", "there", 1, t=3),
        presence("alice", "offline", t=4),
    ]
    with e2e.client() as http:
        create(http, path)
        append(http, path, *events[:2])
        tail = append(http, path, *events[2:])
        head = http.head(path)
        assert head.status_code == 200
        assert head.headers["Content-Type"] == "application/json"
        assert head.headers["Stream-Next-Offset"] == tail
        assert read_all(http, path) == (events, tail)

        closed = http.post(path, headers={**JSON, "Stream-Closed": "true"})
        assert closed.status_code in (200, 204), closed.text
        late = json.dumps([message("msg:3", "user", "late")])
        refused = http.post(path, content=late, headers=JSON)
        assert refused.status_code == 409
        assert http.head(path).headers.get("Stream-Closed") == "true"

        wait_until(
            lambda: len(_synced_keys(e2e, f"sessions/{session}")) == len(events),
            what="the session's rows in session_events",
        )
        rows = e2e.sql(
            "SELECT event_type, event_key, operation, event_time IS NOT NULL, payload "
            "FROM session_events WHERE stream_name = %s ORDER BY ds_offset, event_index",
            f"sessions/{session}",
        )
        assert rows == [
            (e["type"], e["key"], e.get("operation") or e["headers"]["operation"], True, e)
            for e in events
        ]

        assert http.delete(path).status_code == 204
        assert http.get(path, params={"offset": "-1"}).status_code == 404


async def test_multi_producer_chat_ordering(e2e: E2E) -> None:
    """Three producers writing one chat at once: each one's messages keep their order, every
    reader sees the same single order, and session_events holds exactly that order."""
    session = unique("chat")
    path = f"/ds/sessions/{session}"
    per_producer = 25
    with e2e.client() as http:
        create(http, path)
    async with e2e.async_client() as http:
        producers = [Producer(http, path, f"{who}-{session}") for who in ("alice", "bob", "bot")]

        async def chat(producer: Producer) -> None:
            for n in range(per_producer):
                await producer.append(message(f"msg:{producer.producer_id}-{n}", "user", str(n)))

        await asyncio.gather(*(chat(p) for p in producers))
        live = Reader(f"{e2e.url}{path}", {"Authorization": f"Bearer {e2e.token()}"})
        await live.read_until(lambda seen: len(seen) >= 3 * per_producer)

    with e2e.client() as http:
        stream_order = [event["key"] for event in read_all(http, path)[0]]
    assert len(stream_order) == len(set(stream_order)) == 3 * per_producer
    for producer in producers:
        mine = [key for key in stream_order if key.startswith(f"msg:{producer.producer_id}-")]
        assert mine == [f"msg:{producer.producer_id}-{n}" for n in range(per_producer)]
    assert [event["key"] for event in live.messages] == stream_order
    wait_until(
        lambda: _synced_keys(e2e, f"sessions/{session}") == stream_order,
        what="session_events in stream order",
    )


async def test_sse_live_delivery(e2e: E2E) -> None:
    """A reader parked on SSE at the tail gets each message as it is appended, through Envoy."""
    session = unique("live")
    path = f"/ds/sessions/{session}"
    with e2e.client() as http:
        create(http, path)
        tail = http.head(path).headers["Stream-Next-Offset"]
    reader = Reader(f"{e2e.url}{path}", {"Authorization": f"Bearer {e2e.token()}"}, offset=tail)
    listening = asyncio.create_task(reader.read_until(lambda seen: len(seen) == 5, give_up_secs=60))
    async with e2e.async_client() as http:
        for n in range(5):
            body = json.dumps([message(f"msg:{n}", "user", f"live {n}")])
            response = await http.post(path, content=body, headers=JSON)
            assert response.status_code in (200, 204)
            # The next message goes only once this one has arrived: each is delivered live.
            async with asyncio.timeout(30):
                while len(reader.messages) <= n:
                    assert not listening.done(), listening
                    await asyncio.sleep(0.02)
    await listening
    assert [event["value"]["text"] for event in reader.messages] == [f"live {n}" for n in range(5)]


async def test_recovery_from_a_saved_offset(e2e: E2E) -> None:
    """A client that saved Stream-Next-Offset resumes there, by catch-up read or SSE: it gets
    exactly what was written since, nothing twice, nothing missed."""
    session = unique("resume")
    path = f"/ds/sessions/{session}"
    first = [message(f"msg:{n}", "user", str(n)) for n in range(6)]
    later = [message(f"msg:{n}", "user", str(n)) for n in range(6, 10)]
    with e2e.client() as http:
        create(http, path, *first)
        seen, saved = read_all(http, path)
        assert seen == first
        append(http, path, *later[:2])
        append(http, path, *later[2:])
        assert read_all(http, path, saved)[0] == later
        tail = read_all(http, path, saved)[1]
        assert read_all(http, path, tail) == ([], tail)
    reader = Reader(f"{e2e.url}{path}", {"Authorization": f"Bearer {e2e.token()}"}, offset=saved)
    await reader.read_until(lambda got: len(got) >= len(later))
    assert reader.messages == later


def test_producer_idempotency(e2e: E2E) -> None:
    """An idempotent producer's retry is answered 204 and stored once; a gap is 409 and a
    fenced epoch 403, neither stored; ds-sync copies exactly the stored messages."""
    session = unique("idem")
    path = f"/ds/sessions/{session}"

    def post(epoch: int, seq: int, text: str) -> httpx.Response:
        headers = {
            **JSON,
            "Producer-Id": "writer",
            "Producer-Epoch": str(epoch),
            "Producer-Seq": str(seq),
        }
        body = json.dumps([message(f"msg:{text}", "user", text)])
        return http.post(path, content=body, headers=headers)

    with e2e.client() as http:
        create(http, path)
        first = post(0, 0, "a")
        assert first.status_code == 200
        retry = post(0, 0, "a")
        assert retry.status_code == 204
        assert retry.headers["Stream-Next-Offset"] == first.headers["Stream-Next-Offset"]
        assert post(0, 1, "b").status_code == 200
        gap = post(0, 3, "c")
        assert gap.status_code == 409
        assert (gap.headers["Producer-Expected-Seq"], gap.headers["Producer-Received-Seq"]) == (
            "2",
            "3",
        )
        assert post(1, 0, "d").status_code == 200  # a restarted producer: new epoch
        fenced = post(0, 2, "e")
        assert fenced.status_code == 403
        assert fenced.headers["Producer-Epoch"] == "1"
        texts = [event["value"]["text"] for event in read_all(http, path)[0]]
    assert texts == ["a", "b", "d"]
    wait_until(
        lambda: _synced_keys(e2e, f"sessions/{session}") == ["msg:a", "msg:b", "msg:d"],
        what="exactly the stored messages in session_events",
    )
