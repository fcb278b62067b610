"""How a bootstrap begins: the snapshot and the first page, as one consistent view, held.

A snapshot published while a bootstrap takes hold of its starting point
makes that start stale (its data may be freed, its blob replaced), so the
opening takes the hold first, checks again, and starts over a few times
if it lost the race. Written against ``BootstrapSource`` (what ``LogStore``
offers), so a test can run it against a store that races on purpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ds_server.stores.base import BootstrapStart
from ds_server.stores.errors import OffsetGone, SnapshotNotFound

if TYPE_CHECKING:
    from ds_server.stores.base import ReadResult, Retention, SnapshotInfo, StreamInfo

EMPTY_SNAPSHOT_TYPE = "application/octet-stream"
OPEN_ATTEMPTS = 3


class BootstrapSource(Protocol):
    """The store operations a bootstrap's opening uses."""

    async def head(self, path: str) -> StreamInfo: ...

    async def retain(self, path: str, start: int) -> Retention: ...

    async def release(self, retention: Retention) -> None: ...

    async def read_snapshot(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]: ...

    async def read_messages(
        self, path: str, start: int, max_bytes: int, *, retention: Retention | None = None
    ) -> ReadResult: ...


async def open_bootstrap(source: BootstrapSource, path: str, max_bytes: int) -> BootstrapStart:
    """The snapshot (or an empty first part) and the first page after it, with their hold."""
    attempt = 1
    while True:
        info = await source.head(path)
        snapshot = info.snapshot
        start = snapshot.offset if snapshot is not None else info.earliest_offset
        retention = await source.retain(path, start)
        try:
            # A snapshot published before the hold began may have freed data from
            # ``start`` on (and its blob replaced ours): start over from the new one.
            if (await source.head(path)).earliest_offset > start:
                raise OffsetGone("a snapshot moved the earliest offset meanwhile")
            if snapshot is not None:
                _, blob = await source.read_snapshot(path, snapshot.offset)
                first_type = snapshot.content_type
            else:
                blob, first_type = b"", EMPTY_SNAPSHOT_TYPE
            first_page = None
            if start < info.tail:
                first_page = await source.read_messages(path, start, max_bytes, retention=retention)
        except (SnapshotNotFound, OffsetGone) as lost:
            await source.release(retention)
            if attempt == OPEN_ATTEMPTS:
                # Named: compiled, a bare raise after an await may re-raise another.
                raise lost
            attempt += 1
            continue
        except BaseException as failed:
            await source.release(retention)
            raise failed
        return BootstrapStart(info, blob, first_type, start, first_page, retention)
