"""The dev stack's token for the session viewer, answered by Envoy itself.

``make dev`` mints a token for every bucket (signed with the committed
test-only key) and adds one route to its in-memory copy of the dev config:
``GET /ui/dev-token.json`` answers it as JSON, straight from Envoy. The page
offers it when that answers 200; anywhere else the path reaches ds-server,
which has no such file (404). The route exists only in a running dev
stack: no committed config holds it, and ``ds-proxy-render`` never adds it.
It gives nothing away: the test-only key's private half is committed, so
anyone who can reach a dev gateway (loopback) can mint such tokens anyway.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass

from ds_proxy import envoy_config as ec
from ds_proxy.tokens import ALL_BUCKETS, TokenSpec, mint

DEV_TOKEN_PATH = "/ui/dev-token.json"
DEV_SUB = "dev"
# A working day: a dev stack that runs longer is restarted, or the page takes a pasted token.
DEV_TOKEN_TTL_SECS = 12 * 3600


@dataclass(frozen=True, slots=True)
class DevToken:
    """A token and what the page shows about it."""

    token: str
    sub: str
    expires_at: int

    def as_json(self) -> str:
        return json.dumps({"token": self.token, "sub": self.sub, "expires_at": self.expires_at})


def mint_dev_token(sub: str = DEV_SUB, ttl_secs: int = DEV_TOKEN_TTL_SECS) -> DevToken:
    """A token reading and writing every bucket, valid for ``ttl_secs``."""
    now = int(time.time())
    spec = TokenSpec(sub=sub, read=ALL_BUCKETS, write=ALL_BUCKETS, expires_in=ttl_secs)
    return DevToken(mint(spec, now=now), sub, now + ttl_secs)


def _header(name: str, value: str) -> ec.Config:
    return {"header": {"key": name, "value": value}, "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"}


def with_dev_token(config: ec.Config, dev_token: DevToken) -> ec.Config:
    """A copy of ``config`` whose gateway answers ``GET /ui/dev-token.json`` itself.

    The route comes first, so it is matched before the catch-all to ds-server;
    jwt_authn already exempts GET below /ui/.
    """
    local = copy.deepcopy(config)
    routes: list[ec.Config] = ec.http_connection_manager(local)["route_config"]["virtual_hosts"][0][
        "routes"
    ]
    routes.insert(
        0,
        {
            "match": {
                "path": DEV_TOKEN_PATH,
                "headers": [{"name": ":method", "string_match": {"exact": "GET"}}],
            },
            "direct_response": {"status": 200, "body": {"inline_string": dev_token.as_json()}},
            "response_headers_to_add": [
                _header("content-type", "application/json"),
                _header("cache-control", "no-store"),
                _header("x-content-type-options", "nosniff"),
            ],
        },
    )
    return local
