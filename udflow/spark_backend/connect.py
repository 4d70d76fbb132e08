"""What udflow does differently on a Spark Connect session (`SparkSession.builder.remote(...)`).

A Connect session is a gRPC client: it has no SparkContext and no JVM handles (`_jvm`,
`_jsc`, `_jdf`), and the server may run on another machine. Each place where the classic
path reaches into the JVM has its Connect counterpart here:

    is_connect(spark)            a Connect session? (by its class: no import of Connect's gRPC stack)
    check_mode(spark)            PySpark builds Connect columns only in Connect mode: else a UdflowError
    prepare(spark, name, data, run_jobs)
                                 udflow's zip as a session artifact (`addArtifacts(pyfile=True)`),
                                 the workers' Python probed by a one-partition-per-slot query
    size_estimate(df)            (rows, bytes) from the optimized plan's statistics as
                                 `explain(mode="cost")` prints them
    paths_are_local(spark)       whether the server reads a path as this machine's file system
    path_exists(spark, path)     True / False there, None when udflow cannot look

Everything is remembered per Connect session id (a session is a server-side state; the
client object may be rebuilt for the same id).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import sys
import tempfile
from typing import Any, Callable, Optional

from udflow.errors import UdflowError

# Session ids whose artifacts hold udflow's zip / whose workers' Python passed the probe.
_SHIPPED: dict[str, str] = {}
_PROBED: set[str] = set()
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")


def is_connect(spark: Any) -> bool:
    """Whether `spark` (a session or a DataFrame) is Spark Connect's. By the class's module:
    importing `pyspark.sql.connect` loads gRPC, which a classic run should not pay for."""
    return type(spark).__module__.startswith("pyspark.sql.connect.")


def check_mode(spark: Any) -> None:
    """PySpark's `functions` build a Connect column only while `is_remote()` holds (the
    process's Connect mode, which `SparkSession.builder.remote(...)` turns on); a session
    made otherwise would meet classic columns deep in the lowering."""
    from pyspark.sql.utils import is_remote

    if not is_remote():
        raise UdflowError(
            "this Spark Connect session was created outside PySpark's Connect mode, so PySpark builds "
            "classic (JVM) columns for it; create it with SparkSession.builder.remote(url).getOrCreate() "
            "(or set SPARK_REMOTE), not alongside a classic SparkContext"
        )


def prepare(spark: Any, name: str, data: bytes, run_jobs: bool, judge: Callable[[list], None],
            startup_failure: Callable[[str, str], str]) -> None:
    """udflow's code to the session's Python workers, once per session; their Python checked
    by `judge` once per session when `run_jobs` (without a job there is nothing to look at:
    the server's machine may not be this one)."""
    session = spark.session_id
    if _SHIPPED.get(session) != name:
        folder = tempfile.mkdtemp(prefix="udflow-connect-")
        path = os.path.join(folder, name)  # the artifact's name is the file's
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            spark.addArtifacts(path, pyfile=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        _SHIPPED[session] = name
    if run_jobs and session not in _PROBED:
        judge(_probe(spark, startup_failure))
        _PROBED.add(session)


def _probe(spark: Any, startup_failure: Callable[[str, str], str]) -> list[tuple]:
    """(Python version, pyarrow version, interpreter) of the workers, one task per slot, by a
    plain pickled UDF: it needs no pyarrow, so a missing one is reported, not tripped over."""
    from pyspark.sql.connect.functions import col, udf

    def probe(_):  # nested, so cloudpickle sends it by value: it needs nothing of udflow
        import sys as worker_sys

        try:
            import pyarrow

            arrow = pyarrow.__version__
        except ImportError:
            arrow = None
        return repr((tuple(worker_sys.version_info[:2]), arrow, worker_sys.executable))

    slots = _slots(spark)
    try:
        rows = spark.range(0, slots, 1, slots).select(udf(probe, "string", useArrow=False)(col("id"))).collect()
    except Exception as exc:  # noqa: BLE001 - the workers could not start Python: say why
        python = spark.conf.get("spark.pyspark.python", None) or "the server's PYSPARK_PYTHON"
        raise UdflowError(startup_failure(python, str(exc))) from None
    return [ast.literal_eval(r[0]) for r in rows]


def _slots(spark: Any) -> int:
    """The server's default parallelism when its conf says (one probe task per slot), else 2."""
    value = spark.conf.get("spark.default.parallelism", None)
    return max(1, int(value)) if value and value.isdigit() else 2


# ---------------------------------------------------------------------------
# Size estimates: the statistics of the optimized plan, as EXPLAIN COST prints them
# ---------------------------------------------------------------------------

_STATS = re.compile(r"Statistics\(sizeInBytes=([0-9.Ee+]+)\s*([KMGTPE]i)?B(?:, rowCount=([0-9.Ee+]+))?")
_UNITS = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}


def plan_lines(df: Any) -> list[str]:
    """The optimized logical plan's lines, each with its statistics (`explain(mode="cost")`)."""
    text = df._explain_string(mode="cost")  # Connect's own: the server's EXPLAIN COST text
    lines = text.split("== Optimized Logical Plan ==", 1)[-1].split("== Physical Plan ==", 1)[0]
    return [ln for ln in lines.splitlines() if ln.strip()]


def statistics(line: str) -> tuple[Optional[int], int]:
    """(rows or None, bytes) of one plan line; bytes as printed (KiB/MiB/...: three digits)."""
    found = _STATS.search(line)
    if found is None:
        return None, sys.maxsize
    size = int(float(found.group(1)) * _UNITS[found.group(2)])
    return (int(float(found.group(3))) if found.group(3) else None), size


def operator(line: str) -> str:
    """The operator's name of a plan line (`+- Project [a#1]` -> "Project")."""
    return re.sub(r"^[\s:|+\-]*", "", line).split(" ", 1)[0].split("[", 1)[0]


def projected_leaf(lines: list[str]) -> Optional[str]:
    """The leaf's line under a chain of projections (which keep the row count), else None."""
    *upper, leaf = lines
    return leaf if all(operator(ln) == "Project" for ln in upper) else None


# Spark's DataType.defaultSize, the row size the classic path reads from the JVM.
_DEFAULT_SIZES = {"boolean": 1, "byte": 1, "short": 2, "integer": 4, "long": 8, "float": 4, "double": 8,
                  "date": 4, "timestamp": 8, "timestamp_ntz": 8, "string": 20, "binary": 100, "null": 1}


def default_size(data_type: Any) -> int:
    """Spark's `defaultSize` of a type, computed from the Python schema."""
    from pyspark.sql.types import ArrayType, DecimalType, MapType, StructType

    if isinstance(data_type, StructType):
        return sum(default_size(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return default_size(data_type.elementType)
    if isinstance(data_type, MapType):
        return default_size(data_type.keyType) + default_size(data_type.valueType)
    if isinstance(data_type, DecimalType):
        return 8 if data_type.precision <= 18 else 16
    return _DEFAULT_SIZES.get(data_type.typeName(), 20)


# ---------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------


def paths_are_local(spark: Any) -> bool:
    """Whether the server reads a path without a scheme from this machine's file system: it
    runs here (its address is this host) and its default file system is the local one."""
    builder = getattr(spark.client, "_builder", None)  # the channel builder knows the host
    host = getattr(builder, "host", None)
    if host not in _LOCAL_HOSTS:
        return False
    default = spark.conf.get("spark.hadoop.fs.defaultFS", None) or "file:///"
    return default.startswith("file:")


def local_path(spark: Any, path: str) -> Optional[str]:
    """`path` on this machine where the server reads it there, else None."""
    if path.startswith("file:"):
        path = re.sub(r"^file:(//)?", "", path)
    elif re.match(r"^[A-Za-z][\w+.-]*:", path):
        return None  # another file system's URI (hdfs:, s3a:, ...)
    return os.path.abspath(path) if paths_are_local(spark) else None


def path_exists(spark: Any, path: str) -> Optional[bool]:
    """Whether something is at `path`, None when udflow cannot see the server's files."""
    local = local_path(spark, path)
    return None if local is None else os.path.exists(local)


def remove(spark: Any, path: str) -> None:
    """Remove what a failed write left at `path`, where udflow can see it."""
    local = local_path(spark, path)
    if local is not None and os.path.isdir(local):
        shutil.rmtree(local, ignore_errors=True)
    elif local is not None and os.path.exists(local):
        os.remove(local)


def server_path(spark: Any, path: str) -> str:
    """`path` as the server should read it: a relative path made absolute here, where the
    server shares this machine's files (its working folder is not this process's)."""
    if re.match(r"^[A-Za-z][\w+.-]*:", path) or os.path.isabs(path) or not paths_are_local(spark):
        return path
    return os.path.abspath(path)
