"""Subscriptions in a SQLite file: the store of the ``sqlite`` and ``file-*`` backends.

One thread owns the connection and runs the calls in the order they were
made, so the event loop never waits on the disk. WAL with
``synchronous=FULL``: a call returns once its transaction is on disk.
Subscription writes (creates, acks, wake generations) are few beside
appends, so each commits on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from ds_server.subscriptions.storage import _sqlite_schema
from ds_server.subscriptions.storage.base import (
    StoredLink,
    StoredSubscription,
    SubscriptionStorage,
    SubscriptionStorageError,
)
from ds_server.subscriptions.storage.codec import decode_spec, encode_spec

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path
    from typing import Self

    from ds_server.settings import Settings

T = TypeVar("T")

# Under the data directory, beside the stream backends' own directories.
DB_FILE = "subscriptions/subscriptions.db"


class SqliteSubscriptionStorage(SubscriptionStorage):
    """Subscriptions in ``{data_dir}/subscriptions/subscriptions.db``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._thread: ThreadPoolExecutor | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.storage.data_dir / DB_FILE)

    async def open(self) -> None:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ds-subscriptions")
        self._conn = await self._call(lambda: _sqlite_schema.connect(self.path))

    async def close(self) -> None:
        if self._thread is None:
            return
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._call(conn.close)
        self._thread.shutdown(wait=True)
        self._thread = None

    async def load_all(self) -> list[StoredSubscription]:
        return await self._run(_load_all)

    async def create(self, sub: StoredSubscription) -> None:
        def work(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                conn.execute("DELETE FROM subscriptions WHERE id = ?", (sub.spec.id,))
                conn.execute(
                    "INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?)",
                    (
                        sub.spec.id,
                        encode_spec(sub.spec),
                        sub.root_url,
                        sub.created_at,
                        sub.generation,
                    ),
                )
                _upsert_links(conn, sub.spec.id, sub.links)

        await self._run(work)

    async def save(
        self, sub_id: str, generation: int, links: Mapping[str, StoredLink | None]
    ) -> None:
        def work(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                updated = conn.execute(
                    "UPDATE subscriptions SET generation = max(generation, ?) WHERE id = ?",
                    (generation, sub_id),
                )
                if updated.rowcount == 0:
                    return  # deleted meanwhile
                gone = [(sub_id, path) for path, link in links.items() if link is None]
                conn.executemany(
                    "DELETE FROM subscription_links WHERE subscription_id = ? AND path = ?", gone
                )
                kept = {path: link for path, link in links.items() if link is not None}
                _upsert_links(conn, sub_id, kept)

        await self._run(work)

    async def delete(self, sub_id: str) -> None:
        def work(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                conn.execute("DELETE FROM subscriptions WHERE id = ?", (sub_id,))

        await self._run(work)

    async def get_secret(self, name: str) -> bytes | None:
        def work(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute(
                "SELECT value FROM subscription_secrets WHERE name = ?", (name,)
            ).fetchone()
            return None if row is None else bytes(row[0])

        return await self._run(work)

    async def keep_secret(self, name: str, candidate: bytes) -> bytes:
        def work(conn: sqlite3.Connection) -> bytes:
            with _transaction(conn):
                conn.execute(
                    "INSERT OR IGNORE INTO subscription_secrets VALUES (?, ?)", (name, candidate)
                )
                row = conn.execute(
                    "SELECT value FROM subscription_secrets WHERE name = ?", (name,)
                ).fetchone()
            return bytes(row[0])

        return await self._run(work)

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` with the connection on the storage thread."""
        conn = self._conn
        if conn is None:
            raise SubscriptionStorageError("subscription storage is not open")
        return await self._call(lambda: work(conn))

    async def _call(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the storage thread; SQLite errors become SubscriptionStorageError."""
        if self._thread is None:
            raise SubscriptionStorageError("subscription storage is not open")

        def call() -> T:
            try:
                return work()
            except sqlite3.Error as exc:
                raise SubscriptionStorageError(f"{self.path}: {exc}") from exc

        return await asyncio.get_running_loop().run_in_executor(self._thread, call)


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _upsert_links(conn: sqlite3.Connection, sub_id: str, links: Mapping[str, StoredLink]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO subscription_links VALUES (?, ?, ?, ?, ?)",
        [
            (sub_id, path, int(link.explicit), int(link.glob), link.acked)
            for path, link in links.items()
        ],
    )


def _load_all(conn: sqlite3.Connection) -> list[StoredSubscription]:
    links: dict[str, dict[str, StoredLink]] = {}
    for sub_id, path, explicit, glob, acked in conn.execute(
        "SELECT subscription_id, path, explicit, glob, acked FROM subscription_links"
    ):
        links.setdefault(sub_id, {})[path] = StoredLink(bool(explicit), bool(glob), acked)
    return [
        StoredSubscription(
            spec=decode_spec(spec),
            root_url=root_url,
            created_at=created_at,
            generation=generation,
            links=links.get(sub_id, {}),
        )
        for sub_id, spec, root_url, created_at, generation in conn.execute(
            "SELECT id, spec, root_url, created_at, generation FROM subscriptions ORDER BY id"
        )
    ]
