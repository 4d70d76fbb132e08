"""Shared fixtures: one SparkSession per test run (and one Spark Connect server when a test asks
for it), TPC-H scale 0.01 generated once."""

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TPCH_DIR = pathlib.Path(os.environ.get("UDFLOW_TPCH_DIR", ROOT / "data" / "tpch-sf0.01"))


def _spark_context():
    pyspark = sys.modules.get("pyspark")
    return pyspark.SparkContext._active_spark_context if pyspark else None


@pytest.fixture(autouse=True)
def _spark_only_through_the_fixture(request):
    """A test that starts a SparkContext must ask for the `spark` fixture. One that makes its
    own (say through udflow's embedded session) configures the session the rest of the suite
    then shares, and run alone it tests another session than the suite's. Only a test that
    runs before the session exists can be caught (alone, or early in the order): after that,
    udflow's session is the fixture's."""
    if "spark" in request.fixturenames:
        yield
        return
    before = _spark_context()
    yield
    if before is None and _spark_context() is not None:
        pytest.fail(f"{request.node.nodeid} started a SparkContext without the `spark` fixture")


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test run: local[2], few shuffle partitions, no UI."""
    from pyspark.sql import SparkSession

    from udflow.spark_backend.session import KEEP_LOCAL_ROWS_IN_TASKS

    # Workers must run this interpreter (the venv's, which has pyarrow), not `python3` on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("udflow-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.python.worker.reuse", "true")
        .config("spark.python.daemon.module", "udflow.spark_backend.daemon")  # as the embedded session
        .config("spark.sql.optimizer.excludedRules", KEEP_LOCAL_ROWS_IN_TASKS)  # as the embedded session
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def connect_session(tmp_path_factory):
    """A remote SparkSession on a Spark Connect server (`tests/connect_server.py`: local[2],
    started from the installed pyspark), for one module (tests/test_connect.py, the only one):
    killed when the module ends, so that no idle JVM stands beside the rest of the suite."""
    from tests.connect_server import start, stop

    server = start(str(tmp_path_factory.mktemp("connect-server")))
    try:
        session = server.session()
        yield session
        session.stop()
    finally:
        stop(server)


@pytest.fixture
def connect_spark(connect_session, monkeypatch):
    """The Connect session, in PySpark's Connect mode for the test: PySpark's functions build
    Connect columns only in that mode, which `SparkSession.builder.remote(...)` turns on for
    good in a process of its own; here the classic `spark` fixture shares the process."""
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    return connect_session


@pytest.fixture(scope="session")
def tpch_dir():
    """TPC-H at scale 0.01 as parquet, generated with tpchgen-cli on first use."""
    from examples.tpch_data import generate_tpch

    generate_tpch(str(TPCH_DIR), 0.01)
    return str(TPCH_DIR)
