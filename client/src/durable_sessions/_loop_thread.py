"""An event loop on a thread of its own, for synchronous wrappers of async classes."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

T = TypeVar("T")


class LoopThread:
    """Runs coroutines on a private event loop in a daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def call(self, function: Callable[[], T]) -> T:
        """Call ``function`` on the loop's thread and wait for its result."""

        async def run() -> T:
            return function()

        return self.run(run())

    def stop(self) -> None:
        """Stop the loop and its thread (idempotent)."""
        if self.loop.is_closed():
            return
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
        self.loop.close()
