"""Request bodies of the subscription API, decoded and validated.

Every malformed body becomes InvalidRequest (or WebhookUrlRejected), never a
500; unknown members are ignored so clients can send newer fields.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, TypeVar

import msgspec

from ds_server.protocol import names
from ds_server.protocol.errors import BadRequest
from ds_server.subscriptions.errors import InvalidRequest, WebhookUrlRejected
from ds_server.subscriptions.model import (
    DEFAULT_LEASE_TTL_MS,
    MAX_LEASE_TTL_MS,
    MIN_LEASE_TTL_MS,
    SubscriptionSpec,
    SubscriptionType,
)
from ds_server.subscriptions.patterns import pattern_problem
from ds_server.subscriptions.url_policy import rejection_reason

_ID_RE = re.compile(r"[A-Za-z0-9._~-]{1,256}")
_MAX_STREAMS = 1000
_MAX_TEXT = 1024

NonEmpty = Annotated[str, msgspec.Meta(min_length=1, max_length=_MAX_TEXT)]
Generation = Annotated[int, msgspec.Meta(ge=0)]


class WebhookBody(msgspec.Struct):
    url: str


class SubscriptionBody(msgspec.Struct, kw_only=True):
    type: Literal["webhook", "pull-wake"]
    pattern: str | None = None
    streams: Annotated[list[str], msgspec.Meta(max_length=_MAX_STREAMS)] | None = None
    webhook: WebhookBody | None = None
    wake_stream: str | None = None
    lease_ttl_ms: Annotated[int, msgspec.Meta(ge=MIN_LEASE_TTL_MS, le=MAX_LEASE_TTL_MS)] = (
        DEFAULT_LEASE_TTL_MS
    )
    description: Annotated[str, msgspec.Meta(max_length=_MAX_TEXT)] | None = None


class StreamsBody(msgspec.Struct):
    streams: Annotated[list[str], msgspec.Meta(min_length=1, max_length=_MAX_STREAMS)]


class AckItem(msgspec.Struct, kw_only=True):
    offset: str
    stream: str | None = None
    path: str | None = None  # accepted as a synonym of "stream"


class AckBody(msgspec.Struct, kw_only=True):
    wake_id: str
    generation: Generation
    acks: list[AckItem] = msgspec.field(default_factory=list)
    done: bool = False

    def ack_pairs(self) -> list[tuple[str, str]]:
        """(relative path, offset) per ack item."""
        pairs = []
        for item in self.acks:
            name = item.stream if item.stream is not None else item.path
            if name is None:
                raise InvalidRequest("each ack needs a stream")
            pairs.append((stream_path(name), item.offset))
        return pairs


class ReleaseBody(msgspec.Struct):
    wake_id: str
    generation: Generation


class ClaimBody(msgspec.Struct):
    worker: NonEmpty


BodyT = TypeVar("BodyT", bound=msgspec.Struct)


def decode(body: bytes, kind: type[BodyT]) -> BodyT:
    """Decode a JSON body into ``kind``; InvalidRequest with msgspec's reason otherwise."""
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(str(exc)) from None
    except msgspec.DecodeError:
        raise InvalidRequest("body is not valid JSON") from None
    except RecursionError:
        # msgspec counts nesting (even of fields it ignores) against Python's recursion limit.
        raise InvalidRequest("body is nested too deeply to decode") from None


def subscription_id(raw: str) -> str:
    """Validate a subscription id from the URL."""
    if _ID_RE.fullmatch(raw) is None:
        raise InvalidRequest("subscription id must be 1-256 characters of [A-Za-z0-9._~-]")
    return raw


def stream_path(raw: str) -> str:
    """A stream path, by the rules every stream name follows (``protocol.names``)."""
    try:
        return names.stream_path(raw)
    except BadRequest as exc:
        raise InvalidRequest(str(exc)) from None


def to_spec(sub_id: str, body: SubscriptionBody) -> SubscriptionSpec:
    """The subscription configuration a PUT body describes."""
    kind = SubscriptionType(body.type)
    pattern = body.pattern.strip("/") if body.pattern is not None else None
    if pattern is not None and (problem := pattern_problem(pattern)) is not None:
        raise InvalidRequest(problem)
    streams = tuple(sorted({stream_path(path) for path in body.streams or ()}))
    if pattern is None and not streams:
        raise InvalidRequest("a subscription needs a pattern or a non-empty streams list")
    webhook_url = body.webhook.url if body.webhook is not None else None
    wake_stream = stream_path(body.wake_stream) if body.wake_stream is not None else None
    if kind is SubscriptionType.WEBHOOK:
        if webhook_url is None or wake_stream is not None:
            raise InvalidRequest("a webhook subscription needs webhook.url and no wake_stream")
        if (reason := rejection_reason(webhook_url)) is not None:
            raise WebhookUrlRejected(reason)
    elif wake_stream is None or webhook_url is not None:
        raise InvalidRequest("a pull-wake subscription needs wake_stream and no webhook")
    if wake_stream is not None and wake_stream in streams:
        raise InvalidRequest("the wake stream cannot also be a subscribed stream")
    return SubscriptionSpec(
        id=sub_id,
        type=kind,
        pattern=pattern,
        streams=streams,
        webhook_url=webhook_url,
        wake_stream=wake_stream,
        lease_ttl_ms=body.lease_ttl_ms,
        description=body.description,
    )
