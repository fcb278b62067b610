"""``ds_server.http_protocol`` against the uvicorn it was written for.

The lean protocol subclasses uvicorn's private httptools protocol, request
cycle and flow control, overriding most of their methods and reading their
attributes. ``server/pyproject.toml`` pins uvicorn to the minor version it
was written against; these tests fail loudly, naming what changed, as soon
as an installed uvicorn differs in any of those internals, even within
the pin. Then read the new uvicorn code, port what changed to
``http_protocol.py`` (``test_http_protocol.py`` compares the two byte for
byte), and record the new fingerprints here.

The lean protocol serves the requests of one connection in one task, where
uvicorn gives each request a task, and so a copy of the context variables,
of its own. ``test_serving_sets_no_context_variable`` shows the difference
cannot be seen: serving a request sets no context variable at all.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import inspect
from typing import TYPE_CHECKING, Any

import httpx
import uvicorn
from ds_server import create_app
from ds_server.app import asgi_app
from uvicorn.protocols.http import flow_control, httptools_impl

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.settings import Settings

PINNED_MINOR = "0.54"

# sha256 (first 16 hex digits) of the source of every method of the classes
# the lean protocol derives from, as in uvicorn 0.54.0.
FINGERPRINTS: dict[str, dict[str, str]] = {
    "HttpToolsProtocol": {
        "__init__": "4f08999410347141",
        "connection_made": "6efb565ff3d36b91",
        "connection_lost": "c91a4c9bf2e29c55",
        "eof_received": "5652627579a02369",
        "_unset_keepalive_if_required": "00a6a4e47214e68e",
        "_get_upgrade": "7b1305aac7b87064",
        "_should_upgrade_to_ws": "d580849b4df878c3",
        "_unsupported_upgrade_warning": "55bbd2762b189d9a",
        "_should_upgrade": "8fcad1ab8e096739",
        "data_received": "010a7ae59a5d3b1a",
        "handle_websocket_upgrade": "179c4f769386ab89",
        "send_400_response": "ae5a4a3782b646fd",
        "on_message_begin": "96d377fdc7c2baef",
        "on_url": "37be44e962b04ca8",
        "on_header": "65d62c044f61fdbd",
        "on_headers_complete": "1ea8589acfad92d8",
        "_start_asgi_task": "9c08c2571ae9b038",
        "on_body": "dba9c32aeba35b6a",
        "on_message_complete": "1fbad42dc31fc01f",
        "on_response_complete": "64e254f28e389e76",
        "shutdown": "d7351fa33f00d430",
        "pause_writing": "17a8fd215d96a13c",
        "resume_writing": "7844bbaa8cceb1ef",
        "timeout_keep_alive_handler": "8b53bf5f2e202970",
    },
    "RequestResponseCycle": {
        "__init__": "4d2f220910c33c12",
        "run_asgi": "0f33f2449a444bc2",
        "send_500_response": "37c64da40eedaeaf",
        "send": "abdd8601b326a8da",
        "receive": "8124ae006be71184",
    },
    "FlowControl": {
        "__init__": "0152d94a040758b5",
        "drain": "4bda6b61c277ae87",
        "pause_reading": "7c27388bb984e9ed",
        "resume_reading": "a0429d30857e8488",
        "pause_writing": "93d4a08a9f2da9d6",
        "resume_writing": "a343e8b0baf08901",
    },
}
_CLASSES = {
    "HttpToolsProtocol": httptools_impl.HttpToolsProtocol,
    "RequestResponseCycle": httptools_impl.RequestResponseCycle,
    "FlowControl": flow_control.FlowControl,
}


def _fingerprint(member: object) -> str:
    return hashlib.sha256(inspect.getsource(member).encode()).hexdigest()[:16]  # type: ignore[arg-type]


def test_uvicorn_is_the_pinned_minor_version() -> None:
    assert uvicorn.__version__.rsplit(".", 1)[0] == PINNED_MINOR, (
        f"uvicorn {uvicorn.__version__} is installed; ds_server.http_protocol was written "
        f"against {PINNED_MINOR}"
    )


def test_the_overridden_classes_are_unchanged() -> None:
    changed = []
    for class_name, expected in FINGERPRINTS.items():
        methods = {
            name: _fingerprint(member)
            for name, member in vars(_CLASSES[class_name]).items()
            if inspect.isfunction(member)
        }
        changed += [
            f"{class_name}.{name}: {'gone' if name not in methods else 'changed'}"
            for name, fingerprint in expected.items()
            if methods.get(name) != fingerprint
        ]
        changed += [f"{class_name}.{name}: new" for name in methods.keys() - expected.keys()]
    assert not changed, "uvicorn internals that http_protocol.py overrides differ:\n" + "\n".join(
        changed
    )


def test_the_module_values_used_are_unchanged() -> None:
    assert httptools_impl.HEADER_RE.pattern == b'[\x00-\x1f\x7f()<>@,;:\\[\\]={} \t\\\\"]'
    assert httptools_impl.HEADER_VALUE_RE.pattern == b"[\x00-\x08\n-\x1f\x7f]"
    assert httptools_impl.STATUS_LINE[204] == b"HTTP/1.1 204 No Content\r\n"
    assert flow_control.HIGH_WATER_LIMIT == 65536
    assert _fingerprint(flow_control.service_unavailable) == "f54bba3c14aa91d5"


# Each kind of request ds-server serves, errors included.
_REQUESTS: list[tuple[str, str, dict[str, str], bytes]] = [
    ("PUT", "/v1/stream/ctx/a", {"content-type": "text/plain"}, b"one"),
    ("POST", "/v1/stream/ctx/a", {"content-type": "text/plain"}, b"two"),
    ("GET", "/v1/stream/ctx/a?offset=-1", {}, b""),
    ("GET", "/v1/stream/ctx/a?offset=now&live=long-poll", {}, b""),
    ("GET", "/v1/stream/ctx/a?offset=-1&live=sse", {}, b""),
    ("HEAD", "/v1/stream/ctx/a", {}, b""),
    ("GET", "/v1/stream/ctx/missing", {}, b""),
    ("POST", "/v1/stream/ctx/a", {}, b"no content type"),
    ("PATCH", "/v1/stream/ctx/a", {}, b""),
    (
        "OPTIONS",
        "/v1/stream/ctx/a",
        {"origin": "http://x", "access-control-request-method": "PUT"},
        b"",
    ),
    ("PUT", "/ds/ctx-bucket", {}, b""),
    ("PUT", "/ds/ctx-bucket/s", {"content-type": "application/json"}, b"[1,2]"),
    ("PUT", "/ds/ctx-bucket/s/snapshot/00000000000000000001", {}, b"{}"),
    ("GET", "/ds/ctx-bucket/s/bootstrap", {}, b""),
    ("GET", "/ds/ctx-bucket/streams", {}, b""),
    ("GET", "/v1/stream/__ds/jwks.json", {}, b""),
    ("GET", "/v1/stream/__ds/subscriptions/nope", {}, b""),
    ("DELETE", "/v1/stream/ctx/a", {}, b""),
    ("GET", "/healthz", {}, b""),
]


class _Lifespan:
    """Drives the app's lifespan as a server does: startup now, shutdown at ``stop``."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._messages: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self._sent: asyncio.Queue[str] = asyncio.Queue()
        self._task: asyncio.Future[None] | None = None

    async def _send(self, message: dict[str, str]) -> None:
        await self._sent.put(message["type"])

    async def start(self) -> None:
        self._task = asyncio.ensure_future(
            self._app({"type": "lifespan"}, self._messages.get, self._send)
        )
        await self._messages.put({"type": "lifespan.startup"})
        assert await self._sent.get() == "lifespan.startup.complete"

    async def stop(self) -> None:
        await self._messages.put({"type": "lifespan.shutdown"})
        assert await self._sent.get() == "lifespan.shutdown.complete"
        assert self._task is not None
        await self._task


async def test_serving_sets_no_context_variable(
    settings_factory: Callable[..., Settings],
) -> None:
    served = asgi_app(create_app(settings_factory()))
    lifespan = _Lifespan(served)
    await lifespan.start()
    try:
        context = contextvars.copy_context()
        before = dict(context)

        async def serve_all() -> list[int]:
            transport = httpx.ASGITransport(app=served)  # calls the app in this task
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return [
                    (await client.request(method, url, headers=headers, content=body)).status_code
                    for method, url, headers, body in _REQUESTS
                ]

        # Run as the lean protocol runs a connection's requests: one task, one context.
        statuses = await asyncio.get_running_loop().create_task(serve_all(), context=context)
        assert dict(context) == before
        assert statuses == [
            201,
            204,
            200,
            204,
            200,
            200,
            404,
            400,
            405,
            204,
            201,
            201,
            204,
            200,
            200,
            200,
            404,
            204,
            200,
        ]
    finally:
        await lifespan.stop()
