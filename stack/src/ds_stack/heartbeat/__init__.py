"""The heartbeat producer of the reference stack's dev profile: ``python -m ds_stack.heartbeat``."""

from __future__ import annotations

from ds_stack.heartbeat.producer import Heartbeat, session_event
from ds_stack.heartbeat.settings import Settings

__all__ = ["Heartbeat", "Settings", "session_event"]
