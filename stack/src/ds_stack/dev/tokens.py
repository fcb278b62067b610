"""Tokens for the dev stack, minted by ``ds-token`` with the committed test-only key.

ds_stack runs ``python -m ds_proxy.token_cli`` rather than importing ds_proxy
(the launcher's package depends on no component). The mints run at once, in
parallel with the components starting.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TokenRequest:
    """One token: its subject and the buckets it reads and writes (``*``: all)."""

    sub: str
    read: str
    write: str
    ttl_secs: int

    def argv(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "ds_proxy.token_cli",
            *("--sub", self.sub),
            *("--read", self.read),
            *("--write", self.write),
            *("--ttl", str(self.ttl_secs)),
        ]


class PendingTokens:
    """Mints started in the background; ``result()`` waits for them."""

    def __init__(self, requests: dict[str, TokenRequest]) -> None:
        self._running = {
            name: subprocess.Popen(
                request.argv(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for name, request in requests.items()
        }

    def result(self) -> dict[str, str]:
        """Every token by name; RuntimeError if a mint failed."""
        tokens = {}
        for name, process in self._running.items():
            out, err = process.communicate(timeout=60)
            if process.returncode != 0:
                raise RuntimeError(f"ds-token failed minting the {name} token: {err.strip()}")
            tokens[name] = out.strip()
        return tokens

    def cancel(self) -> None:
        for process in self._running.values():
            if process.poll() is None:
                process.kill()
            process.communicate()
