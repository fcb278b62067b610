"""A subscription's spec as stored bytes (JSON), and back.

JSON rather than columns: the spec is read whole and never queried, and new
optional fields need no schema change.
"""

from __future__ import annotations

import msgspec

from ds_server.subscriptions.model import SubscriptionSpec
from ds_server.subscriptions.storage.base import SubscriptionStorageError


def encode_spec(spec: SubscriptionSpec) -> str:
    """The spec as a JSON document."""
    return msgspec.json.encode(spec).decode()


def decode_spec(document: str | bytes) -> SubscriptionSpec:
    """The spec a JSON document holds; SubscriptionStorageError when it is unreadable."""
    try:
        return msgspec.json.decode(document, type=SubscriptionSpec)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise SubscriptionStorageError(f"stored subscription is unreadable: {exc}") from None
