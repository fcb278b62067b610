"""Errors of the subscription API, each with its HTTP status and wire code.

The API has its own JSON error shape, ``{"error": {"code", "message", ...}}``;
the route layer renders these, so the domain code only raises.
"""

from __future__ import annotations


class SubscriptionError(Exception):
    """Base of every error the subscription API answers with on purpose."""

    status = 400
    code = "INVALID_REQUEST"
    message = "invalid request"

    def __init__(self, message: str | None = None, **extra: object) -> None:
        super().__init__(message or self.message)
        self.message = message or self.message
        # Extra members of the error object, e.g. ``current_holder``.
        self.extra = extra


class InvalidRequest(SubscriptionError):
    pass


class WebhookUrlRejected(SubscriptionError):
    code = "WEBHOOK_URL_REJECTED"
    message = "webhook URL is not allowed"


class SubscriptionNotFound(SubscriptionError):
    status = 404
    code = "SUBSCRIPTION_NOT_FOUND"
    message = "subscription not found"


class SubscriptionExists(SubscriptionError):
    status = 409
    code = "SUBSCRIPTION_ALREADY_EXISTS"
    message = "subscription exists with a different configuration"


class TokenInvalid(SubscriptionError):
    status = 401
    code = "TOKEN_INVALID"
    message = "missing or invalid bearer token"


class TokenExpired(SubscriptionError):
    status = 401
    code = "TOKEN_EXPIRED"
    message = "bearer token has expired"


class Fenced(SubscriptionError):
    status = 409
    code = "FENCED"
    message = "token, wake_id or generation is not current"


class AlreadyClaimed(SubscriptionError):
    status = 409
    code = "ALREADY_CLAIMED"
    message = "another worker holds the lease"


class NoPendingWork(SubscriptionError):
    status = 409
    code = "NO_PENDING_WORK"
    message = "no linked stream has unacknowledged data"


class InvalidAckOffset(SubscriptionError):
    status = 409
    code = "INVALID_OFFSET"
    message = "invalid ack offset"


class WakeStreamInvalid(SubscriptionError):
    status = 409
    code = "WAKE_STREAM_INVALID"
    message = "wake_stream must be an open application/json stream"


class UnsupportedMediaType(SubscriptionError):
    status = 415
    code = "UNSUPPORTED_MEDIA_TYPE"
    message = "request body must be application/json"


class StorageUnavailable(SubscriptionError):
    status = 503
    code = "STORAGE_UNAVAILABLE"
    message = "subscription storage is unavailable; retry"
