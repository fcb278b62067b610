"""One SparkSession for the whole run, and a real ds-server for the readers' tests."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

# Spark binds its driver here; tests never listen beyond loopback.
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# The server's and ds-sync's test support start and stop their processes.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sync" / "tests"))

from ds_spark.spark_session import build_session
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import SparkSession

# Few shuffle partitions: the frames here are tiny, and each partition is a task.
TEST_CONF = {"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = build_session("local[2]", "ds-spark-tests", ui=False, progress=False, conf=TEST_CONF)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {"DS_STORAGE__DATA_DIR": str(tmp_path_factory.mktemp("spark-server"))}
    with ServerProcess(env=env) as server:
        yield server.url


@pytest.fixture
def bucket(server_url: str) -> str:
    """A fresh bucket for one test."""
    name = "spark-" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{server_url}/ds/{name}").status_code == 201
    return name
