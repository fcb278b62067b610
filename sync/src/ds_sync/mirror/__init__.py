"""Postgres → stream: each mirrored table's committed changes into ``pg-{table}``, exactly once.

The message format is ``shared/spec/sessions.md`` §4; how it works is in
``docs/sync.md``. ``TableMirror`` runs one table; a ``ChangeFeed`` (native
logical decoding, or Electric's Shape API) gives it the changes.
"""

from ds_sync.mirror.feed import FEEDS, ChangeFeed, FeedContext, feed_class
from ds_sync.mirror.model import Change, Control, FeedBatch, TableRefused
from ds_sync.mirror.runner import TableMirror
from ds_sync.mirror.state import MirrorStore

__all__ = [
    "FEEDS",
    "Change",
    "ChangeFeed",
    "Control",
    "FeedBatch",
    "FeedContext",
    "MirrorStore",
    "TableMirror",
    "TableRefused",
    "feed_class",
]
