"""The SparkSession every job and test uses: UTC, the project's DataSources registered.

Python workers must import ``ds_spark`` (the DataSources run there), so
unless told otherwise they run this interpreter: the one ds-spark is
installed in. On a cluster, install ds-spark into the executors' Python
and point ``PYSPARK_PYTHON`` at it (docs/spark.md).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ds_spark.errors import JavaMissing

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
STAGE_LOG_CONFIG = Path(__file__).with_name("log4j2.properties")


def java_executable() -> str | None:
    """The ``java`` Spark will start: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if os.access(candidate, os.X_OK) else None
    return shutil.which("java")


def build_session(
    master: str = DEFAULT_MASTER,
    app_name: str = "ds-spark",
    *,
    ui: bool = False,
    progress: bool = True,
    stage_log: bool = False,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A SparkSession on ``master``; JavaMissing when there is no Java to run it.

    ``stage_log`` logs a line per finished Spark stage (and warnings) to stderr.
    """
    if java_executable() is None:
        raise JavaMissing(
            "Java was not found: Spark needs a Java 17+ runtime on PATH or in JAVA_HOME"
        )
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from ds_spark.sources import DurableStreamsDataSource, SessionEventsDataSource

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        # Days and event times are UTC (sessions.md §5), whatever the machine's zone.
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", str(ui).lower())
        # Jobs cache frames they reuse; without this, adaptive execution leaves the
        # cached plans at spark.sql.shuffle.partitions (200) tasks per stage.
        .config("spark.sql.optimizer.canChangeCachedPlanOutputPartitioning", "true")
        .config("spark.ui.showConsoleProgress", str(progress).lower())
    )
    if stage_log:
        builder = builder.config(
            "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={STAGE_LOG_CONFIG}"
        )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.dataSource.register(DurableStreamsDataSource)
    spark.dataSource.register(SessionEventsDataSource)
    return spark
