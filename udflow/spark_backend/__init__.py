"""The PySpark backend: lower a plan to DataFrames and run it (the only module importing pyspark).

    collect(node, physical)            -> list[dict]   run it, records back on the driver
    to_dataframe(node, physical)       -> DataFrame    for users who continue in PySpark
    write(node, physical, path, ...)                   run it into a sink, through Spark's committer

`physical` is the plan's physical plan (`udflow.physical`, `Flow.physical()`): how
each operator runs (natively from its function's model, or which way in Python)
and the join strategies ("broadcast_left" / "broadcast_right" / "shuffle") the
lowering gives Spark as hints. The backend reads it; it decides none of it again,
except where the input's types leave a native step no exact form
(`Lowering.python_reasons`).

`spark=None` means: the active session if there is one, else an embedded
local[*] session (see `session.get_session`).
An exception in a user function surfaces as `udflow.errors.UdfRuntimeError`
naming the operator, the function and the record (see `udf`). Before a flow
runs, its executors get udflow's code and the user's modules, and their Python
is checked (see `ship`).
"""

from __future__ import annotations

from typing import Any, Optional

from udflow.errors import UdflowError
from udflow.physical import PhysicalPlan
from udflow.plan import Node, Source
from udflow.sources import SourceValueError

Fields = Optional[tuple[str, ...]]  # the fields to keep (`udflow.fields.selected_fields`); None: all

__all__ = ["collect", "to_dataframe", "write", "get_session", "output_types"]

# Loaded on first use (PEP 562): the package is imported by everything below it, and the
# Python workers' daemon (`daemon`) must import nothing that starts threads before it forks.
_LAZY = {"get_session": "session", "output_types": "schema", "Lowering": "lower", "translated": "udf"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)


def session_for(node: Node, spark: Any = None, run_jobs: bool = True):
    """The session `node` runs on, its executors able to run `node`'s functions
    (`run_jobs=False`: checked without a Spark job where that can be done)."""
    from udflow.spark_backend import ship
    from udflow.spark_backend.session import get_session

    session = get_session(spark)
    ship.prepare(session, node, run_jobs=run_jobs)
    return session


def to_dataframe(node: Node, physical: PhysicalPlan, spark: Any = None, fields: Fields = None,
                 samples: Optional[dict] = None):
    """The lowered DataFrame (only `fields`, when given), lazy: building it runs no Spark job.
    Errors in user functions surface when the caller runs an action. `physical`: how each
    operator runs (`udflow.physical`, decided by `udflow.engine.steps`)."""
    from udflow.spark_backend.lower import Lowering

    lowering = Lowering(session_for(node, spark, run_jobs=False), physical, samples=samples)
    return lowering.typed(node, fields)


def collect(node: Node, physical: PhysicalPlan, spark: Any = None, fields: Fields = None,
            samples: Optional[dict] = None) -> list[dict]:
    """Run the plan on Spark; its records as dicts (a bag: the order means nothing), cut to
    `fields` when given (Spark then prunes what computes only the others)."""
    from udflow.spark_backend.lower import Lowering

    lowering = Lowering(session_for(node, spark), physical, samples=samples)
    try:
        return lowering.records(node, fields)
    except SourceValueError as exc:
        raise located(node, exc) from None
    finally:
        lowering.release()


def write(
    node: Node,
    physical: PhysicalPlan,
    path: str,
    format: str = "parquet",
    spark: Any = None,
    mode: str = "errorifexists",
    fields: Fields = None,
    samples: Optional[dict] = None,
) -> None:
    """Run the plan into `path` through Spark's DataFrameWriter.

    Spark's output committer moves task output into place only when the job
    commits, so a failed job leaves no part files; if `path` did not exist
    before, whatever the failed job created there (an empty folder, a
    `_temporary` folder) is removed too.
    """
    from udflow.spark_backend.lower import Lowering
    from udflow.spark_backend.udf import translated

    session = session_for(node, spark)
    lowering = Lowering(session, physical, samples=samples)
    existed = _exists(session, path)
    if existed and mode in ("errorifexists", "error", "default"):
        raise UdflowError(
            f"write to {path!r}: something is already there; pass mode='overwrite' or mode='append', "
            "or choose another path"
        )
    try:
        writer = lowering.typed(node, fields).write.format(format).mode(_save_mode(session, mode))
        if format == "csv":
            writer = writer.option("header", "true")
        with translated():
            writer.save(_spark_path(session, path))
    except SourceValueError as exc:
        if existed is False:
            _remove(session, path)
        raise located(node, exc) from None
    except BaseException:
        if existed is False:
            _remove(session, path)
        raise
    finally:
        lowering.release()


def _save_mode(spark, mode: str) -> str:
    """Connect's writer knows "errorifexists" and "default" only by their other name, "error"."""
    from udflow.spark_backend import connect

    return "error" if mode in ("errorifexists", "default") and connect.is_connect(spark) else mode


def _spark_path(spark, path: str) -> str:
    """The path as Spark should write it: a Connect server runs in a folder of its own."""
    from udflow.spark_backend import connect

    return connect.server_path(spark, path) if connect.is_connect(spark) else path


def located(node: Node, error: SourceValueError) -> SourceValueError:
    """Spark's FAILFAST CSV read names neither the file nor the value; the first value of the
    plan's CSV sources that its column's type does not admit, found as the reference
    interpreter finds it, is (same file, line, column and value, same message)."""
    from udflow import sources

    for src in node.walk():
        if isinstance(src, Source) and src.format == "csv" and src.path is not None:
            message = sources.first_bad_value(src.table, src.path, src.types)
            if message is not None:
                return SourceValueError(message)
    return error


def _hadoop_path(spark, path: str):  # classic sessions only: the JVM's Hadoop FileSystem
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath, hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def _exists(spark, path: str) -> Optional[bool]:
    """Whether something is at `path`; None where udflow cannot look (a Connect server on
    another machine: its writer then refuses an existing path in its own words)."""
    from udflow.spark_backend import connect

    if connect.is_connect(spark):
        return connect.path_exists(spark, path)
    hpath, fs = _hadoop_path(spark, path)
    return bool(fs.exists(hpath))


def _remove(spark, path: str) -> None:
    from udflow.spark_backend import connect

    if connect.is_connect(spark):
        connect.remove(spark, path)
        return
    hpath, fs = _hadoop_path(spark, path)
    if fs.exists(hpath):
        fs.delete(hpath, True)
