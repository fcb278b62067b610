"""A stand-in for Electric's Shape API, for tests only: Electric itself can't run here.

NOT ELECTRIC. Its answers follow Electric's HTTP API as the OpenAPI file
(shared/spec/electric-http-api.yaml) and Electric's documentation and
source describe it; they were written for these tests, not captured from a
running Electric. Two modes, one process each:

- ``replay FILE``: serves the exchanges of a file of recorded exchanges
  (``electric_exchanges/*.json``) in order. Each request must match the
  next exchange's expected query exactly; a mismatch is answered 500 and
  recorded. ``GET /_fake/status`` reports how far it got and the mismatches.
  Live requests past the end are held and answered ``up-to-date``, as a
  long-poll that timed out.
- ``synthetic STATE``: keeps a shape log of ``items`` that the test writes
  to (``POST /_fake/transaction``), and serves it as Electric would: the
  snapshot from ``offset=-1``, catch-up and ``live`` long-polls with a
  cursor, ``409 must-refetch`` for a stale handle (``POST /_fake/rotate``
  makes a new one). Its state is saved in STATE, so a restarted process
  keeps its shape (``--fresh-handle``: as if Electric lost it).

Run: ``python electric_fake.py --port N replay FILE`` or ``... synthetic STATE``.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

LONG_POLL_SECS = 1.0
SCHEMA = {
    "id": {"type": "int4", "dims": 0, "pk_index": 0, "not_null": True},
    "title": {"type": "text", "dims": 0, "not_null": True},
    "body": {"type": "text", "dims": 0},
    "created_at": {"type": "timestamptz", "dims": 0},
}


def up_to_date(lsn: int) -> dict[str, Any]:
    return {"headers": {"control": "up-to-date", "global_last_seen_lsn": str(lsn)}}


MUST_REFETCH = [{"headers": {"control": "must-refetch"}}]


class Replay:
    """Recorded exchanges, served in order."""

    def __init__(self, path: Path) -> None:
        self.exchanges: list[dict[str, Any]] = json.loads(path.read_text())["exchanges"]
        self.served = 0
        self.mismatches: list[str] = []
        self.idle = 0
        self.lock = threading.Lock()

    def status(self) -> dict[str, Any]:
        return {
            "served": self.served,
            "total": len(self.exchanges),
            "mismatches": self.mismatches,
            "idle": self.idle,
        }

    def answer(self, query: dict[str, str]) -> tuple[dict[str, Any] | None, int]:
        """The next exchange's answer (None: drop the connection), and seconds to wait first."""
        with self.lock:
            if self.served >= len(self.exchanges):
                if query.get("live") == "true":
                    self.idle += 1
                    headers = {
                        "electric-offset": query["offset"],
                        "electric-cursor": str(int(time.time())),
                        "electric-up-to-date": "",
                    }
                    if "handle" in query:
                        headers["electric-handle"] = query["handle"]
                    return {"status": 200, "headers": headers, "body": [up_to_date(0)]}, 1
                self.mismatches.append(f"after the last exchange: {query}")
                return {"status": 500, "headers": {}, "body": {"message": "no exchange left"}}, 0
            exchange = self.exchanges[self.served]
            if exchange["request"] != query:
                self.mismatches.append(
                    f"exchange {self.served}: expected {exchange['request']}, got {query}"
                )
                return {"status": 500, "headers": {}, "body": {"message": "unexpected"}}, 0
            self.served += 1
            response = exchange["response"]
            if response.get("drop"):
                return None, 0
            return response, response.get("hold_secs", 0)


