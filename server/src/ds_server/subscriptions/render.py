"""The JSON documents the subscription API sends: views, notifications, wake events.

All stream paths are relative to the stream root; all URLs are absolute,
built from the root URL the subscription was created through.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from ds_server.protocol.offsets import format_offset
from ds_server.subscriptions.model import SubscriptionType, offset_text
from ds_server.subscriptions.signing import ALGORITHM

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ds_server.subscriptions.model import StreamState, Subscription, Wake
    from ds_server.subscriptions.signing import SigningKey

JSON = dict[str, Any]


def encode(document: object) -> bytes:
    """Compact JSON bytes."""
    return msgspec.json.encode(document)


def jwks_url(root_url: str) -> str:
    return f"{root_url}/__ds/jwks.json"


def callback_url(sub: Subscription) -> str:
    return f"{sub.root_url}/__ds/subscriptions/{sub.id}/callback"


def subscription_view(sub: Subscription, key: SigningKey) -> JSON:
    """The subscription object of create, re-confirm and GET (never a shared secret)."""
    spec = sub.spec
    view: JSON = {"id": spec.id, "subscription_id": spec.id, "type": spec.type.value}
    if spec.pattern is not None:
        view["pattern"] = spec.pattern
    view["streams"] = [
        {"path": path, "link_type": link.link_type, "acked_offset": offset_text(link.acked)}
        for path, link in sorted(sub.links.items())
    ]
    if spec.type is SubscriptionType.WEBHOOK:
        view["webhook"] = {
            "url": spec.webhook_url,
            "signing": {"alg": ALGORITHM, "kid": key.kid, "jwks_url": jwks_url(sub.root_url)},
        }
    view["wake_stream"] = spec.wake_stream
    view["lease_ttl_ms"] = spec.lease_ttl_ms
    view["created_at"] = _rfc3339(sub.created_at)
    view["status"] = sub.status
    if spec.description is not None:
        view["description"] = spec.description
    return view


def stream_entries(states: Iterable[StreamState]) -> list[JSON]:
    """Linked streams that exist, with ack position, tail and whether work is pending."""
    return [
        {
            "path": state.path,
            "link_type": state.link_type,
            "acked_offset": offset_text(state.acked),
            "tail_offset": format_offset(state.tail),
            "has_pending": state.has_pending,
        }
        for state in states
        if state.tail is not None
    ]


def notification(sub: Subscription, wake: Wake, states: Iterable[StreamState]) -> bytes:
    """The webhook body for ``wake``; signed and sent byte for byte."""
    return encode(
        {
            "subscription_id": sub.id,
            "wake_id": wake.wake_id,
            "generation": wake.generation,
            "streams": stream_entries(states),
            "callback_url": callback_url(sub),
            "callback_token": wake.token,
        }
    )


def wake_event(sub: Subscription, wake: Wake, now: float) -> bytes:
    """The message a pull-wake subscription appends to its wake stream."""
    return encode(
        {
            "type": "wake",
            "subscription_id": sub.id,
            "stream": wake.trigger,
            "generation": wake.generation,
            "ts": int(now * 1000),
        }
    )


def claim_grant(wake: Wake, states: Iterable[StreamState], lease_ttl_ms: int) -> JSON:
    """The answer to a successful pull-wake claim."""
    return {
        "wake_id": wake.wake_id,
        "generation": wake.generation,
        "token": wake.token,
        "streams": stream_entries(states),
        "lease_ttl_ms": lease_ttl_ms,
    }


def _rfc3339(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
