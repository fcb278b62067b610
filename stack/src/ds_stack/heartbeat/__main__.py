"""``python -m ds_stack.heartbeat``: run the heartbeat producer until SIGTERM or Ctrl-C."""

from __future__ import annotations

import signal
import threading

from ds_stack.heartbeat.producer import Heartbeat
from ds_stack.heartbeat.settings import Settings


def main() -> None:
    """Tick until a signal says stop."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    Heartbeat(Settings(), stop).run()


if __name__ == "__main__":
    main()
