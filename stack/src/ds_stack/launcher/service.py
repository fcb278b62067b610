"""What runs between ``start()`` and ``stop()``, and serves as a context manager for it.

One shape for every child the launcher and the stacks run (a process, Postgres,
a cluster, the benchmarks' servers): ``with thing:`` starts it and stops it again
however the block ends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType


class Service(ABC):
    """Started by ``start()``, stopped by ``stop()``; ``with`` does both."""

    @abstractmethod
    def start(self) -> None:
        """Bring it up; return once it is ready."""

    @abstractmethod
    def stop(self) -> object:
        """Bring it down; safe to call when it is not running."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
