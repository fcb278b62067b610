"""Which streams a subscription covers, and from which ack position."""

from __future__ import annotations

from ds_server.subscriptions import membership
from ds_server.subscriptions.model import (
    NOTHING_ACKED,
    Subscription,
    SubscriptionSpec,
    SubscriptionType,
)


def _sub(pattern: str | None = "events/*") -> Subscription:
    spec = SubscriptionSpec(
        id="s",
        type=SubscriptionType.WEBHOOK,
        pattern=pattern,
        streams=(),
        webhook_url="http://127.0.0.1/hook",
        wake_stream=None,
        lease_ttl_ms=1000,
        description=None,
    )
    return Subscription(spec=spec, root_url="http://h/v1/stream", created_at=0.0)


def test_first_data_on_a_glob_match_links_from_the_beginning() -> None:
    sub = _sub()
    assert membership.link_on_data(sub, "events/x")
    link = sub.links["events/x"]
    assert (link.glob, link.explicit, link.acked) == (True, False, NOTHING_ACKED)


def test_data_elsewhere_is_ignored() -> None:
    sub = _sub()
    assert not membership.link_on_data(sub, "other/x")
    assert not membership.link_on_data(sub, "events/x/y")
    assert sub.links == {}


def test_existing_streams_are_adopted_at_their_tail() -> None:
    sub = _sub()
    membership.link_existing(sub, "events/old", 42)
    membership.link_existing(sub, "other/old", 42)
    assert sub.links["events/old"].acked == 42
    assert "other/old" not in sub.links


def test_explicit_link_starts_at_tail_or_zero() -> None:
    sub = _sub(pattern=None)
    membership.link_explicit(sub, "manual/a", 7)
    membership.link_explicit(sub, "manual/b", None)
    assert sub.links["manual/a"].acked == 7
    assert sub.links["manual/b"].acked == 0
    assert sub.links["manual/a"].link_type == "explicit"


def test_explicit_on_top_of_glob_keeps_the_ack_and_survives_unlinking() -> None:
    sub = _sub()
    membership.link_on_data(sub, "events/x")
    sub.links["events/x"].acked = 9
    membership.link_explicit(sub, "events/x", 20)
    assert sub.links["events/x"].link_type == "explicit"
    assert sub.links["events/x"].acked == 9
    membership.unlink_explicit(sub, "events/x")
    assert sub.links["events/x"].link_type == "glob"
    assert sub.links["events/x"].acked == 9


def test_explicit_link_of_a_glob_match_remembers_the_match() -> None:
    sub = _sub()
    membership.link_explicit(sub, "events/y", 3)
    membership.unlink_explicit(sub, "events/y")
    assert sub.links["events/y"].acked == 3


def test_unlinking_explicit_only_removes_it() -> None:
    sub = _sub(pattern=None)
    membership.link_explicit(sub, "manual/b", None)
    membership.unlink_explicit(sub, "manual/b")
    membership.unlink_explicit(sub, "never/linked")
    assert sub.links == {}


def test_deleted_stream_drops_glob_and_resets_explicit() -> None:
    sub = _sub()
    membership.link_on_data(sub, "events/x")
    membership.link_explicit(sub, "manual/a", 50)
    membership.forget_stream(sub, "events/x")
    membership.forget_stream(sub, "manual/a")
    assert "events/x" not in sub.links
    assert sub.links["manual/a"].acked == 0


def test_every_change_is_marked_unsaved_and_nothing_else() -> None:
    sub = _sub()
    membership.link_on_data(sub, "other/x")
    membership.unlink_explicit(sub, "never/linked")
    membership.forget_stream(sub, "never/linked")
    assert sub.unsaved == set()
    membership.link_on_data(sub, "events/x")
    membership.link_explicit(sub, "manual/a", 5)
    membership.link_existing(sub, "events/old", 3)
    assert sub.unsaved == {"events/x", "manual/a", "events/old"}
    sub.unsaved.clear()
    # Repeats change nothing.
    membership.link_on_data(sub, "events/x")
    membership.link_explicit(sub, "manual/a", 9)
    membership.link_existing(sub, "events/old", 7)
    assert sub.unsaved == set()
    membership.unlink_explicit(sub, "manual/a")
    membership.forget_stream(sub, "events/x")
    membership.unlink(sub, "events/old")
    assert sub.unsaved == {"manual/a", "events/x", "events/old"}
    assert sub.links == {}
