"""``SessionFollower``: a session read live as typed events, folded into a `SessionState`.

It starts from the session's bootstrap (its latest snapshot and every
message after it) unless given an offset to resume from, then tails it
(SSE with reconnects, long-poll fallback; `durable_sessions.follow`).
Each batch is folded into `SessionFollower.state`, then yielded with
its typed events. A read answered 410 (a snapshot moved the session's
start past the reader) rebuilds the state from a fresh bootstrap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durable_sessions._following import Following
from durable_sessions.protocol.bootstrap import NO_SNAPSHOT
from durable_sessions.protocol.content_types import is_json
from durable_sessions.protocol.offsets import START
from durable_sessions.protocol.urls import bootstrap_url_of
from durable_sessions.sessions.events import SessionEvent, parse_event
from durable_sessions.sessions.fold import SnapshotFormatError
from durable_sessions.sessions.offsets import message_offsets
from durable_sessions.sessions.state import SessionState

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from durable_sessions.events import Update
    from durable_sessions.follow import LiveMode
    from durable_sessions.protocol.bootstrap import Bootstrap
    from durable_sessions.tokens import TokenSource


@dataclass(frozen=True, slots=True)
class SessionBatch:
    """Events just folded into the follower's state, and where it stands after them.

    ``rebuilt``: the state was rebuilt from a bootstrap (the first batch, or
    after a 410); ``events`` are then the messages after its snapshot.
    Persist ``offset`` (with `SessionState.to_dict` if you like) to resume.
    """

    events: list[SessionEvent]
    offset: str
    up_to_date: bool
    rebuilt: bool = False
    closed: bool = False


class SessionFollower(Following[SessionBatch]):
    """Follow the session at ``url`` (``/ds/{bucket}/{session}``) into `state`.

    ``async for batch in follower`` yields each `SessionBatch` once it is
    folded in; ``async with`` (or :meth:`aclose`) closes the connection.
    ``offset`` resumes after a checkpoint instead of bootstrapping (give the
    ``state`` folded up to it, or only new events are folded). ``live`` is
    as in `durable_sessions.follow`. Iteration ends when the session is
    closed.
    """

    def __init__(
        self,
        url: str,
        *,
        offset: str | None = None,
        state: SessionState | None = None,
        token: TokenSource | None = None,
        client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        live: LiveMode = "auto",
    ) -> None:
        super().__init__(
            url,
            offset=offset,
            token=token,
            client=client,
            headers=headers,
            live=live,
            bootstrap_from=bootstrap_url_of(url),
        )
        self.state = state if state is not None else SessionState()

    def _advance(self, update: Update) -> SessionBatch:
        return SessionBatch(
            events=self._fold(self.offset, update.messages, update.next_offset),
            offset=update.next_offset,
            up_to_date=update.up_to_date,
            closed=update.closed,
        )

    def _reached(self, batch: SessionBatch) -> None:
        self.state.offset = batch.offset

    def _rebuild(self, bootstrap: Bootstrap) -> SessionBatch:
        self.state.clear()
        start = START
        if bootstrap.snapshot is not None:
            if not is_json(bootstrap.snapshot_content_type):
                raise SnapshotFormatError(
                    f"a session snapshot is JSON, not {bootstrap.snapshot_content_type}"
                )
            self.state.load_snapshot(json.loads(bootstrap.snapshot))
            start = bootstrap.snapshot_offset
        elif bootstrap.snapshot_offset != NO_SNAPSHOT:
            start = bootstrap.snapshot_offset
        raws = [body for _, body in bootstrap.messages]
        events = self._fold(start, raws, bootstrap.next_offset)
        return SessionBatch(
            events=events,
            offset=bootstrap.next_offset,
            up_to_date=bootstrap.up_to_date,
            rebuilt=True,
        )

    def _fold(self, start: str | None, raws: list[bytes], end: str) -> list[SessionEvent]:
        events = []
        for raw, (offset, after) in zip(raws, message_offsets(start, raws, end), strict=True):
            event = parse_event(_decode(raw), offset=offset, next_offset=after)
            self.state.apply_event(event)
            events.append(event)
        return events


def _decode(raw: bytes) -> Any:
    return json.loads(raw)


async def load_session(
    url: str,
    *,
    token: TokenSource | None = None,
    client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
) -> SessionState:
    """The session's state now: its bootstrap and whatever came after, up to its tail."""
    async with SessionFollower(url, token=token, client=client, headers=headers) as follower:
        async for batch in follower:
            if batch.up_to_date or batch.closed:
                break
    return follower.state
