"""Keep freed heap memory for reuse; give it back to the system on a timer.

By default glibc hands freed memory at the top of its heap back to the
system once more than a few MiB of it are free, and serves large blocks from
fresh mappings that it unmaps on free. A server that receives large bodies
then faults in fresh pages for every MiB it takes: with 1 MiB appends ~1.5
page faults per page stored, about half the server's CPU. Keeping freed
memory for reuse, and releasing what stays unused every few seconds (the
decay jemalloc does), removes most of those faults. Peak memory is
unchanged: only memory that was in use a moment ago is kept.

Only glibc has these knobs; elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

# From glibc's <malloc.h>.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# glibc's ceiling for M_MMAP_THRESHOLD on 64-bit systems (HEAP_MAX_SIZE / 2).
_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024
# How often kept memory that nothing reused goes back to the system.
RELEASE_INTERVAL_SECS = 10.0


def _glibc() -> ctypes.CDLL | None:
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (ValueError, OSError):
        return None
    return ctypes.CDLL("libc.so.6")


def keep_freed_memory(limit_bytes: int, release_every_secs: float = RELEASE_INTERVAL_SECS) -> bool:
    """Keep up to ``limit_bytes`` of freed memory, released every ``release_every_secs``.

    Returns whether the allocator was tuned (glibc, and a limit above 0).
    """
    if limit_bytes <= 0:
        return False
    libc = _glibc()
    if libc is None:
        return False
    # Setting either threshold stops glibc from adjusting them itself, so set
    # both: blocks up to 32 MiB come from the heap, where freed ones are reused.
    libc.mallopt(_M_MMAP_THRESHOLD, min(limit_bytes, _MMAP_THRESHOLD_MAX))
    libc.mallopt(_M_TRIM_THRESHOLD, limit_bytes)
    threading.Thread(
        target=_release_forever,
        args=(libc, release_every_secs),
        name="ds-release-freed-memory",
        daemon=True,
    ).start()
    return True


def release_freed_memory() -> None:
    """Give freed memory back to the system now (a no-op off glibc)."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


def _release_forever(libc: ctypes.CDLL, every_secs: float) -> None:
    # ctypes lets go of the GIL during the call, so serving goes on meanwhile.
    while True:
        time.sleep(every_secs)
        libc.malloc_trim(0)
