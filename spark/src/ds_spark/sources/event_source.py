"""What both event sources share: rows of ``EVENT_SCHEMA`` (sessions.md §2), under a name."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pyspark.sql.datasource import DataSource

from ds_spark.schema import EVENT_SCHEMA

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


class EventDataSource(DataSource):
    """A data source of session events, registered as ``source_name`` (``format(...)``)."""

    source_name: ClassVar[str]

    @classmethod
    def name(cls) -> str:
        return cls.source_name

    def schema(self) -> StructType:
        return EVENT_SCHEMA
