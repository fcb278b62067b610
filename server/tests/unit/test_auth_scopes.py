"""ds_server.auth.scopes: parsing the ds claim and granting accesses."""

from __future__ import annotations

import pytest
from ds_server.auth import Access, MalformedScopes, Mode, Scopes


def test_absent_claim_grants_nothing() -> None:
    scopes = Scopes.from_claim(None)
    assert not scopes.allows(Access("chat", Mode.READ))
    assert not scopes.allows(Access("chat", Mode.WRITE))


def test_lists_grant_exactly_their_buckets() -> None:
    scopes = Scopes.from_claim({"read": ["chat", "agents"], "write": ["chat"]})
    assert scopes.allows(Access("chat", Mode.READ))
    assert scopes.allows(Access("agents", Mode.READ))
    assert scopes.allows(Access("chat", Mode.WRITE))
    assert not scopes.allows(Access("agents", Mode.WRITE))
    assert not scopes.allows(Access("chatroom", Mode.READ))
    assert not scopes.allows(Access("Chat", Mode.READ))


def test_write_does_not_imply_read() -> None:
    scopes = Scopes.from_claim({"write": ["chat"]})
    assert scopes.allows(Access("chat", Mode.WRITE))
    assert not scopes.allows(Access("chat", Mode.READ))


def test_wildcard_grants_every_bucket_and_bucketless_paths() -> None:
    scopes = Scopes.from_claim({"read": ["*"]})
    assert scopes.allows(Access("anything", Mode.READ))
    assert scopes.allows(Access(None, Mode.READ))
    assert not scopes.allows(Access("anything", Mode.WRITE))


def test_bucketless_access_needs_the_wildcard() -> None:
    assert not Scopes.from_claim({"read": ["chat"]}).allows(Access(None, Mode.READ))


def test_missing_list_is_empty() -> None:
    assert Scopes.from_claim({}) == Scopes()


@pytest.mark.parametrize(
    "claim",
    ["chat", ["chat"], {"read": "chat"}, {"read": [1]}, {"write": None}, {"read": [["chat"]]}],
)
def test_malformed_claims_raise(claim: object) -> None:
    with pytest.raises(MalformedScopes):
        Scopes.from_claim(claim)


def test_a_stream_scope_grants_that_stream_alone() -> None:
    scopes = Scopes.from_claim({"read": ["chat/gen-1"]})
    assert scopes.allows(Access("chat", Mode.READ, "chat/gen-1"))
    assert not scopes.allows(Access("chat", Mode.READ, "chat/gen-2"))
    assert not scopes.allows(Access("chat", Mode.READ))  # the bucket itself, a listing
    assert not scopes.allows(Access("chat", Mode.WRITE, "chat/gen-1"))
    assert not scopes.allows(Access(None, Mode.READ, "chat/gen-1"))
    assert Scopes.from_claim({"write": ["chat/gen-1"]}).allows(
        Access("chat", Mode.WRITE, "chat/gen-1")
    )
