"""Bearer tokens for callbacks and pull-wake acks, verifiable without storage.

A token is ``<generation>.<expires>.<nonce>.<mac>`` where the MAC binds the
first three parts to the subscription id under the server's secret. A valid
MAC proves the server issued the token, so a stale one can be answered with
FENCED (it belongs to an older wake) rather than TOKEN_INVALID. The secret is
kept in subscription storage, so this holds across restarts too.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from ds_server.subscriptions.errors import TokenExpired, TokenInvalid

TOKEN_LIFETIME_SECS = 3600
_TOKEN_RE = re.compile(r"(0|[1-9][0-9]{0,15})\.([0-9]{1,12})\.([0-9a-f]{16})\.([0-9a-f]{64})")


class CallbackTokens:
    """Mints and verifies wake tokens with one secret (random until ``use_secret``)."""

    def __init__(self, secret: bytes | None = None, lifetime_secs: int = TOKEN_LIFETIME_SECS):
        self._secret = secret or secrets.token_bytes(32)
        self._lifetime = lifetime_secs

    def use_secret(self, secret: bytes) -> None:
        """Mint and verify with ``secret`` from now on (the stored one, at start)."""
        self._secret = secret

    def mint(self, subscription_id: str, generation: int, now: float) -> str:
        """A token for wake ``generation`` of the subscription, valid from ``now``."""
        claims = f"{generation}.{int(now) + self._lifetime}.{secrets.token_hex(8)}"
        return f"{claims}.{self._mac(subscription_id, claims)}"

    def verify(self, subscription_id: str, token: str, now: float) -> int:
        """The generation ``token`` was minted for; TokenInvalid/TokenExpired otherwise."""
        match = _TOKEN_RE.fullmatch(token)
        if match is None:
            raise TokenInvalid("malformed bearer token")
        claims = token[: match.start(4) - 1]
        if not hmac.compare_digest(match.group(4), self._mac(subscription_id, claims)):
            raise TokenInvalid("bearer token was not issued for this subscription")
        if int(match.group(2)) < now:
            raise TokenExpired()
        return int(match.group(1))

    def _mac(self, subscription_id: str, claims: str) -> str:
        message = f"{subscription_id}:{claims}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()
