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
from contextlib import contextmanager
from typing import Iterator

from pyspark import SparkContext
from pyspark.sql import SparkSession

from udflow.spark_backend.connect import check_mode, is_connect

# The loggers that print a failed task's whole Python traceback (with udflow's encoded
# failure marker) and "aborting job" at ERROR level before the driver sees the failure; and,
# where the task failed while `toArrow` was filling a batch, Arrow's "Memory was leaked by
# query" from the batch's allocator, closed by a task-completion listener.
TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.scheduler.TaskSchedulerImpl",
    "org.apache.spark.TaskContextImpl",
    "org.apache.arrow.memory.BaseAllocator",
)


def get_session(spark: SparkSession | None = None) -> SparkSession:
    if spark is not None:
        return _use_this_python(spark)
    # the active session of this thread, else the one this process already started
    active = SparkSession.getActiveSession() or getattr(SparkSession, "_instantiatedSession", None)
    if active is not None and (is_connect(active) or active.sparkContext._jsc is not None):
        return _use_this_python(active)
    session = (
        SparkSession.builder.master("local[*]")
        .config("spark.sql.shuffle.partitions", str(embedded_shuffle_partitions()))
        .appName("udflow")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.python.worker.reuse", "true")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.driver.extraJavaOptions", EMBEDDED_JAVA_OPTIONS)
        .config("spark.python.daemon.module", QUIET_DAEMON)
        .config("spark.sql.optimizer.excludedRules", KEEP_LOCAL_ROWS_IN_TASKS)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return _use_this_python(session)


# HotSpot does not JIT-compile a method of more than 8000 bytes of bytecode: it runs it in the
# interpreter, many times slower. Whole-stage code generation fuses a stage's expressions
# into one method, and a native function with its Python-exact guards easily passes that
# size (Spark itself only gives up at 64 KB, `spark.sql.codegen.hugeMethodLimit`, whose
# documentation names this JVM limit). The embedded session's JVM compiles them anyway.
#
# Its logging is udflow's `log4j2.properties`: errors only, so that a normal run prints nothing
# (Spark's default logs its profile, the host name it picked and a Hadoop warning at start-up).
LOG4J_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
EMBEDDED_JAVA_OPTIONS = f'-XX:-DontCompileHugeMethods "-Dlog4j2.configurationFile={LOG4J_CONFIG}"'


# In-memory rows are a LocalRelation (`read.rows_frame`). Catalyst's ConvertToLocalRelation
# would evaluate the projections and filters above one in the driver, with the interpreted
# evaluator, while the same terms over files run as generated code in tasks. Without it, a
# flow runs its native terms one way whatever its source is (Spark's own test sessions exclude
# the rule for the same reason: to exercise generated code).
KEEP_LOCAL_ROWS_IN_TASKS = "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation"

# PySpark's worker daemon without the BrokenPipeError tracebacks of samples (`daemon.py`);
# only where the workers run this very interpreter, which has udflow.
QUIET_DAEMON = "udflow.spark_backend.daemon"


def embedded_shuffle_partitions() -> int:
    """Twice the cores, as Spark's tuning guide suggests for local work: the default of 200
    partitions costs a task each per shuffle, which dominates small and medium jobs on a laptop
    (adaptive execution coalesces them after the fact, but still plans 200 map outputs)."""
    return 2 * (os.cpu_count() or 1)


def _use_this_python(spark: SparkSession) -> SparkSession:
    """The executors' interpreter as Spark documents it: `spark.pyspark.python`, else
    `PYSPARK_PYTHON`; in local mode with neither, the driver's own (where udflow and
    pyarrow are installed). PySpark itself reads only the environment variable. A Connect
    session's workers run what its server was configured with: nothing to set from here."""
    if is_connect(spark):
        check_mode(spark)
        return spark
    sc = spark.sparkContext
    # the session's conf holds the context's (`getConf()` would copy all of it, ~20 ms per call)
    configured = spark.conf.get("spark.pyspark.python", None)
    if configured:
        sc.pythonExec = configured
    elif not os.environ.get("PYSPARK_PYTHON") and sc.master.startswith("local"):
        sc.pythonExec = sys.executable
    return spark


def new_session(master: str, conf: dict[str, str] | None = None, app_name: str = "udflow") -> SparkSession:
    """A session on any Spark master URL (`local[*]`, `spark://host:7077`, `yarn`, ...), or on a
    Spark Connect server (`sc://host:15002`: a remote session; of `conf`, only the SQL
    settings apply to it, the rest are the server's)."""
    if master.startswith("sc://"):
        session = SparkSession.builder.remote(master).getOrCreate()
        for key, value in (conf or {}).items():
            if key.startswith("spark.sql."):  # runtime settings; a remote client can set no others
                session.conf.set(key, value)
        return _use_this_python(session)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return _use_this_python(session)


@contextmanager
def quiet_task_failures() -> Iterator[None]:
    """While a udflow action runs, Spark's loggers of failed tasks are silent: a failure of a
    user function reaches the user once, as the UdfRuntimeError that names their code, not
    first as executor ERROR lines and an encoded marker. Their levels are restored after, so
    a user's own jobs on the same session log as before. Other failures still raise (with
    Spark's message); only these log lines are withheld."""
    sc = SparkContext._active_spark_context
    jvm = getattr(sc, "_jvm", None) if sc is not None else None
    if jvm is None:
        yield
        return
    loggers, configurator, off = _task_failure_loggers(sc)
    before = {name: logger.getLevel() for name, logger in loggers.items()}
    for name in loggers:
        configurator.setLevel(name, off)
    try:
        yield
    finally:
        for name, level in before.items():
            configurator.setLevel(name, level)


def _task_failure_loggers(sc: SparkContext) -> tuple:
    """({name: logger}, log4j's Configurator, Level.OFF), looked up once per SparkContext: each
    step of a py4j name (`jvm.org.apache...`) is a round trip to the JVM."""
    found = sc.__dict__.get("_udflow_task_failure_loggers")
    if found is None:
        log4j = sc._jvm.org.apache.logging.log4j
        found = ({name: log4j.LogManager.getLogger(name) for name in TASK_FAILURE_LOGGERS},
                 log4j.core.config.Configurator, log4j.Level.OFF)
        sc.__dict__["_udflow_task_failure_loggers"] = found
    return found
