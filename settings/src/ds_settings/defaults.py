"""The stack's defaults: the reference stack's port map, its database and the URLs of them.

Every member's settings and launchers take these from here, so a default
changes in one place (docs/configuration.md lists them).
"""

from __future__ import annotations

from urllib.parse import quote

LOOPBACK = "127.0.0.1"

# The reference stack's port map.
GATEWAY_PORT = 8080
SERVER_PORT = 4437
ADMIN_PORT = 9901
POSTGRES_PORT = 54321
# ds-sync's /metrics and /healthz.
SYNC_PORT = 4438
# ds-server's /metrics listener.
SERVER_METRICS_PORT = 9437

# The stack's database, and the superuser of the embedded (or containerised) Postgres.
DATABASE = "durable_streams"
POSTGRES_USER = "postgres"
POSTGRES_PASSWORD = "password"  # the local stack's, documented as such
# Where ds-server's postgres store keeps its tables: a schema of the stack's database.
STORE_SCHEMA = "ds_server"


def server_url(port: int = SERVER_PORT, host: str = LOOPBACK) -> str:
    """ds-server's base URL (plain http: it listens behind the gateway)."""
    return f"http://{host}:{port}"


def postgres_url(
    port: int = POSTGRES_PORT,
    host: str = LOOPBACK,
    database: str = DATABASE,
    user: str = POSTGRES_USER,
    password: str = POSTGRES_PASSWORD,
) -> str:
    """The libpq URL of a database of the stack's Postgres."""
    credentials = f"{quote(user, safe='')}:{quote(password, safe='')}"
    return f"postgresql://{credentials}@{host}:{port}/{quote(database, safe='')}"


# What a member reaches when nothing is set: the local stack (`make dev`).
SERVER_URL = server_url()
POSTGRES_URL = postgres_url()
