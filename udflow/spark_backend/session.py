"""Which SparkSession a flow runs on.

    get_session(spark)  ->  spark                       the user's session (e.g. a cluster), if given
                        ->  SparkSession.getActiveSession()   else the active one (tests, notebooks)
                        ->  an embedded local[*] session      else one created on first use

Python workers must run an interpreter that has pyarrow (udflow's functions run
over Arrow batches); udflow ships its own code to them (`ship`). The
interpreter is `spark.pyspark.python` when set, else `PYSPARK_PYTHON`, as Spark
documents; in local mode with neither, the driver's own interpreter.
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
    """The executors' interpreter as Spark documents it: `spark.pyspark.python`, else
    `PYSPARK_PYTHON`; in local mode with neither, the driver's own (where udflow and
    pyarrow are installed). PySpark itself reads only the environment variable."""
    sc = spark.sparkContext
    configured = sc.getConf().get("spark.pyspark.python")
    if configured:
        sc.pythonExec = configured
    elif not os.environ.get("PYSPARK_PYTHON") and sc.master.startswith("local"):
        sc.pythonExec = sys.executable
    return spark


def new_session(master: str, conf: dict[str, str] | None = None, app_name: str = "udflow") -> SparkSession:
    """A session on any Spark master URL (`local[*]`, `spark://host:7077`, `yarn`, ...)."""
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return _use_this_python(session)
