"""``python -m ds_stack.heartbeat``: run the heartbeat producer until SIGTERM or Ctrl-C."""

from __future__ import annotations

import signal
import sys
import threading

from ds_stack.heartbeat.producer import Heartbeat
from ds_stack.heartbeat.settings import SettingsError, load_settings


def main() -> None:
    """Tick until a signal says stop; a bad setting is one line and exit status 1."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        sys.exit(f"ds-heartbeat: {exc}")
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    Heartbeat(settings, stop).run()


if __name__ == "__main__":
    main()
