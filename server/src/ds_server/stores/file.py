"""The file backends: an append-only log per stream plus a metadata catalog, on local disk.

``file-durable`` acknowledges an append only once its bytes, and the
producer state that guards them, are fsynced (concurrent appends share
fsyncs). ``file-fast`` writes the same files without fsync: it survives a
killed process, not a power cut. See ``_file/persistence.py`` for the layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ds_server.stores._file import FilePersistence
from ds_server.stores._log_store import DEFAULT_MAX_SNAPSHOT_BYTES, LogStore
from ds_server.stores._quotas import NO_QUOTAS, quota_policy

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Self

    from ds_server.live import LiveNotifier
    from ds_server.settings import Settings
    from ds_server.stores._quotas import QuotaPolicy

MAX_OPEN_FILES = 512


class FileDurableStore(LogStore):
    """Streams in ``{data_dir}/files``; an append is acknowledged once it is on disk."""

    durable: ClassVar[bool] = True

    def __init__(
        self,
        live: LiveNotifier,
        *,
        data_dir: Path,
        max_retained_bytes: int,
        max_snapshot_bytes: int = DEFAULT_MAX_SNAPSHOT_BYTES,
        quotas: QuotaPolicy = NO_QUOTAS,
        max_open_files: int = MAX_OPEN_FILES,
    ) -> None:
        self.persistence = FilePersistence(
            data_dir / "files", durable=self.durable, max_open_files=max_open_files
        )
        super().__init__(
            live,
            self.persistence,
            max_retained_bytes=max_retained_bytes,
            max_snapshot_bytes=max_snapshot_bytes,
            quotas=quotas,
        )

    @classmethod
    def from_settings(cls, settings: Settings, live: LiveNotifier) -> Self:
        return cls(
            live,
            data_dir=settings.storage.data_dir,
            max_retained_bytes=settings.limits.max_retained_bytes,
            max_snapshot_bytes=settings.limits.max_snapshot_bytes,
            quotas=quota_policy(settings),
        )


class FileFastStore(FileDurableStore):
    """The same files without fsync: fast, and safe against a killed process only."""

    durable: ClassVar[bool] = False
