"""Which SparkSession a flow runs on.

    get_session(spark)  ->  spark                       the user's session (e.g. a cluster), if given
                        ->  SparkSession.getActiveSession()   else the active one (tests, notebooks)
                        ->  an embedded local[*] session      else one created on first use

Python workers must run an interpreter that has pyarrow (udflow's functions run
over Arrow batches). In local mode, when the user configured no interpreter
(`PYSPARK_PYTHON` / `spark.pyspark.python`), the driver's own interpreter is
used, which is the one udflow is installed in.
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession


def get_session(spark: SparkSession | None = None) -> SparkSession:
    if spark is not None:
        return _use_this_python(spark)
    # the active session of this thread, else the one this process already started
    active = SparkSession.getActiveSession() or getattr(SparkSession, "_instantiatedSession", None)
    if active is not None and active.sparkContext._jsc is not None:
        return _use_this_python(active)
    session = (
        SparkSession.builder.master("local[*]")
        .appName("udflow")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.python.worker.reuse", "true")
        .config("spark.pyspark.python", sys.executable)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return _use_this_python(session)


def _use_this_python(spark: SparkSession) -> SparkSession:
    """In local mode with no interpreter configured, run workers on the driver's Python."""
    sc = spark.sparkContext
    if os.environ.get("PYSPARK_PYTHON") or not sc.master.startswith("local"):
        return spark
    # PySpark reads only the environment variable; honour the config key too.
    sc.pythonExec = sc.getConf().get("spark.pyspark.python") or sys.executable
    return spark


def new_session(master: str, conf: dict[str, str] | None = None, app_name: str = "udflow") -> SparkSession:
    """A session on any Spark master URL (`local[*]`, `spark://host:7077`, `yarn`, ...)."""
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return _use_this_python(session)
