"""Callback tokens: self-verifying, bound to subscription and generation, expiring."""

from __future__ import annotations

import pytest
from ds_server.subscriptions.errors import TokenExpired, TokenInvalid
from ds_server.subscriptions.tokens import CallbackTokens

NOW = 1_732_500_000.0


def test_mint_then_verify_returns_the_generation() -> None:
    tokens = CallbackTokens(secret=b"k" * 32)
    token = tokens.mint("sub-1", 7, NOW)
    assert tokens.verify("sub-1", token, NOW + 10) == 7


def test_tokens_are_unique_per_mint() -> None:
    tokens = CallbackTokens()
    assert tokens.mint("s", 1, NOW) != tokens.mint("s", 1, NOW)


def test_token_of_another_subscription_is_invalid() -> None:
    tokens = CallbackTokens()
    with pytest.raises(TokenInvalid):
        tokens.verify("sub-2", tokens.mint("sub-1", 1, NOW), NOW)


def test_token_of_another_server_is_invalid() -> None:
    token = CallbackTokens().mint("s", 1, NOW)
    with pytest.raises(TokenInvalid):
        CallbackTokens().verify("s", token, NOW)


@pytest.mark.parametrize("token", ["", "garbage", "1.2.3.4", "1.99.00000000000000zz." + "0" * 64])
def test_malformed_token_is_invalid(token: str) -> None:
    with pytest.raises(TokenInvalid):
        CallbackTokens().verify("s", token, NOW)


def test_tampered_generation_is_invalid() -> None:
    tokens = CallbackTokens()
    token = tokens.mint("s", 1, NOW)
    with pytest.raises(TokenInvalid):
        tokens.verify("s", "2" + token[1:], NOW)


def test_expired_token() -> None:
    tokens = CallbackTokens(lifetime_secs=60)
    token = tokens.mint("s", 1, NOW)
    with pytest.raises(TokenExpired):
        tokens.verify("s", token, NOW + 61)
