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

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durable_sessions._following import Following
from durable_sessions.protocol.content_types import is_json
from durable_sessions.protocol.offsets import BEGINNING
from durable_sessions.protocol.urls import bootstrap_url_of
from durable_sessions.state.materialized import MaterializedState
from durable_sessions.state.messages import StateMessageError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import httpx

    from durable_sessions.events import Update
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
        super().__init__(
            url,
            offset=offset,
            token=token,
            client=client,
            headers=headers,
            live=live,
            bootstrap_from=bootstrap_from or bootstrap_url_of(url),
        )
        self.state = state if state is not None else MaterializedState()
        self._on_invalid = on_invalid

    def _start_offset(self) -> str | None:
        # Without a bootstrap surface the stream is read from its beginning.
        if self.offset is None and self._bootstrap_from is None:
            self.state.clear()
            return BEGINNING
        return self.offset

    def _advance(self, update: Update) -> StateBatch:
        messages = [self._decode(raw) for raw in update.messages]
        self._apply(messages)
        return StateBatch(
            messages=messages,
            offset=update.next_offset,
            up_to_date=update.up_to_date,
            closed=update.closed,
        )

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
