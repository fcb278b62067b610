"""Bucket and stream scopes granted by a token's ``ds`` claim.

The claim is ``{"read": [name, ...], "write": [name, ...]}``. A name without
``/`` is a bucket: it grants every stream in it and the bucket itself
(metadata, listing); a name with ``/`` is one stream (``chat/gen-1``): it
grants requests addressed to exactly that stream and nothing else (no
listing, no other stream of its bucket); ``"*"`` grants everything. Read and
write are independent: a token that may append to a bucket may not read it
unless ``read`` names it too.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

WILDCARD = "*"


class Mode(enum.Enum):
    READ = "read"
    WRITE = "write"


class MalformedScopes(ValueError):
    """The scope claim is present but not an object of string lists."""


@dataclass(frozen=True, slots=True)
class Access:
    """One permission a request needs: ``mode`` on ``bucket`` (None: only ``*`` grants it).

    ``stream``: the one stream the request addresses (its name, which starts
    with the bucket), when it addresses one; a scope naming that stream
    grants it too.
    """

    bucket: str | None
    mode: Mode
    stream: str | None = None


@dataclass(frozen=True, slots=True)
class Scopes:
    """The buckets and streams a token may read and write."""

    read: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()

    @classmethod
    def from_claim(cls, claim: object) -> Scopes:
        """Parse the claim value; absent (None) grants nothing, malformed raises."""
        if claim is None:
            return cls()
        if not isinstance(claim, dict):
            raise MalformedScopes("the scope claim must be an object")
        return cls(read=_buckets(claim, "read"), write=_buckets(claim, "write"))

    def allows(self, access: Access) -> bool:
        """Whether these scopes grant ``access``."""
        granted = self.read if access.mode is Mode.READ else self.write
        if WILDCARD in granted:
            return True
        if access.bucket is None:
            return False
        return access.bucket in granted or (access.stream is not None and access.stream in granted)


def _buckets(claim: dict[object, object], key: str) -> frozenset[str]:
    value = claim.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise MalformedScopes(f"the scope claim's {key!r} must be a list of strings")
    return frozenset(item for item in value if isinstance(item, str))
