"""The two wake-ups of each connection, lighter than ``asyncio.Event``.

uvicorn gives every connection an ``asyncio.Event`` for flow control and
every request one for its body, and each ``asyncio.Event`` carries a
deque for its waiters: ~0.7 KiB each, there for the whole life of every
connection. One waiter at a time is all either ever has (the request's
own task), so :class:`Signal` keeps a list only when a second one comes.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from uvicorn.protocols.http.flow_control import FlowControl


class Signal:
    """``asyncio.Event``'s ``set``, ``clear``, ``is_set`` and ``wait``."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if self._set:
            return
        self._set = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> Literal[True]:
        if self._set:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = [waiter]
        else:
            self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)
        return True


class LeanFlowControl(FlowControl):
    """uvicorn's flow control, waking writers with a :class:`Signal`."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self.read_paused = False
        self.write_paused = False
        self._is_writable_event = Signal()  # type: ignore[assignment]
        self._is_writable_event.set()
