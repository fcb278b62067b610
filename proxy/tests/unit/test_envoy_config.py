"""The committed Envoy configs: the security and streaming choices docs/security.md states.

These are checked on the parsed files, so a careless edit fails here with a
reason instead of somewhere in an integration test.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from ds_proxy import envoy_config as ec
from ds_proxy.keys import jwks_for, load_private_key
from ds_proxy.paths import DEV_CONFIG, PROD_TEMPLATE
from ds_server.settings import ServerSection

DEV = ec.load(DEV_CONFIG)
PROD = ec.load(PROD_TEMPLATE)
BOTH = pytest.mark.parametrize("config", [DEV, PROD], ids=["dev", "prod"])
# ds-server's defaults (docs/configuration.md).
SERVER_SSE_RECONNECT_SECS = 60
SERVER_LONG_POLL_SECS = 30


def seconds(duration: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)s", duration)
    assert match, duration
    return float(match.group(1))


@BOTH
def test_streaming_timeouts(config: ec.Config) -> None:
    hcm = ec.http_connection_manager(config)
    idle = seconds(hcm["stream_idle_timeout"])
    assert idle > SERVER_SSE_RECONNECT_SECS
    assert idle > SERVER_LONG_POLL_SECS
    assert seconds(hcm["request_timeout"]) == 0
    routes = hcm["route_config"]["virtual_hosts"][0]["routes"]
    assert [seconds(route["route"]["timeout"]) for route in routes] == [0] * len(routes)


# ds-server's keep-alive timeout (its setting's default) and its head limit.
SERVER_KEEP_ALIVE_SECS = ServerSection.model_fields["keep_alive_secs"].default
SERVER_MAX_HEAD_KIB = 64


@BOTH
def test_slow_clients_are_bounded(config: ec.Config) -> None:
    hcm = ec.http_connection_manager(config)
    assert 0 < seconds(hcm["request_headers_timeout"]) <= 30
    assert hcm["max_request_headers_kb"] <= SERVER_MAX_HEAD_KIB
    assert 0 < seconds(hcm["common_http_protocol_options"]["idle_timeout"]) <= 600
    h2 = hcm["http2_protocol_options"]
    assert h2["max_concurrent_streams"] <= 100
    assert h2["initial_stream_window_size"] <= 65536
    assert h2["initial_connection_window_size"] <= 1024 * 1024
    # A client (or the server) that stops reading holds 32 KiB in Envoy, not what is sent.
    assert ec.listener(config)["per_connection_buffer_limit_bytes"] == 32768
    upstream = ec.cluster(config, ec.UPSTREAM_CLUSTER)
    assert upstream["per_connection_buffer_limit_bytes"] == 32768


@BOTH
def test_upstream_connections_idle_out_before_the_server_closes_them(config: ec.Config) -> None:
    upstream = ec.cluster(config, ec.UPSTREAM_CLUSTER)
    options = upstream["typed_extension_protocol_options"][
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
    ]
    assert seconds(options["common_http_protocol_options"]["idle_timeout"]) < (
        SERVER_KEEP_ALIVE_SECS
    )


@BOTH
def test_overload_sheds_load_in_steps(config: ec.Config) -> None:
    overload = config["overload_manager"]
    monitors = {m["name"]: m["typed_config"] for m in overload["resource_monitors"]}
    assert (
        monitors["envoy.resource_monitors.global_downstream_max_connections"][
            "max_active_downstream_connections"
        ]
        == 50000
    )
    assert monitors["envoy.resource_monitors.fixed_heap"]["max_heap_size_bytes"] > 0
    actions = {a["name"]: a for a in overload["actions"]}
    assert set(actions) == {
        "envoy.overload_actions.reduce_timeouts",
        "envoy.overload_actions.reset_high_memory_stream",
        "envoy.overload_actions.shrink_heap",
        "envoy.overload_actions.disable_http_keepalive",
        "envoy.overload_actions.stop_accepting_requests",
    }
    scaled = actions["envoy.overload_actions.reduce_timeouts"]["typed_config"]
    floors = {f["timer"]: seconds(f["min_timeout"]) for f in scaled["timer_scale_factors"]}
    # Even under pressure, a live SSE stream (a keep-alive every 15 s) is not idle.
    assert floors["HTTP_DOWNSTREAM_STREAM_IDLE"] > 15
    stop = actions["envoy.overload_actions.stop_accepting_requests"]["triggers"][0]
    assert stop["threshold"]["value"] > 0.95  # the last step
    assert overload["buffer_factory_config"]["minimum_account_to_track_power_of_two"] > 0


@BOTH
def test_filter_order_strips_identity_before_authenticating(config: ec.Config) -> None:
    names = [entry["name"] for entry in ec.http_connection_manager(config)["http_filters"]]
    assert names == [
        "envoy.filters.http.header_mutation",
        "envoy.filters.http.lua",
        "envoy.filters.http.jwt_authn",
        # After authentication: it counts per verified sub.
        "envoy.filters.http.local_ratelimit",
        "envoy.filters.http.router",
    ]
    mutation = ec.http_filter(config, "envoy.filters.http.header_mutation")
    assert mutation["mutations"]["request_mutations"] == [
        {"remove_on_match": {"key_matcher": {"prefix": "x-jwt-", "ignore_case": True}}}
    ]


@BOTH
def test_no_buffering_and_no_route_level_header_removal(config: ec.Config) -> None:
    hcm = ec.http_connection_manager(config)
    names = {entry["name"] for entry in hcm["http_filters"]}
    assert "envoy.filters.http.buffer" not in names
    # Route-level removal runs after jwt_authn and would drop the gateway's own headers.
    assert "request_headers_to_remove" not in json.dumps(hcm["route_config"])


@BOTH
def test_paths_are_normalised_and_escaped_slashes_refused(config: ec.Config) -> None:
    hcm = ec.http_connection_manager(config)
    assert hcm["normalize_path"] is True
    assert hcm["merge_slashes"] is True
    assert hcm["path_with_escaped_slashes_action"] == "UNESCAPE_AND_FORWARD"


@BOTH
def test_underscored_headers_are_dropped(config: ec.Config) -> None:
    options = ec.http_connection_manager(config)["common_http_protocol_options"]
    assert options["headers_with_underscores_action"] == "DROP_HEADER"


@BOTH
def test_providers(config: ec.Config) -> None:
    providers = ec.jwt_providers(config)
    assert set(providers) == {"ds_bearer", "ds_bearer_or_query"}
    for provider in providers.values():
        assert provider["forward"] is False  # Authorization never reaches ds-server
        assert provider["require_expiration"] is True
        assert 0 < provider["clock_skew_seconds"] <= 60
        assert provider["from_headers"] == [{"name": "Authorization", "value_prefix": "Bearer "}]
        # The payload alone carries the identity: a claim copied into a header
        # of its own could be an invalid header value (a sub with a newline).
        assert "claim_to_headers" not in provider
        assert provider["forward_payload_header"] == "x-jwt-payload"
        assert provider["payload_in_metadata"] == "jwt_payload"
        assert provider["audiences"]
    assert "from_params" not in providers["ds_bearer"]
    assert providers["ds_bearer_or_query"]["from_params"] == ["access_token"]
    # Apart from where they look for the token, the two providers are one.
    header_only = copy.deepcopy(providers["ds_bearer_or_query"])
    del header_only["from_params"]
    assert header_only == providers["ds_bearer"]


@BOTH
def test_rules(config: ec.Config) -> None:
    authn = ec.http_filter(config, ec.JWT_AUTHN)
    assert authn["bypass_cors_preflight"] is True
    rules: list[dict[str, Any]] = authn["rules"]
    assert rules[0] == {"match": {"path": "/healthz"}}
    # Subscription endpoints with their own credentials: no user token required.
    assert rules[1] == {
        "match": {
            "safe_regex": {
                "regex": (
                    r"^/v1/stream/__ds/(jwks\.json|subscriptions/[^/]+/(callback|ack|release))$"
                )
            }
        }
    }
    # The viewer's page: reading it needs no token (GET and HEAD of /ui and below only).
    assert rules[2] == {
        "match": {
            "safe_regex": {"regex": "^/ui(/.*)?$"},
            "headers": [
                {"name": ":method", "string_match": {"safe_regex": {"regex": "^(GET|HEAD)$"}}}
            ],
        }
    }
    assert rules[3] == {
        "match": {
            "prefix": "/",
            "headers": [{"name": ":method", "string_match": {"exact": "GET"}}],
        },
        "requires": {"provider_name": "ds_bearer_or_query"},
    }
    assert rules[4] == {"match": {"prefix": "/"}, "requires": {"provider_name": "ds_bearer"}}
    assert len(rules) == 5


_SUB_FROM_TOKEN = {
    "metadata": {
        "descriptor_key": "sub",
        "metadata_key": {
            "key": "envoy.filters.http.jwt_authn",
            "path": [{"key": "jwt_payload"}, {"key": "sub"}],
        },
    }
}


@BOTH
def test_rates_are_counted_per_verified_sub_and_kind(config: ec.Config) -> None:
    ratelimit = ec.http_filter(config, "envoy.filters.http.local_ratelimit")
    # Enforced for every request that builds a descriptor; none shared by all subjects.
    for key in ("filter_enabled", "filter_enforced"):
        assert ratelimit[key]["default_value"] == {"numerator": 100, "denominator": "HUNDRED"}
    assert ratelimit["always_consume_default_token_bucket"] is False
    assert "token_bucket" not in ratelimit
    appends, reads = ratelimit["rate_limits"]
    # The sub is the one jwt_authn verified (the metadata it writes, never a header).
    assert appends["actions"][0] == reads["actions"][0] == _SUB_FROM_TOKEN
    assert appends["actions"][1]["header_value_match"] == {
        "descriptor_key": "kind",
        "descriptor_value": "append",
        "expect_match": False,
        "headers": [
            {"name": ":method", "string_match": {"safe_regex": {"regex": "^(GET|HEAD|OPTIONS)$"}}}
        ],
    }
    assert reads["actions"][1]["header_value_match"]["descriptor_value"] == "read"
    assert [d["entries"][0] for d in ratelimit["descriptors"]] == [{"key": "sub", "value": ""}] * 2
    assert ratelimit["response_headers_to_add"][0]["header"] == {
        "key": "retry-after",
        "value": "1",
    }
    [mapper] = ec.http_connection_manager(config)["local_reply_config"]["mappers"]
    assert mapper["filter"]["status_code_filter"]["comparison"]["value"]["default_value"] == 429
    assert "subject" in mapper["body"]["inline_string"]


def test_dev_jwks_is_the_committed_test_key() -> None:
    expected = jwks_for(load_private_key())
    for provider in ec.jwt_providers(DEV).values():
        assert json.loads(provider["local_jwks"]["inline_string"]) == expected
        assert provider["issuer"] == "durable-streams-test"
        assert provider["audiences"] == ["durable-streams"]


def test_dev_listens_on_loopback_in_front_of_loopback() -> None:
    assert ec.listener(DEV)["address"]["socket_address"] == {
        "address": "127.0.0.1",
        "port_value": 8080,
    }
    assert ec.endpoint_address(DEV, ec.UPSTREAM_CLUSTER) == {
        "address": "127.0.0.1",
        "port_value": 4437,
    }
    assert DEV["admin"]["address"]["socket_address"]["address"] == "127.0.0.1"


def test_prod_fetches_remote_jwks_and_keeps_admin_on_loopback() -> None:
    for provider in ec.jwt_providers(PROD).values():
        assert "local_jwks" not in provider
        assert provider["remote_jwks"]["http_uri"]["cluster"] == ec.JWKS_CLUSTER
    assert PROD["admin"]["address"]["socket_address"]["address"] == "127.0.0.1"


def _comparable(config: ec.Config) -> ec.Config:
    """The config minus what legitimately differs between dev and prod."""
    config = copy.deepcopy(config)
    ec.listener(config)["address"] = None
    upstream = ec.cluster(config, ec.UPSTREAM_CLUSTER)
    for key in ("type", "dns_lookup_family", "load_assignment"):
        upstream.pop(key, None)
    config["static_resources"]["clusters"] = [upstream]
    for provider in ec.jwt_providers(config).values():
        for key in ("issuer", "audiences", "local_jwks", "remote_jwks"):
            provider.pop(key, None)
    return config


def test_dev_and_prod_agree_on_everything_else() -> None:
    assert _comparable(DEV) == _comparable(PROD)


def test_localize_changes_only_addresses() -> None:
    local = ec.localize(DEV, listen_port=1001, upstream_port=1002, admin_port=1003)
    assert ec.listener(local)["address"]["socket_address"]["port_value"] == 1001
    assert ec.endpoint_address(local, ec.UPSTREAM_CLUSTER)["port_value"] == 1002
    assert local["admin"]["address"]["socket_address"]["port_value"] == 1003
    assert ec.http_connection_manager(local) == ec.http_connection_manager(DEV)
    # The original is untouched.
    assert ec.listener(DEV)["address"]["socket_address"]["port_value"] == 8080


def test_localize_can_drop_admin() -> None:
    assert "admin" not in ec.localize(DEV, listen_port=1, upstream_port=2, admin_port=None)


def test_dump_round_trips() -> None:
    import yaml

    assert yaml.safe_load(ec.dump(DEV)) == DEV
