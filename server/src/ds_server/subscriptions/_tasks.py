"""Ownership of background tasks, so shutdown can cancel every one of them."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Coroutine

log = logging.getLogger("ds_server.subscriptions")


class TaskOwner:
    """Starts tasks, keeps them referenced until done, logs their failures."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Run ``work`` in the background on the current loop."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def close(self) -> None:
        """Cancel everything still running and wait for it to unwind."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def cancel_unless_current(task: asyncio.Task[None] | None) -> None:
    """Cancel ``task``, unless it is the caller itself (a timer ending its own wake)."""
    if task is not None and task is not asyncio.current_task():
        task.cancel()
