"""What the live followers share: iterate batches, close the connection, resume later."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Self, TypeVar

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

Batch = TypeVar("Batch")


class Following(Generic[Batch]):
    """``async for batch in follower`` runs `_batches`; ``async with`` (or `aclose`)
    closes its connection. Subclasses implement `_batches`."""

    _iterator: AsyncGenerator[Batch] | None = None

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

    def _batches(self) -> AsyncGenerator[Batch]:
        raise NotImplementedError
