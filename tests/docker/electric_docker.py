"""What the Docker tests run: the images, and Electric's settings."""

from __future__ import annotations

from dataclasses import dataclass

from ds_stack.postgres.docker import PASSWORD, USER

# Electric's image as docker-compose.yml pins it, and the Postgres it is tested with.
ELECTRIC_IMAGE = "electricsql/electric:1.4.2"
POSTGRES_IMAGE = "postgres:17"
DATABASE = "durable_streams"
ELECTRIC_SECRET = "test-electric-secret"


@dataclass(frozen=True)
class ElectricStack:
    postgres_url: str  # from this machine
    electric_url: str


def electric_environment(postgres_port: int, electric_port: int) -> dict[str, str]:
    """Electric's settings: on the host's network, reaching Postgres's published port."""
    return {
        "DATABASE_URL": f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{postgres_port}/"
        f"{DATABASE}?sslmode=disable",
        "ELECTRIC_SECRET": ELECTRIC_SECRET,
        "ELECTRIC_PORT": str(electric_port),
        "ELECTRIC_STORAGE_DIR": "/tmp/electric",
    }
