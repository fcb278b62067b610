"""``StateFollower``: a State Protocol stream materialised live, resumable from an offset.

It starts from the stream's bootstrap (snapshot + retained messages) when
the server serves one, else from the beginning; then it tails the
stream (SSE with reconnects, long-poll fallback) and applies each batch to
its `MaterializedState` before yielding it. A read answered 410 (the
stream's history was released: a snapshot or a compaction moved its
retention) makes it rebuild the state from a fresh bootstrap.

The snapshot part of a bootstrap, when there is one, is JSON: an array of
State Protocol messages, or a session snapshot (``{"format":
"ds-session-state/1", "state": {type: {key: value}}}``, sessions.md §6).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durable_sessions._following import Following
from durable_sessions.events import Bootstrapped
from durable_sessions.follow import follow
from durable_sessions.protocol.content_types import is_json
from durable_sessions.protocol.offsets import BEGINNING
from durable_sessions.protocol.urls import bootstrap_url_of
from durable_sessions.state.materialized import MaterializedState
from durable_sessions.state.messages import StateMessageError

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable, Mapping

    import httpx

    from durable_sessions.follow import LiveMode
    from durable_sessions.protocol.bootstrap import Bootstrap
    from durable_sessions.state.messages import Message
    from durable_sessions.tokens import TokenSource

SESSION_SNAPSHOT_FORMAT = "ds-session-state/1"


@dataclass(frozen=True, slots=True)
class StateBatch:
    """Messages just applied, and where the follower stands after them.

    ``rebuilt``: the state was rebuilt from a bootstrap (the first batch, or
    after a 410) rather than changed by these messages alone. Persist
    ``offset`` with a copy of the state to resume from it later.
    """

    messages: list[Message]
    offset: str
    up_to_date: bool
    rebuilt: bool = False
    closed: bool = False


class StateFollower(Following[StateBatch]):
    """Follow the State Protocol stream at ``url`` into `state`.

    ``async for batch in follower`` applies each batch, then yields it;
    ``async with`` (or :meth:`aclose`) closes the connection when done.
    Resume with ``StateFollower(url, state=saved_state, offset=saved_offset)``.
    ``bootstrap_from`` overrides where the bootstrap is fetched
    (`durable_sessions.protocol.bootstrap_url_of` by default; a
    stream with none starts from the beginning). ``on_invalid`` sees each
    message that is not State Protocol (skipped); without it such a message
    raises `StateMessageError`.
    """

    def __init__(
        self,
        url: str,
        *,
        state: MaterializedState | None = None,
        offset: str | None = None,
        token: TokenSource | None = None,
        client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        live: LiveMode = "auto",
        bootstrap_from: str | None = None,
        on_invalid: Callable[[Any, StateMessageError], None] | None = None,
    ) -> None:
        self.url = url
        self.state = state if state is not None else MaterializedState()
        self.offset = offset
        self.up_to_date = False
        self._token = token
        self._client = client
        self._headers = headers
        self._live: LiveMode = live
        self._bootstrap_from = bootstrap_from or bootstrap_url_of(url)
        self._on_invalid = on_invalid

    async def _batches(self) -> AsyncGenerator[StateBatch]:
        # Without a bootstrap surface the stream is read from its beginning.
        start = self.offset
        if start is None and self._bootstrap_from is None:
            start = BEGINNING
            self.state.clear()
        follows = follow(
            self.url,
            offset=start,
            live=self._live,
            client=self._client,
            token=self._token,
            headers=self._headers,
            bootstrap_from=self._bootstrap_from,
            # A server that does not serve this stream's bootstrap: from the start.
            without_bootstrap="read-from-start",
        )
        async with contextlib.aclosing(follows) as events:
            async for event in events:
                if isinstance(event, Bootstrapped):
                    batch = self._rebuild(event.bootstrap)
                else:
                    messages = [self._decode(raw) for raw in event.messages]
                    self._apply(messages)
                    batch = StateBatch(
                        messages=messages,
                        offset=event.next_offset,
                        up_to_date=event.up_to_date,
                        closed=event.closed,
                    )
                self.offset, self.up_to_date = batch.offset, batch.up_to_date
                yield batch

    def _rebuild(self, bootstrap: Bootstrap) -> StateBatch:
        self.state.clear()
        if bootstrap.snapshot is not None:
            self._load_snapshot(bootstrap.snapshot, bootstrap.snapshot_content_type)
        messages = [self._decode(body) for _, body in bootstrap.messages]
        self._apply(messages)
        return StateBatch(
            messages=messages,
            offset=bootstrap.next_offset,
            up_to_date=bootstrap.up_to_date,
            rebuilt=True,
        )

    def _load_snapshot(self, body: bytes, content_type: str | None) -> None:
        if not is_json(content_type):
            raise StateMessageError(f"a snapshot of type {content_type}, not JSON")
        document = json.loads(body)
        if isinstance(document, list):
            self._apply(document)
        elif isinstance(document, dict) and document.get("format") == SESSION_SNAPSHOT_FORMAT:
            self.state.load(document.get("state") or {})
        else:
            raise StateMessageError("a snapshot is a list of messages or a session snapshot")

    def _apply(self, messages: list[Any]) -> None:
        for message in messages:
            try:
                self.state.apply(message)
            except StateMessageError as exc:
                if self._on_invalid is None:
                    raise
                self._on_invalid(message, exc)

    @staticmethod
    def _decode(raw: bytes) -> Any:
        return json.loads(raw)
