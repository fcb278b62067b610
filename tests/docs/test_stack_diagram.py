"""docs/img/stack.svg names only components, ports and backends that exist, and all the backends."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from doc_facts import ROOT
from ds_settings import defaults

SVG = ROOT / "docs" / "img" / "stack.svg"
STORE_MODES = {"sqlite", "file-durable", "file-fast", "memory", "postgres"}
# Electric's port: its own default, outside the stack's (ELECTRIC_URL in compose).
ELECTRIC_PORT = 3000


def texts() -> str:
    tree = ET.parse(SVG)
    return "\n".join(e.text or "" for e in tree.iter() if e.tag.endswith("text"))


def test_every_port_the_diagram_names_is_a_port_of_the_stack() -> None:
    ports = {int(p) for p in re.findall(r":(\d{4,5})\b", texts())}
    known = {
        defaults.GATEWAY_PORT,
        defaults.SERVER_PORT,
        defaults.ADMIN_PORT,
        defaults.POSTGRES_PORT,
        defaults.SYNC_PORT,
        defaults.SERVER_METRICS_PORT,
        ELECTRIC_PORT,
    }
    assert ports
    assert ports <= known
    # Every listener of the stack is drawn.
    assert known <= ports


def test_the_store_box_lists_every_backend() -> None:
    text = texts()
    assert all(mode in text for mode in STORE_MODES)
    settings = (ROOT / "server" / "src" / "ds_server" / "settings.py").read_text(encoding="utf-8")
    assert all(f"`{mode}`" in settings for mode in STORE_MODES)


def test_every_component_drawn_exists() -> None:
    text = texts()
    for name in ("Envoy", "ds-server", "ds-sync", "ds-spark", "Postgres", "heartbeat", "Electric"):
        assert name in text
    for table in re.findall(r"\b(session_events|sync_checkpoints|sync_mirrors|items)\b", text):
        migrations = (ROOT / "schema" / "src" / "ds_schema" / "migrations").glob("*.sql")
        assert any(table in path.read_text(encoding="utf-8") for path in migrations), table
