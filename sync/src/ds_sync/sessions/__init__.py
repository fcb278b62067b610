"""Streams → Postgres: session streams into ``session_events``, exactly once across crashes.

The contract (event shapes, tables) is ``shared/spec/sessions.md`` §2 and §3; how
it works is in ``docs/sync.md``. ``Scanner`` lists the synced streams and
``Wakes`` hears of new ones and new data (pull-wake subscriptions);
``Streams`` runs a reader (``tailer``) per stream and one ``Writer`` that
commits every stream's reads with its checkpoint in one transaction per
tick. Several processes share the streams by shard: ``ShardLeases`` holds
the leases, ``Sightings`` passes new data on to the shard's holder.
"""

from ds_sync.sessions.discovery import Scanner
from ds_sync.sessions.leases import ShardLeases
from ds_sync.sessions.sightings import Sightings
from ds_sync.sessions.streams import Streams
from ds_sync.sessions.wakes import Wakes

__all__ = ["Scanner", "ShardLeases", "Sightings", "Streams", "Wakes"]
