"""Authorization of every operation through the real Envoy: a sample of the property.

The same model as ``unit/test_authorization_properties.py`` (random tokens,
every operation, both surfaces, fork sources spelled every way, escapes),
but with real RS256 tokens through Envoy to a real server process whose
store records every touch. Fewer examples: each is a few real requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest
from authorization_model import Token, Touch, scenarios, world_requests
from ds_proxy.tokens import bucket_token
from gateway_stack import ADMIN, GatewayStack, bearer
from hypothesis import HealthCheck, given, settings

if TYPE_CHECKING:
    from authorization_model import Call


def _build(client: httpx.Client) -> None:
    """The model's buckets and streams; requests change them as they go."""
    for method, path, extra in world_requests():
        headers = {**extra.get("headers", {}), **bearer(ADMIN)}
        response = client.request(method, path, headers=headers, content=extra.get("content"))
        assert response.status_code == 201, response.text


@pytest.fixture(scope="module")
def world(stack: GatewayStack) -> GatewayStack:
    with httpx.Client(base_url=stack.url, timeout=30.0) as http:
        _build(http)
    return stack


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_no_request_through_envoy_touches_what_its_token_does_not_grant(
    world: GatewayStack, client: httpx.Client, scenario: tuple[Token, Call]
) -> None:
    token, call = scenario
    mark = len(world.store_touches())
    jwt = bucket_token("property", read=tuple(token.read), write=tuple(token.write))
    request = client.build_request(
        call.method,
        call.target,
        headers=[*call.headers, ("Authorization", f"Bearer {jwt}")],
        content=call.body or None,
    )
    response = client.send(request)
    touched = [Touch(bucket, mode, what) for bucket, mode, what in world.store_touches()[mark:]]
    refused = [touch for touch in touched if not token.grants(touch)]
    assert not refused, f"{call.describe()} -> {response.status_code}: touched {refused}"
