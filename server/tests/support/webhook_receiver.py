"""A real webhook endpoint on a free loopback port, recording what it is sent.

Threaded, so it serves while a test blocks on ``wait_for``; every POST is
answered 200 ``{}`` (received, not done).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Delivery:
    body: dict[str, Any]
    signature: str | None


class WebhookReceiver:
    """Records deliveries; stop it with ``close``."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["content-length"]))
                receiver.deliveries.append(
                    Delivery(json.loads(raw), self.headers.get("webhook-signature"))
                )
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/webhook"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def wait_for(self, count: int, within: float = 10.0) -> Delivery:
        """The ``count``-th delivery, once it has arrived."""
        deadline = time.monotonic() + within
        while len(self.deliveries) < count:
            assert time.monotonic() < deadline, f"only {len(self.deliveries)} deliveries"
            time.sleep(0.02)
        return self.deliveries[count - 1]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
