"""Subscription request bodies: decoding and validation into specs."""

from __future__ import annotations

import json

import pytest
from ds_server.subscriptions.errors import InvalidRequest, WebhookUrlRejected
from ds_server.subscriptions.model import (
    DEFAULT_LEASE_TTL_MS,
    SubscriptionSpec,
    SubscriptionType,
)
from ds_server.subscriptions.payloads import (
    AckBody,
    SubscriptionBody,
    decode,
    stream_path,
    subscription_id,
    to_spec,
)

HOOK = {"url": "http://127.0.0.1:9/hook"}


def _spec(**body: object) -> SubscriptionSpec:
    return to_spec("s", decode(json.dumps(body).encode(), SubscriptionBody))


def test_webhook_spec_normalises_streams_and_defaults_the_lease() -> None:
    spec = _spec(type="webhook", streams=["/b/", "a", "b"], webhook=HOOK)
    assert spec.type is SubscriptionType.WEBHOOK
    assert spec.streams == ("a", "b")
    assert spec.lease_ttl_ms == DEFAULT_LEASE_TTL_MS
    assert spec.webhook_url == HOOK["url"]


def test_identical_bodies_give_equal_specs() -> None:
    body = {"type": "webhook", "pattern": "events/*", "webhook": HOOK, "lease_ttl_ms": 1000}
    assert _spec(**body) == _spec(**body)
    assert _spec(**body) != _spec(**{**body, "lease_ttl_ms": 2000})


def test_pull_wake_spec() -> None:
    spec = _spec(type="pull-wake", pattern="events/*", wake_stream="wake/pool")
    assert spec.wake_stream == "wake/pool"
    assert spec.webhook_url is None


def test_unsafe_url_is_rejected_with_its_own_code() -> None:
    with pytest.raises(WebhookUrlRejected):
        _spec(type="webhook", pattern="events/*", webhook={"url": "http://10.0.0.1/hook"})


@pytest.mark.parametrize(
    "body",
    [
        {"type": "webhook", "webhook": HOOK},  # neither pattern nor streams
        {"type": "webhook", "pattern": "events/*"},  # no webhook
        {"type": "webhook", "pattern": "e/*", "webhook": HOOK, "wake_stream": "w"},
        {"type": "pull-wake", "pattern": "events/*"},  # no wake stream
        {"type": "pull-wake", "pattern": "e/*", "wake_stream": "w", "webhook": HOOK},
        {"type": "pull-wake", "pattern": "e/*", "wake_stream": "w", "streams": ["w"]},
        {"type": "fax", "pattern": "events/*", "webhook": HOOK},
        {"type": "webhook", "pattern": "ev*", "webhook": HOOK},
        {"type": "webhook", "streams": ["a/../b"], "webhook": HOOK},
        {"type": "webhook", "streams": ["__ds/x"], "webhook": HOOK},
        {"type": "webhook", "pattern": "e/*", "webhook": HOOK, "lease_ttl_ms": 999},
        {"type": "webhook", "pattern": "e/*", "webhook": HOOK, "lease_ttl_ms": 600_001},
        {"type": "webhook", "pattern": "e/*", "webhook": HOOK, "lease_ttl_ms": "1000"},
        {"type": "webhook", "pattern": 5, "webhook": HOOK},
    ],
)
def test_invalid_bodies(body: dict[str, object]) -> None:
    with pytest.raises(InvalidRequest):
        _spec(**body)


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"null", b'"x"'])
def test_not_an_object(raw: bytes) -> None:
    with pytest.raises(InvalidRequest):
        decode(raw, SubscriptionBody)


@pytest.mark.parametrize("kind", [SubscriptionBody, AckBody])
def test_a_body_nested_too_deeply_is_invalid_not_an_error(kind: type[AckBody]) -> None:
    """An ignored field nested ~1,000 deep made msgspec raise RecursionError: a 500 before."""
    deep = b"[" * 3000 + b"]" * 3000
    with pytest.raises(InvalidRequest, match="nested too deeply"):
        decode(b'{"pattern": "a/*", "extra": ' + deep + b"}", kind)


def test_ack_items_accept_stream_or_path() -> None:
    body = decode(
        b'{"wake_id":"w","generation":1,"acks":[{"stream":"/a","offset":"1"},'
        b'{"path":"b","offset":"2"}]}',
        AckBody,
    )
    assert body.ack_pairs() == [("a", "1"), ("b", "2")]
    assert body.done is False


def test_ack_item_without_a_stream() -> None:
    body = decode(b'{"wake_id":"w","generation":1,"acks":[{"offset":"1"}]}', AckBody)
    with pytest.raises(InvalidRequest):
        body.ack_pairs()


@pytest.mark.parametrize("raw", ["sub-1", "a.b~c_D-9"])
def test_valid_ids(raw: str) -> None:
    assert subscription_id(raw) == raw


@pytest.mark.parametrize("raw", ["", "a b", "a/b", "ü", "x" * 257])
def test_invalid_ids(raw: str) -> None:
    with pytest.raises(InvalidRequest):
        subscription_id(raw)


def test_stream_path_trims_slashes() -> None:
    assert stream_path("/manual/b/") == "manual/b"
