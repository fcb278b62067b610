"""ds-server exactly as ``ds-server`` runs it, plus a recorder of what reaches it.

Tests run this file as a script. The outermost ASGI layer appends each request's
method, path, query and headers, as the server received them from Envoy, to
the JSON-lines file ``$DS_TEST_RECORD_FILE``; everything inside it is the
unmodified application (gateway authorization included). With
``$DS_TEST_TOUCH_FILE`` set, every stream and bucket the store is asked
about is appended there too (``authorization_model.SpyStore``).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import uvicorn
from ds_server.app import asgi_app, create_app
from ds_server.cli import uvicorn_config
from ds_server.live import LiveNotifier
from ds_server.settings import Settings
from ds_server.stores.registry import open_store

if TYPE_CHECKING:
    from ds_server.stores.base import Store
    from litestar.types import ASGIApp, Receive, Scope, Send


def _append(path: str, line: str) -> None:
    # A blocking write on the event loop: a few hundred bytes, tests only.
    with open(path, "a", encoding="utf-8") as record:
        record.write(line + "\n")


def recording(app: ASGIApp, path: str) -> ASGIApp:
    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            entry = {
                "method": scope["method"],
                "path": scope["path"],
                "query": scope["query_string"].decode("latin-1"),
                "headers": [
                    [k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]
                ],
            }
            _append(path, json.dumps(entry))
        await app(scope, receive, send)

    return middleware


def spied_store(settings: Settings, path: str) -> Store:
    """The configured store, its every touch appended to ``path`` (authorization tests)."""
    from authorization_model import SpyStore, Touch  # beside this file

    def record(touch: Touch) -> None:
        _append(path, json.dumps([touch.bucket, touch.mode, touch.what]))

    return SpyStore(open_store(settings, LiveNotifier()), record)


def main() -> None:
    settings = Settings()
    touch_file = os.environ.get("DS_TEST_TOUCH_FILE")
    store = spied_store(settings, touch_file) if touch_file else None
    app = recording(
        asgi_app(create_app(settings, store=store)),
        os.environ["DS_TEST_RECORD_FILE"],
    )  # type: ignore[arg-type]
    config = uvicorn_config(app, settings, settings.server.host, settings.server.port, "warning")
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
