"""In-process apps and clients for the HTTP tests.

Settings are always built from explicit sections (``make_settings``), so no
``DS_*`` variable of the developer's environment changes what is tested.

Building an app is the slow part of a test, so tests share one app per
module through ``api``, each under its own stream namespace; a test that
needs other settings starts its own app with ``make_api``.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ds_server import create_app
from ds_server.app import asgi_app
from ds_server.settings import LimitsSection, ServerSection, Settings, StorageSection
from litestar.testing import TestClient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import httpx

# The request fuzzer's tables (server/tests/support) feed the malformed-request test.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BASE_URL = "http://testserver.local"
PREFIX = "/v1/stream"


def make_settings(**sections: Any) -> Settings:
    """Settings from the given sections and every other section's defaults, never the env."""
    defaults = {
        name: field.get_default(call_default_factory=True)
        for name, field in Settings.model_fields.items()
    }
    # In-process HTTP tests are about the protocol, not storage.
    defaults["storage"] = StorageSection(mode="memory")
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
            "limits": LimitsSection(max_retained_bytes=64 * 1024),
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


_namespaces = itertools.count()


class Api:
    """Requests to the streams of one test's namespace (``/v1/stream/<ns>/...``).

    Keyword headers use ``_`` for ``-``: ``Content_Type="text/plain"``.
    """

    def __init__(self, client: TestClient[Any]) -> None:
        self.client = client
        self.ns = f"t{next(_namespaces)}"

    def name(self, path: str) -> str:
        """The stream name of ``path`` in this namespace (for Stream-Forked-From)."""
        return f"{self.ns}/{path}"

    def url(self, path: str, query: str = "") -> str:
        """The request path (and query) of stream ``path``."""
        return f"{PREFIX}/{self.name(path)}" + (f"?{query}" if query else "")

    def request(
        self, method: str, path: str, body: bytes = b"", query: str = "", **headers: str
    ) -> httpx.Response:
        sent = {name.replace("_", "-"): value for name, value in headers.items()}
        return self.client.request(method, self.url(path, query), content=body, headers=sent)

    def put(self, path: str, body: bytes = b"", **headers: str) -> httpx.Response:
        return self.request("PUT", path, body, **headers)

    def post(self, path: str, body: bytes = b"", **headers: str) -> httpx.Response:
        return self.request("POST", path, body, **headers)

    def get(self, path: str, query: str = "", **headers: str) -> httpx.Response:
        return self.request("GET", path, query=query, **headers)

    def head(self, path: str, **headers: str) -> httpx.Response:
        return self.request("HEAD", path, **headers)

    def delete(self, path: str) -> httpx.Response:
        return self.request("DELETE", path)

    def body(self, path: str) -> bytes:
        """The whole stream (one catch-up read; test streams are small)."""
        response = self.get(path)
        assert response.status_code == 200, response.text
        assert response.headers.get("stream-up-to-date") == "true"
        return response.content


@pytest.fixture(scope="module")
def shared_client(settings_factory: Callable[..., Settings]) -> Iterator[TestClient[Any]]:
    """One app with the default test settings, for every test of a module."""
    client = start_client(settings_factory())
    yield client
    client.__exit__(None, None, None)


@pytest.fixture
def api(shared_client: TestClient[Any]) -> Api:
    """This test's own namespace on the module's shared app."""
    return Api(shared_client)


@pytest.fixture
def make_api(settings_factory: Callable[..., Settings]) -> Iterator[Callable[..., Api]]:
    """Start a dedicated app with the given settings sections; stopped after the test."""
    clients: list[TestClient[Any]] = []

    def factory(**sections: Any) -> Api:
        client = start_client(settings_factory(**sections))
        clients.append(client)
        return Api(client)

    yield factory
    for client in reversed(clients):
        client.__exit__(None, None, None)
