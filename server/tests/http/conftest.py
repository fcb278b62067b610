"""In-process apps and clients for the HTTP tests.

Settings are always built from explicit sections (``make_settings``), so no
``DS_*`` variable of the developer's environment changes what is tested.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from ds_server import create_app
from ds_server.app import asgi_app
from ds_server.settings import LimitsSection, ServerSection, Settings, StorageSection
from litestar.testing import TestClient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

BASE_URL = "http://testserver.local"


def make_settings(**sections: Any) -> Settings:
    """Settings from the given sections and every other section's defaults, never the env."""
    defaults = {
        name: field.get_default(call_default_factory=True)
        for name, field in Settings.model_fields.items()
    }
    return Settings(**{**defaults, **sections})


@pytest.fixture(scope="session")
def settings_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Settings]:
    """Test settings: short live timeouts, 1 KiB read chunks, the memory backend.

    Keyword arguments replace whole sections.
    """

    def factory(**sections: Any) -> Settings:
        values: dict[str, Any] = {
            "server": ServerSection(
                long_poll_timeout_secs=0.2, sse_reconnect_interval_secs=0.2, read_chunk_bytes=1024
            ),
            "limits": LimitsSection(max_stream_bytes=64 * 1024),
            "storage": StorageSection(mode="memory", data_dir=tmp_path_factory.mktemp("data")),
        }
        values.update(sections)
        return make_settings(**values)

    return factory


def start_client(settings: Settings) -> TestClient[Any]:
    """A running client against the served ASGI app (security headers included)."""
    app = asgi_app(create_app(settings))
    client: TestClient[Any] = TestClient(app, base_url=BASE_URL)  # type: ignore[arg-type]
    return client.__enter__()


@pytest.fixture
def make_client(
    settings_factory: Callable[..., Settings],
) -> Iterator[Callable[..., TestClient[Any]]]:
    """Start apps with the given settings sections; all are stopped after the test."""
    clients: list[TestClient[Any]] = []

    def factory(**sections: Any) -> TestClient[Any]:
        client = start_client(settings_factory(**sections))
        clients.append(client)
        return client

    yield factory
    for client in reversed(clients):
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., TestClient[Any]]) -> TestClient[Any]:
    """A client of an app with the default test settings."""
    return make_client()
