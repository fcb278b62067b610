"""The one process launcher: ``make dev``, the tests, the e2e suite and the benchmarks.

A ``ProcessSpec`` says what to run (argv, environment, log file) and how to
tell it is ready (an HTTP URL answering 200, a callable, or a line in its
log); a ``Process`` starts it (refusing when a port it needs is taken,
naming the holder), awaits readiness (from the child's own socket, never a
stranger's), and stops it (its stop signal, then SIGKILL), kills it
(SIGKILL) or restarts it. With a ``LogRotation`` the output goes through the
launcher, which starts a new log file when the current one is full.
"""

from __future__ import annotations

from ds_stack.launcher.log_pump import LogRotation
from ds_stack.launcher.process import LaunchError, Process, signal_name
from ds_stack.launcher.readiness import http_ok, http_status
from ds_stack.launcher.service import Service
from ds_stack.launcher.spec import ProcessSpec, port_of
from ds_stack.ports import PortInUse, free_port

__all__ = [
    "LaunchError",
    "LogRotation",
    "PortInUse",
    "Process",
    "ProcessSpec",
    "Service",
    "free_port",
    "http_ok",
    "http_status",
    "port_of",
    "signal_name",
]
