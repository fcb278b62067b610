"""A log line when a job's step starts and when it ends, with its duration."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

log = logging.getLogger("ds_spark")


@contextmanager
def step(name: str) -> Iterator[None]:
    """Log ``name ...`` now and ``name: done in Ns`` when the block ends without error."""
    started = time.monotonic()
    log.info("%s ...", name)
    yield
    log.info("%s: done in %.1fs", name, time.monotonic() - started)