class Synthetic:
    """A shape log of ``items`` written by the test, served like Electric serves one."""

    def __init__(self, state_path: Path, fresh_handle: bool) -> None:
        self.path = state_path
        self.changed = threading.Condition()
        if state_path.exists():
            self.state = json.loads(state_path.read_text())
        else:
            self.state = {"rows": {}, "lsn": 1000, "txid": 700, "handle": "", "log": []}
            fresh_handle = True
        if fresh_handle:
            self._new_handle()
        self._save()

    def _new_handle(self) -> None:
        """A new shape: its snapshot is the rows now; its log starts empty."""
        state = self.state
        state["handle"] = f"{int(time.time() * 1000)}-{uuid.uuid4().hex[:6]}"
        state["snapshot"] = dict(state["rows"])
        state["snapshot_lsn"] = state["lsn"]
        state["log"] = []

    def save(self) -> None:
        with self.changed:
            self._save()

    def _save(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.state))
        temporary.replace(self.path)

    def transaction(self, ops: list[dict[str, Any]]) -> dict[str, Any]:
        """Apply ``ops`` as one transaction; its txid and the changes it logged."""
        with self.changed:
            state = self.state
            state["lsn"] += 10
            state["txid"] += 1
            lsn, txid = state["lsn"], state["txid"]
            logged = []
            for position, op in enumerate(ops):
                row = {k: (None if v is None else str(v)) for k, v in op["row"].items()}
                key = row["id"]
                headers = {
                    "operation": op["op"],
                    "relation": ["public", "items"],
                    "lsn": str(lsn),
                    "op_position": position,
                    "txids": [txid],
                }
                message: dict[str, Any] = {"headers": headers, "key": f'"public"."items"/"{key}"'}
                if op["op"] == "insert":
                    state["rows"][key] = row
                    message["value"] = row
                elif op["op"] == "update":
                    old = state["rows"][key]
                    new = {**old, **row}
                    state["rows"][key] = new
                    message["value"] = new
                    message["old_value"] = {c: old[c] for c in new if new[c] != old.get(c)}
                else:
                    message["value"] = state["rows"].pop(key)
                offset = f"{lsn}_{position}"
                state["log"].append([offset, message])
                logged.append({"txid": str(txid), "key": key, "op": op["op"]})
            self.changed.notify_all()
        return {"txid": txid, "changes": logged}

    def rotate(self) -> str:
        with self.changed:
            self._new_handle()
            self._save()
            self.changed.notify_all()
            return str(self.state["handle"])

    def answer(self, query: dict[str, str]) -> tuple[dict[str, Any] | None, int]:
        state = self.state
        if query.get("replica") != "full" or query.get("table") != "items":
            return {"status": 400, "headers": {}, "body": {"message": "items, replica=full"}}, 0
        handle = state["handle"]
        # Electric redirects any request for another handle to the shape's current one.
        if "handle" in query and query["handle"] != handle:
            return {"status": 409, "headers": {"electric-handle": handle}, "body": MUST_REFETCH}, 0
        live = query.get("live") == "true"
        headers = {"electric-handle": handle}
        if not live:
            headers["electric-schema"] = json.dumps(SCHEMA)
        if query["offset"] == "-1":
            rows = [
                {
                    "headers": {"operation": "insert", "relation": ["public", "items"]},
                    "key": f'"public"."items"/"{key}"',
                    "value": row,
                }
                for key, row in state["snapshot"].items()
            ]
            headers["electric-offset"] = f"{state['snapshot_lsn']}_0"
            return {"status": 200, "headers": headers, "body": rows}, 0
        deadline = time.monotonic() + (LONG_POLL_SECS if live else 0)
        with self.changed:
            while True:
                entries = self._after(query["offset"])
                if entries is None:
                    body = {"message": "offset out of bounds for this shape"}
                    return {"status": 400, "headers": {}, "body": body}, 0
                left = deadline - time.monotonic()
                if entries or left <= 0:
                    break
                self.changed.wait(left)
        entries = entries[:500]
        headers["electric-offset"] = entries[-1][0] if entries else query["offset"]
        body = [message for _, message in entries]
        if live:
            headers["electric-cursor"] = str(int(time.time() * 10))
        if len(entries) == len(self._after(query["offset"]) or []):
            headers["electric-up-to-date"] = ""
            body.append(up_to_date(state["lsn"]))
        return {"status": 200, "headers": headers, "body": body}, 0

    def _after(self, offset: str) -> list[list[Any]] | None:
        log = self.state["log"]
        if offset == f"{self.state['snapshot_lsn']}_0":
            return list(log)
        for index, (found, _) in enumerate(log):
            if found == offset:
                return log[index + 1 :]
        return None


def serve(port: int, backend: Replay | Synthetic) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: without this, each answer waits for a
        # delayed ACK (40 ms).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, headers: dict[str, str], body: Any) -> None:
            content = json.dumps(body, separators=(",", ":")).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(content)
            except OSError:  # the client gave up on a held long-poll
                self.close_connection = True

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = dict(parse_qsl(url.query, keep_blank_values=True))
            if url.path == "/_fake/status" and isinstance(backend, Replay):
                self._send(200, {}, backend.status())
                return
            if url.path == "/_fake/rows" and isinstance(backend, Synthetic):
                self._send(200, {}, backend.state["rows"])
                return
            if url.path == "/_fake/log" and isinstance(backend, Synthetic):
                self._send(200, {}, backend.state["log"])
                return
            if url.path != "/v1/shape":
                self._send(404, {}, {"message": "not found"})
                return
            answer, hold = backend.answer(query)
            if hold:
                time.sleep(hold)
            if answer is None:
                self.close_connection = True
                return
            self._send(answer["status"], answer["headers"], answer["body"])

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/_fake/transaction" and isinstance(backend, Synthetic):
                self._send(200, {}, backend.transaction(body["ops"]))
            elif self.path == "/_fake/rotate" and isinstance(backend, Synthetic):
                self._send(200, {}, {"handle": backend.rotate()})
            elif self.path == "/_fake/save" and isinstance(backend, Synthetic):
                backend.save()  # before a SIGKILL meant as a restart that keeps the shape
                self._send(200, {}, {})
            else:
                self._send(404, {}, {"message": "not found"})

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fresh-handle", action="store_true")
    parser.add_argument("mode", choices=["replay", "synthetic"])
    parser.add_argument("path", type=Path)
    args = parser.parse_args()
    if args.mode == "replay":
        backend: Replay | Synthetic = Replay(args.path)
    else:
        backend = Synthetic(args.path, args.fresh_handle)
    serve(args.port, backend)


if __name__ == "__main__":
    main()
