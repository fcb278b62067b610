"""/bootstrap when a snapshot is published while it takes hold of the stream's opening state."""

from __future__ import annotations

import email.parser
import email.policy
from typing import TYPE_CHECKING, Any

import pytest
from ds_server import create_app
from ds_server.app import asgi_app
from ds_server.live import LiveNotifier
from ds_server.stores.memory import MemoryStore
from litestar.testing import TestClient

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.settings import Settings
    from ds_server.stores.base import Retention, SnapshotInfo


class RacingStore(MemoryStore):
    """Publishes a newer snapshot at one chosen step of the next bootstrap's opening."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(
            LiveNotifier(),
            max_stream_bytes=settings.limits.max_stream_bytes,
            max_memory_bytes=settings.limits.max_memory_bytes,
        )
        self.race: tuple[str, str, int, bytes] | None = None

    async def _maybe_race(self, step: str) -> None:
        if self.race is not None and self.race[0] == step:
            _, path, offset, blob = self.race
            self.race = None
            await self.publish_snapshot(path, offset, "text/plain", blob)

    async def retain(self, path: str, start: int) -> Retention:
        await self._maybe_race("retain")
        return await super().retain(path, start)

    async def read_snapshot(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]:
        await self._maybe_race("read_snapshot")
        return await super().read_snapshot(path, offset)


def _parts(response: Any) -> list[bytes]:
    raw = b"Content-Type: " + response.headers["content-type"].encode() + b"\r\n\r\n"
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw + response.content)
    assert not message.defects
    return [part.get_payload(decode=True) for part in message.iter_parts()]


@pytest.mark.parametrize(
    ("step", "had_snapshot"),
    [("retain", False), ("retain", True), ("read_snapshot", True)],
)
def test_a_snapshot_published_while_a_bootstrap_opens_is_the_one_served(
    settings_factory: Callable[..., Settings], step: str, had_snapshot: bool
) -> None:
    settings = settings_factory()
    store = RacingStore(settings)
    app = asgi_app(create_app(settings, store))
    with TestClient(app, base_url="http://testserver.local") as client:  # type: ignore[arg-type]
        assert client.put("/ds/race").status_code == 201
        stream = "/ds/race/s"
        assert client.put(stream, headers={"Content-Type": "text/plain"}).status_code == 201
        for text in (b"a", b"b", b"c"):
            client.post(stream, content=text, headers={"Content-Type": "text/plain"})
        if had_snapshot:
            assert client.put(f"{stream}/snapshot/{1:020d}", content=b"old").status_code == 204
        store.race = (step, "race/s", 2, b"new")
        response = client.get(f"{stream}/bootstrap")
        assert response.status_code == 200
        assert response.headers["stream-snapshot-offset"] == f"{2:020d}"
        assert _parts(response) == [b"new", b"c"]
        # Every hold the bootstrap took is released again.
        assert not store._retentions
