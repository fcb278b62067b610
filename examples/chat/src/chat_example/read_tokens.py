"""Read tokens for the browser: short-lived, read-only, for one generation's stream.

Here they are signed with the dev stack's committed test-only key
(``ds_proxy.tokens``), which the dev gateway trusts. A production backend
signs them with a key of its own whose public half the gateway's JWKS lists
(``remote_jwks`` in ``envoy.prod.yaml``), or asks its identity provider for
a down-scoped token (OAuth token exchange); the claims are the same.
"""

from __future__ import annotations

from ds_proxy.tokens import TokenSpec, mint

READ_TOKEN_SECS = 300
SUBJECT = "chat-example-reader"


def read_token(stream: str) -> str:
    """A token that reads stream ``stream`` (its whole name) for five minutes, and nothing else."""
    return mint(TokenSpec(sub=SUBJECT, read=(stream,), write=(), expires_in=READ_TOKEN_SECS))
