"""Freed memory is kept for reuse, and handed back to the system on request.

Allocator settings are per process, so each case runs in a fresh interpreter
and counts resident pages, not time. How many page faults kept memory saves
depends on the machine's load, so it is measured by ``ds-bench probe
freed-memory``, not asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys

from ds_server.freed_memory import keep_freed_memory

MIB = 1024 * 1024

_CHURN = """
import json, sys
MIB = 2**20
from ds_server.freed_memory import keep_freed_memory, release_freed_memory

def resident_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20

tuned = keep_freed_memory(int(sys.argv[1]), release_every_secs=3600)
# Like a large body: received in parts, joined, the parts dropped, and the
# joined copy dropped in turn when its stream goes.
def one_body():
    parts = [b"x" * 65536 for _ in range(256)]
    body = b"".join(parts)
    del parts
    return len(body)

for _ in range(5):
    one_body()
held = [b"x" * MIB for _ in range(64)]
del held
kept = resident_mib()
release_freed_memory()
print(json.dumps({"tuned": tuned, "kept": kept,
                  "released": resident_mib()}))
"""


def _churn(limit_bytes: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHURN, str(limit_bytes)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def test_the_allocator_is_tuned_only_with_a_limit() -> None:
    assert not _churn(0)["tuned"]
    assert _churn(128 * MIB)["tuned"]


def test_releasing_hands_kept_memory_back() -> None:
    figures = _churn(128 * MIB)
    assert figures["kept"] - figures["released"] > 32


def test_a_limit_of_zero_leaves_the_allocator_alone() -> None:
    assert keep_freed_memory(0) is False
