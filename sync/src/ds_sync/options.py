"""Each component's part of the settings, built once when ds-sync starts.

The components never see ``Settings`` whole: each gets a small frozen value
(or a few arguments) of what it reads, from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_sync.mirror.options import FeedOptions, MirrorOptions
from ds_sync.sessions.options import LeaseOptions, ReaderOptions

if TYPE_CHECKING:
    from ds_sync.settings import Settings


@dataclass(frozen=True, slots=True)
class Options:
    """What ``ds_sync.service`` hands each component."""

    readers: ReaderOptions
    leases: LeaseOptions
    mirror: MirrorOptions


def component_options(settings: Settings) -> Options:
    """Every component's options from ``settings`` (the instance name is fixed here, once)."""
    instance = settings.instance_name
    return Options(
        readers=ReaderOptions(
            patterns=settings.streams,
            max_readers=settings.max_readers,
            idle_secs=settings.idle_secs,
            max_batch_rows=settings.max_batch_rows,
            commit_interval_secs=settings.commit_interval_secs,
        ),
        leases=LeaseOptions(
            group=settings.name,
            instance=instance,
            shards=settings.shards,
            ttl_secs=settings.lease_ttl_secs,
        ),
        mirror=MirrorOptions(
            postgres_url=settings.postgres_url,
            instance=instance,
            feed=settings.change_feed,
            post_max_bytes=settings.post_max_bytes,
            compact_after_bytes=settings.compact_after_bytes,
            feed_options=FeedOptions(
                group=settings.name,
                poll_secs=settings.poll_secs,
                batch_rows=settings.feed_batch_rows,
                max_slot_wal_keep_size=settings.max_slot_wal_keep_size,
                slot_warn_mb=settings.slot_warn_mb,
                electric_url=settings.electric_url,
                electric_secret=settings.electric_secret,
            ),
        ),
    )
