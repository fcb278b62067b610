"""What the live followers share: follow a stream from its bootstrap, turn what arrives
into batches, iterate them, close the connection, resume later from the offset reached."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Generic, Protocol, Self, TypeVar

from durable_sessions.events import Bootstrapped
from durable_sessions.follow import follow

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Mapping

    import httpx

    from durable_sessions.events import Update
    from durable_sessions.follow import LiveMode
    from durable_sessions.protocol.bootstrap import Bootstrap
    from durable_sessions.tokens import TokenSource


class Reached(Protocol):
    """Where a follower stands after a batch."""

    @property
    def offset(self) -> str: ...

    @property
    def up_to_date(self) -> bool: ...


Batch = TypeVar("Batch", bound=Reached)


class Following(Generic[Batch]):
    """``async for batch in follower`` runs `_batches`; ``async with`` (or `aclose`)
    closes its connection. Subclasses turn a bootstrap (`_rebuild`) and each live
    update (`_advance`) into a batch."""

    _iterator: AsyncGenerator[Batch] | None = None

    def __init__(
        self,
        url: str,
        *,
        offset: str | None,
        token: TokenSource | None,
        client: httpx.AsyncClient | None,
        headers: Mapping[str, str] | None,
        live: LiveMode,
        bootstrap_from: str | None,
    ) -> None:
        self.url = url
        self.offset = offset
        self.up_to_date = False
        self._token = token
        self._client = client
        self._headers = headers
        self._live: LiveMode = live
        self._bootstrap_from = bootstrap_from

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Batch:
        if self._iterator is None:
            self._iterator = self._batches()
        return await anext(self._iterator)

    async def aclose(self) -> None:
        """Stop following: the connection is closed. Call it when leaving a loop early
        (or use ``async with``); a later iteration starts again from the follower's offset."""
        iterator, self._iterator = self._iterator, None
        if iterator is not None:
            await iterator.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _batches(self) -> AsyncGenerator[Batch]:
        follows = follow(
            self.url,
            offset=self._start_offset(),
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
                    batch = self._advance(event)
                self.offset, self.up_to_date = batch.offset, batch.up_to_date
                self._reached(batch)
                yield batch

    def _start_offset(self) -> str | None:
        """Where to follow from: the offset reached (None: from the bootstrap)."""
        return self.offset

    def _rebuild(self, bootstrap: Bootstrap) -> Batch:
        raise NotImplementedError

    def _advance(self, update: Update) -> Batch:
        raise NotImplementedError

    def _reached(self, batch: Batch) -> None:
        """After each batch, once the follower's offset is the batch's."""
