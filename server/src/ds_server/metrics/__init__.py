"""Prometheus metrics: the families and the calls that record them.

The bottom layer, what the server records into: stores, features and
routes record through ``recorder`` and import nothing of
``ds_server.observability``, which watches requests, serves these families
on ``/metrics`` and writes the logs.

- ``families``: every metric, on the process's registry;
- ``recorder``: the functions stores and features call (commits, appends,
  deliveries).
"""

from ds_server.metrics.families import REGISTRY
from ds_server.metrics.recorder import appended, delivery, enable, observe_commit

__all__ = ["REGISTRY", "appended", "delivery", "enable", "observe_commit"]
