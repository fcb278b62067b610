"""Which build of ds-server is running: plain Python, or compiled with mypyc.

The wheel from ``make wheel`` compiles the modules every request runs (the
list is in ``server/pyproject.toml``); development installs run the same
sources as plain Python.
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from importlib.metadata import PackageNotFoundError, version


def is_compiled() -> bool:
    """True when the request path runs as compiled extension modules."""
    # Imported here: this module is read before the app is built (--version).
    from ds_server.routes import dispatch

    return (dispatch.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))


def describe() -> str:
    """``ds-server 0.1.0 (compiled)`` or ``ds-server 0.1.0 (plain Python)``."""
    try:
        release = version("ds-server")
    except PackageNotFoundError:
        release = "unknown"
    kind = "compiled" if is_compiled() else "plain Python"
    return f"ds-server {release} ({kind})"
