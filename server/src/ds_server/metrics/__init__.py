"""Prometheus metrics: the families and the calls that record them.

The bottom layer: stores, features and routes record through
``recorder`` and import nothing else of the monitoring. Everything that
reads requests or serves the metrics is in ``ds_server.monitoring``.

- ``families``: every metric, on the process's registry;
- ``recorder``: the functions stores and features call (commits, appends,
  deliveries).
"""

from ds_server.metrics.families import REGISTRY
from ds_server.metrics.recorder import appended, delivery, enable, observe_commit

__all__ = ["REGISTRY", "appended", "delivery", "enable", "observe_commit"]
