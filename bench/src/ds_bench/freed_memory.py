"""``ds-bench probe freed-memory``: page faults of large bodies, with and without kept memory.

``ds_server.freed_memory`` keeps freed heap memory for reuse so large
request bodies don't fault in fresh pages. Page-fault counts move with the
machine's load (one run in three on a busy machine used to miss a fixed
threshold), so the figure is measured here and not asserted in a test.
Each case runs in a fresh interpreter, since allocator settings are per
process.
"""

from __future__ import annotations

import json
import subprocess
import sys

MIB = 1024 * 1024
KEPT_BYTES = 128 * MIB
# The target: kept memory takes at most a tenth of the faults.
TARGET_RATIO = 0.1

_CHURN = """
import json, resource, sys
from ds_server.freed_memory import keep_freed_memory

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

tuned = keep_freed_memory(int(sys.argv[1]), release_every_secs=3600)
# Like a large body: received in parts, joined, the parts dropped, and the
# joined copy dropped in turn when its stream goes.
def one_body():
    parts = [b"x" * 65536 for _ in range(256)]
    body = b"".join(parts)
    del parts
    return len(body)

one_body()
before = faults()
for _ in range(4):
    one_body()
print(json.dumps({"tuned": tuned, "faults": faults() - before}))
"""


def churn_faults(limit_bytes: int) -> int:
    """Page faults of four 16 MiB bodies in a fresh process keeping ``limit_bytes`` freed."""
    done = subprocess.run(
        [sys.executable, "-c", _CHURN, str(limit_bytes)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    faults: int = json.loads(done.stdout)["faults"]
    return faults


def report() -> str:
    """Faults without and with kept memory, and whether the target is met."""
    default, kept = churn_faults(0), churn_faults(KEPT_BYTES)
    ratio = kept / default if default else float("inf")
    met = "met" if ratio <= TARGET_RATIO else "MISSED"
    return (
        f"four 16 MiB bodies: {default:,} page faults by default, {kept:,} keeping "
        f"{KEPT_BYTES // MIB} MiB freed ({ratio:.3f}x; target <= {TARGET_RATIO}x: {met})"
    )
