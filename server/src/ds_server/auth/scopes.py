"""Bucket scopes granted by a token's ``ds`` claim.

The claim is ``{"read": [bucket, ...], "write": [bucket, ...]}``; ``"*"`` in a
list grants every bucket. Read and write are independent: a token that may
append to a bucket may not read it unless ``read`` names it too.
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
    """One permission a request needs: ``mode`` on ``bucket`` (None: only ``*`` grants it)."""

    bucket: str | None
    mode: Mode


@dataclass(frozen=True, slots=True)
class Scopes:
    """The buckets a token may read and write."""

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
        return access.bucket is not None and access.bucket in granted


def _buckets(claim: dict[object, object], key: str) -> frozenset[str]:
    value = claim.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise MalformedScopes(f"the scope claim's {key!r} must be a list of strings")
    return frozenset(item for item in value if isinstance(item, str))
