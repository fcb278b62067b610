"""Each component's options carry the settings it reads, unchanged."""

from __future__ import annotations

import os

from ds_sync.options import component_options
from ds_sync.settings import Settings
from pydantic import SecretStr


def _settings(**values: object) -> Settings:
    given: dict[str, object] = {
        "server_url": "http://ds-server",
        "postgres_url": "postgresql://db/sync",
        "streams": "a/*,b/one",
        "name": "group-1",
        "instance": "host-a",
    }
    return Settings(**(given | values))  # type: ignore[arg-type]


def test_the_readers_get_the_patterns_and_their_limits() -> None:
    settings = _settings(max_readers=7, idle_secs=3.0, max_batch_rows=99)
    readers = component_options(settings).readers
    assert readers.patterns == settings.streams
    assert (readers.max_readers, readers.idle_secs, readers.max_batch_rows) == (7, 3.0, 99)
    assert readers.commit_interval_secs == settings.commit_interval_secs


def test_the_leases_get_the_group_this_instance_and_the_shards() -> None:
    leases = component_options(_settings(shards=16, lease_ttl_secs=2.0)).leases
    assert (leases.group, leases.instance, leases.shards, leases.ttl_secs) == (
        "group-1",
        "host-a",
        16,
        2.0,
    )


def test_an_unnamed_instance_is_named_once_for_every_component() -> None:
    options = component_options(_settings(instance=""))
    assert options.leases.instance == options.mirror.instance
    assert options.leases.instance.endswith(f"-{os.getpid()}")


def test_the_mirror_gets_its_feed_and_the_feed_its_slot_group_and_electric() -> None:
    settings = _settings(
        electric_url="http://electric:3000/",
        electric_secret=SecretStr("s"),
        poll_secs=0.5,
        feed_batch_rows=10,
        slot_warn_mb=64,
        max_slot_wal_keep_size="1GB",
        post_max_bytes=4096,
        compact_after_bytes=0,
    )
    mirror = component_options(settings).mirror
    assert (mirror.postgres_url, mirror.feed) == ("postgresql://db/sync", "electric")
    assert (mirror.post_max_bytes, mirror.compact_after_bytes) == (4096, 0)
    feed = mirror.feed_options
    assert (feed.group, feed.poll_secs, feed.batch_rows, feed.slot_warn_mb) == (
        "group-1",
        0.5,
        10,
        64,
    )
    assert feed.max_slot_wal_keep_size == "1GB"
    assert feed.electric_url == "http://electric:3000"
    assert feed.electric_secret is not None
    assert feed.electric_secret.get_secret_value() == "s"
