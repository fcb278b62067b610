"""The PostgreSQL versions ds-sync and ds-spark run on: 14 and newer.

Tested on 14, 15, 16, 17 and 18 (``make test-postgres-matrix``). An older
server is refused at start, in one line naming its version and the minimum.
"""

from __future__ import annotations

MINIMUM_MAJOR = 14


def version_text(server_version_num: int) -> str:
    """``150018`` -> ``15.18``; ``90624`` -> ``9.6.24`` (the numbering before 10)."""
    major = server_version_num // 10000
    if major >= 10:
        return f"{major}.{server_version_num % 10000}"
    return f"{major}.{server_version_num // 100 % 100}.{server_version_num % 100}"


def unsupported(server_version_num: int, program: str = "ds-sync") -> str | None:
    """Why ``program`` can't use this server, or None (also when the version is unknown: 0)."""
    if server_version_num == 0 or server_version_num >= MINIMUM_MAJOR * 10000:
        return None
    return (
        f"PostgreSQL {version_text(server_version_num)} is not supported: "
        f"{program} needs PostgreSQL {MINIMUM_MAJOR} or newer"
    )
