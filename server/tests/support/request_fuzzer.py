"""Seeded random HTTP requests aimed at every surface of ds-server.

``RequestFuzzer(seed, ns)`` yields the same requests for the same seed:
any method (some the HTTP parser itself refuses), paths on both stream
surfaces, the ``__ds`` subscription API, buckets, listings, snapshots and
bootstrap, and odd paths besides; every protocol header with valid,
boundary and garbage values; query strings of live modes, offsets, cursors
and listing parameters; bodies of every shape (empty, text, random bytes,
JSON of every kind, JSON nested up to 100,000 deep, bodies past the size
limit, subscription, ack and snapshot documents, valid and not).

Requests land in the bucket ``ns`` (``/ds/{ns}/...`` and
``/v1/stream/{ns}/...`` name the same streams) and read the fixture bucket
``{ns}fx``, whose streams the harness creates first and checks last: the
fuzzer only reads them, forks from them, and sends them appends that are
refused by construction (a malformed producer triple), so any change to
them is a bug. Offsets the server answers with are remembered and reused,
so offsets, fork points and snapshot offsets are often real ones.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from urllib.parse import quote

FIXTURE_SUFFIX = "fx"
# Streams of the fixture bucket and what they hold: (content type, body, closed).
FIXTURES: dict[str, tuple[str, bytes, bool]] = {
    "text": ("text/plain", b"hello, fixture", False),
    "json": ("application/json", b'[{"n":1},{"n":2},[3,4]]', False),
    "bytes": ("application/octet-stream", bytes(range(256)), False),
    "closed": ("text/plain", b"the end", True),
}
# A body past the stream limit the fuzzed servers run with (64 KiB).
BIG = 70_000

METHODS = [
    *["GET"] * 6,
    *["POST"] * 4,
    *["PUT"] * 4,
    *["HEAD"] * 2,
    *["DELETE"] * 2,
    "OPTIONS",
    "PATCH",
    "PROPFIND",
]
STREAM_METHODS = [*["PUT"] * 3, *["POST"] * 4, *["GET"] * 4, "HEAD", "DELETE"]
STREAM_NAMES = [*["a", "b", "j"] * 3, "c/d", "x/y/z", "a/", "%2e%2e", ".", "__ds", "__x"]
ODD_SEGMENTS = [
    "%00",
    "%0a",
    "%ff",
    "%c3%28",
    "%7f",
    "%2f",
    "%252e",
    "%C3%A9",
    "%F0%9F%98%80",
    ";",
    "~",
    "x" * 1100,
    "",
]
SUB_IDS = ["one", "one", "two", "bad id", "x" * 300, "%2e%2e", ""]
# Each subscription path and the methods it serves.
SUB_ACTIONS = {
    "": ["PUT", "PUT", "GET", "DELETE"],
    "/streams": ["POST"],
    "/streams/{stream}": ["DELETE"],
    "/callback": ["POST"],
    "/ack": ["POST"],
    "/claim": ["POST"],
    "/release": ["POST"],
}
LISTING_KEYS = ["prefix", "after", "limit"]
QUERY_KEYS = ["offset", "offset", "live", "cursor", *LISTING_KEYS, "x", "", "offset"]
OFFSET_VALUES = [
    "-1",
    "now",
    "",
    "0" * 20,
    "0" * 19 + "1",
    "9" * 20,
    "0" * 21,
    "-2",
    "abc",
    "1_2",
    "0000000000000000000a",
    "%ff",
    "%00",
]
LIVE_VALUES = ["sse", "long-poll", "SSE", "true", "", "long-poll%00"]
OTHER_VALUES = ["0", "1", "1000", "1001", "-1", "abc", "", "%", "=", "&", "a/b", "é"]
FUTURE = "2099-01-01T00:00:00Z"


# Protocol headers with valid, boundary and garbage values, whatever the stream's
# names (the Hypothesis test of malformed requests draws from these too).
HEADER_VALUES: dict[str, list[str]] = {
    "content-type": [
        "text/plain",
        "application/json",
        "application/json",
        "application/octet-stream",
        "Application/JSON; charset=utf-8",
        "application/json;",
        "",
        ";",
        "text/",
        "\u00ff/\u00ff",
        "multipart/form-data; boundary=x",
    ],
    "producer-id": ["p", "q", "", " x", "x" * 300],
    "producer-epoch": ["0", "1", "-1", "01", "1.5", "9007199254740991", "9007199254740992", "1e3"],
    "producer-seq": ["0", "1", "2", "-1", "18446744073709551616", "abc"],
    "stream-ttl": ["0", "60", "-1", "060", "+60", "1e3", "60.5", "9" * 30],
    "stream-expires-at": [
        FUTURE,
        "2000-01-01T00:00:00Z",
        "2099-02-30T00:00:00Z",
        "9999-12-31T23:59:59-23:59",
        "0001-01-01T00:00:00+23:59",
        "2099-01-01T00:00:00.1234567890Z",
        "soon",
    ],
    "stream-seq": ["1", "2", "a", "", "\u00e9", "x" * 300],
    "stream-closed": ["true", "TRUE", "false", "", "1"],
    "stream-fork-offset": OFFSET_VALUES,
    "stream-fork-sub-offset": ["0", "1", "2", "5", "-1", "01", "x", "9" * 40],
    "if-none-match": ["*", '"x"', "W/", "", '"a", "b"'],
    "origin": ["https://app.example", "null", "http://[::1", "\u00ff"],
    "x-jwt-sub": ["alice", "", "\u00e9"],
}


def _header_values(ns: str) -> dict[str, list[str]]:
    fixture = ns + FIXTURE_SUFFIX
    return {
        **HEADER_VALUES,
        "stream-forked-from": [
            f"{ns}/a",
            f"/v1/stream/{ns}/a",
            f"/ds/{ns}/a",
            *(f"{fixture}/{name}" for name in FIXTURES),
            f"/ds/{fixture}/json",
            "..",
            "",
            "%00",
            f"/v1/stream/{ns}/../a",
            "/ds/NOPE/a",
            "__ds/x",
        ],
        "access-control-request-method": ["POST", "GET", "BREW", ""],
        "access-control-request-headers": ["content-type, producer-id", "x" * 500, ""],
        "accept": ["text/event-stream", "*/*", "application/json"],
        "range": ["bytes=0-1", "bytes=-1"],
    }


@dataclass(frozen=True, slots=True)
class FuzzRequest:
    """One request as sent: ``target`` is the exact ASCII request target (path and query)."""

    method: str
    target: str
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes

    def describe(self) -> str:
        headers = ", ".join(f"{k.decode()}: {v[:60]!r}" for k, v in self.headers)
        return f"{self.method} {self.target[:300]} [{headers}] body={self.body[:120]!r}"


def nested(depth: int, opener: bytes = b"[", closer: bytes = b"]") -> bytes:
    """A JSON value ``depth`` containers deep."""
    return opener * depth + b"1" + closer * depth


class RequestFuzzer:
    """Request after request, from one seed, in the bucket ``ns``."""

    def __init__(self, seed: int, ns: str) -> None:
        self.rng = random.Random(seed)
        self.ns = ns
        self.fixture_bucket = ns + FIXTURE_SUFFIX
        self._headers = _header_values(ns)
        # Offsets the server has answered with, so requests can name real ones.
        self.offsets: list[str] = ["0" * 20]

    def saw_offset(self, offset: str | None) -> None:
        """Remember an offset from a response (``Stream-Next-Offset``) for later requests."""
        if offset and offset not in self.offsets:
            self.offsets.append(offset)
            if len(self.offsets) > 64:
                del self.offsets[1]

    def request(self) -> FuzzRequest:
        """The next request."""
        rng = self.rng
        if rng.random() < 0.15:
            return self._fixture_request()
        path, methods = self._path()
        # Mostly a method the route serves, so requests get past routing; any method at times.
        method = rng.choice(methods) if rng.random() < 0.8 else rng.choice(METHODS)
        query = self._query() if rng.random() < 0.7 else ""
        headers = self._random_headers()
        if method in ("PUT", "POST") and rng.random() < 0.6:
            content_type = rng.choice(["application/json", "text/plain", "application/json"])
            headers.insert(0, (b"content-type", content_type.encode()))
        body = self._body(path) if method in ("PUT", "POST", "PATCH") or rng.random() < 0.1 else b""
        return FuzzRequest(method, _target(path, query), tuple(headers), body)

    # -- paths ----------------------------------------------------------

    def _stream_name(self) -> str:
        rng = self.rng
        if rng.random() < 0.15:
            return "/".join(rng.choice(ODD_SEGMENTS) for _ in range(rng.randint(1, 3)))
        return rng.choice(STREAM_NAMES)

    def _path(self) -> tuple[str, list[str]]:
        """A path, and the methods its route serves."""
        rng = self.rng
        ns = self.ns
        name = self._stream_name()
        stream = name.split("/", 1)[0]
        choice = rng.random()
        if choice < 0.35:
            return f"/v1/stream/{ns}/{name}", STREAM_METHODS
        if choice < 0.55:
            return f"/ds/{ns}/{stream}", STREAM_METHODS
        if choice < 0.62:
            bucket_path = rng.choice([f"/ds/{ns}", f"/ds/{ns}/", "/ds/BAD!", "/ds/ab"])
            if rng.random() < 0.4:
                return f"/ds/{ns}/streams", ["GET"]
            return bucket_path, ["PUT", "GET", "GET", "DELETE"]
        if choice < 0.72:
            tail = rng.choice(["/snapshot", "/snapshot/{offset}", "/snapshot/x", "/snapshot/-1"])
            if rng.random() < 0.3:
                return f"/ds/{ns}/{stream}/bootstrap", ["GET"]
            path = f"/ds/{ns}/{stream}" + tail.replace("{offset}", rng.choice(self.offsets))
            return path, ["PUT", "GET", "DELETE"]
        if choice < 0.9:
            if rng.random() < 0.1:
                return "/v1/stream/__ds/jwks.json", ["GET"]
            sub_id = rng.choice(SUB_IDS)
            action = rng.choice(list(SUB_ACTIONS))
            methods = SUB_ACTIONS[action]
            action = action.replace("{stream}", quote(f"{ns}/a", safe=""))
            return f"/v1/stream/__ds/subscriptions/{sub_id}{action}", methods
        path = rng.choice(
            [
                "/healthz",
                "/healthz/x",
                "/",
                "/ui/",
                "/ui/../healthz",
                "/v1/stream",
                "/v1/stream/",
                "//v1/stream/" + ns + "/a",
                f"/v1/stream/{ns}//a",
                "/v1/stream/__ds",
                "/metrics",
                "/%00",
            ]
        )
        return path, ["GET", "HEAD", "OPTIONS"]

    def _query(self) -> str:
        rng = self.rng
        pairs = []
        for _ in range(rng.randint(0, 4)):
            key = rng.choice(QUERY_KEYS)
            if key == "offset":
                value = rng.choice([*OFFSET_VALUES, *self.offsets, *self.offsets])
            elif key == "live":
                value = rng.choice(LIVE_VALUES)
            else:
                value = rng.choice(OTHER_VALUES)
            pairs.append(f"{key}={quote(value, safe='%=&')}")
        if rng.random() < 0.05:
            pairs.append("".join(chr(rng.randint(0x21, 0x7E)) for _ in range(rng.randint(1, 20))))
        return "&".join(pairs)

    # -- headers --------------------------------------------------------

    def _random_headers(self) -> list[tuple[bytes, bytes]]:
        rng = self.rng
        names = list(self._headers)
        headers = []
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 6])):
            name = rng.choice(names)
            headers.append((name.encode(), self._header_value(name).encode("latin-1")))
        if rng.random() < 0.2:
            # A whole producer triple, valid or not: the interesting combination.
            for name in ("producer-id", "producer-epoch", "producer-seq"):
                headers.append((name.encode(), self._header_value(name).encode("latin-1")))
        return headers

    def _header_value(self, name: str) -> str:
        rng = self.rng
        roll = rng.random()
        if name == "stream-fork-offset" and roll < 0.4:
            value = rng.choice(self.offsets)
        elif roll < 0.85:
            value = rng.choice(self._headers[name])
        elif roll < 0.95:
            value = "".join(chr(rng.randint(0x20, 0xFF)) for _ in range(rng.randint(0, 40)))
        else:
            value = "9" * rng.choice([30, 9000])
        # What an HTTP client can send at all: no DEL, no leading or trailing blanks.
        return value.replace("\x7f", "").strip(" \t")

    # -- bodies ---------------------------------------------------------

    def _body(self, path: str) -> bytes:
        rng = self.rng
        if "/__ds/" in path and rng.random() < 0.7:
            return self._api_body()
        if "/snapshot" in path and rng.random() < 0.6:
            return json.dumps({"state": {"k": rng.random()}, "n": rng.randint(0, 9)}).encode()
        roll = rng.random()
        if roll < 0.1:
            return b""
        if roll < 0.25:
            return rng.choice([b"x", b"hello", "caf\u00e9".encode(), b"\xff\xfe\xfd"])
        if roll < 0.35:
            return rng.randbytes(rng.randint(1, 300))
        if roll < 0.7:
            return self._json_body()
        if roll < 0.85:
            depth = rng.choice([100, 500, 900, 999, 1000, 3000, 100_000])
            opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
            value = nested(depth, opener, closer)
            return b"[" + value + b"]" if rng.random() < 0.5 else value
        if roll < 0.92:
            return b"[" + b",".join([b'{"n":1}'] * 2000) + b"]"
        return b"a" * BIG

    def _json_body(self) -> bytes:
        rng = self.rng
        return rng.choice(
            [
                b"[]",
                b"{}",
                b"[{}]",
                b"[[1,2],[3,4]]",
                b"[[[1]]]",
                b'"x"',
                b"1",
                b"-0.5e3",
                b"null",
                b"true",
                b"NaN",
                b"[1,]",
                b"{",
                b'{"a":1,"a":2}',
                b"100000000000000000000000000001",
                b'"\\ud800"',
                b'["\\u0000"]',
                b" [ 1 , 2 ] ",
                b'{"type":"chat","value":{"text":"hi"}}',
                json.dumps([{"i": i} for i in range(rng.randint(1, 50))]).encode(),
            ]
        )

    def _api_body(self) -> bytes:
        rng = self.rng
        ns = self.ns
        document: object = rng.choice(
            [
                {"type": "pull-wake", "pattern": f"{ns}/*", "wake_stream": f"{ns}/wakes"},
                {"type": "pull-wake", "streams": [f"{ns}/a", f"{ns}/b"], "wake_stream": f"{ns}/w"},
                {
                    "type": "webhook",
                    "pattern": f"{ns}/*",
                    "webhook": {"url": "http://127.0.0.1:9/"},
                },
                {"type": "webhook", "webhook": {"url": "ftp://x"}},
                {"type": "pull-wake", "pattern": "**/**/[", "wake_stream": "__ds/x"},
                {"type": "pull-wake", "lease_ttl_ms": -1, "pattern": f"{ns}/*"},
                {"type": 7},
                {"streams": [f"{ns}/a"]},
                {"streams": []},
                {"streams": [f"{ns}/" + "x" * 2000]},
                {"worker": "w1"},
                {"worker": ""},
                {"wake_id": "w", "generation": 0, "acks": [{"stream": f"{ns}/a", "offset": "-1"}]},
                {"wake_id": "w", "generation": -1},
                {"wake_id": "w", "generation": 1, "acks": [{"offset": "x"}], "done": True},
                [],
                None,
            ]
        )
        if rng.random() < 0.1:
            return b'{"type":"pull-wake","pattern":"a/*","extra":' + nested(5000) + b"}"
        return json.dumps(document).encode()

    # -- the fixture bucket --------------------------------------------------

    def _fixture_request(self) -> FuzzRequest:
        """A read of a fixture stream, or an append to one that must be refused."""
        rng = self.rng
        name = rng.choice(list(FIXTURES))
        surface = rng.choice([f"/v1/stream/{self.fixture_bucket}/", f"/ds/{self.fixture_bucket}/"])
        headers = self._random_headers()
        if rng.random() < 0.25:
            # Refused before anything is written: the producer triple is malformed.
            headers = [h for h in headers if not h[0].startswith(b"producer-")]
            headers += [(b"producer-id", b"p"), (b"producer-epoch", b"0"), (b"producer-seq", b"x")]
            return FuzzRequest(
                "POST", _target(surface + name, ""), tuple(headers), self._body(surface)
            )
        method = rng.choice(["GET", "GET", "GET", "HEAD", "OPTIONS"])
        path = surface + name
        if method == "GET" and rng.random() < 0.15 and surface.startswith("/ds/"):
            path += "/bootstrap"
        return FuzzRequest(method, _target(path, self._query()), tuple(headers), b"")


def _target(path: str, query: str) -> str:
    # The request target is ASCII on the wire; percent-encode the rest.
    target = quote(path, safe="/%;~:@!$&'()*+,={}") or "/"
    return f"{target}?{query}" if query else target
