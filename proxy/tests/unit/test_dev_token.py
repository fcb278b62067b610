"""ds_proxy.dev_token: the dev stack's viewer token, and that only a dev stack has it."""

from __future__ import annotations

import json
import time

import jwt
from ds_proxy import envoy_config as ec
from ds_proxy.dev_token import DEV_TOKEN_PATH, mint_dev_token, with_dev_token
from ds_proxy.keys import load_private_key
from ds_proxy.paths import DEV_CONFIG, PROD_TEMPLATE
from ds_proxy.render import render_production
from ds_proxy.settings import ProxySettings
from ds_proxy.tokens import TEST_AUDIENCE, TEST_ISSUER

DEV = ec.load(DEV_CONFIG)


def _routes(config: ec.Config) -> list[ec.Config]:
    routes: list[ec.Config] = ec.http_connection_manager(config)["route_config"]["virtual_hosts"][
        0
    ]["routes"]
    return routes


def test_the_token_reads_and_writes_every_bucket_for_a_day() -> None:
    dev = mint_dev_token()
    public = load_private_key().public_key()
    claims = jwt.decode(dev.token, public, algorithms=["RS256"], audience=TEST_AUDIENCE)
    assert claims["iss"] == TEST_ISSUER
    assert claims["sub"] == dev.sub == "dev"
    assert claims["ds"] == {"read": ["*"], "write": ["*"]}
    assert claims["exp"] == dev.expires_at
    assert dev.expires_at - time.time() > 11 * 3600


def test_the_route_answers_the_token_from_envoy_before_the_catch_all() -> None:
    dev = mint_dev_token(ttl_secs=60)
    routes = _routes(with_dev_token(DEV, dev))
    first = routes[0]
    assert first["match"]["path"] == DEV_TOKEN_PATH
    assert json.loads(first["direct_response"]["body"]["inline_string"]) == {
        "token": dev.token,
        "sub": "dev",
        "expires_at": dev.expires_at,
    }
    headers = {
        entry["header"]["key"]: entry["header"]["value"]
        for entry in first["response_headers_to_add"]
    }
    assert headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store"
    assert routes[1:] == _routes(DEV)


def test_no_committed_or_rendered_config_serves_a_token() -> None:
    # The committed configs are untouched by with_dev_token (it copies).
    with_dev_token(DEV, mint_dev_token())
    settings = ProxySettings(
        issuer="https://login.example.com/",
        audiences=("durable-streams",),
        jwks_uri="https://login.example.com/.well-known/jwks.json",
    )
    rendered = render_production(ec.load(PROD_TEMPLATE), settings)
    for config in (DEV, ec.load(PROD_TEMPLATE), rendered):
        text = ec.dump(config)
        assert "direct_response" not in text
        assert DEV_TOKEN_PATH not in text
        assert all("route" in route for route in _routes(config))
