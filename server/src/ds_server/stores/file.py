"""The file backends: an append-only log per stream plus a metadata catalog, on local disk.

``file-durable`` acknowledges an append only once its bytes, and the
producer state that guards them, are fsynced (concurrent appends share
fsyncs). ``file-fast`` writes the same files without fsync: it survives a
killed process, not a power cut. See ``_file/persistence.py`` for the layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._file import FilePersistence

if TYPE_CHECKING:
    from ds_server.settings import Settings

MAX_OPEN_FILES = 512


def _from_settings(settings: Settings, *, durable: bool) -> FilePersistence:
    return FilePersistence(
        settings.storage.data_dir / "files", durable=durable, max_open_files=MAX_OPEN_FILES
    )


def durable_from_settings(settings: Settings) -> FilePersistence:
    """The ``file-durable`` backend: an append is acknowledged once it is on disk."""
    return _from_settings(settings, durable=True)


def fast_from_settings(settings: Settings) -> FilePersistence:
    """The ``file-fast`` backend: the same files without fsync, safe against a killed process."""
    return _from_settings(settings, durable=False)
