"""What a Python worker imports to run udflow's Arrow UDFs (`udflow/spark_backend/arrow_calls.py`).

A worker unpickles each UDF's function and imports the modules of the names it calls. The
functions are pickled here as Spark pickles them (cloudpickle) and unpickled in a fresh
interpreter, which then must not hold the lowering, the native forms or the analysis: a
fresh worker (a session's first query, each executor, every query after a failed task)
would import them for nothing, about 0.4 s each time.
"""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
from pyspark import cloudpickle

from udflow.expr import Field
from udflow.spark_backend.arrow_calls import map_on_arrays, of_record, of_type, over_arrays, predicate_on_arrays
from udflow.spark_backend.udf import Udf

HEAVY = ("udflow.analysis", "udflow.spark_backend.native", "udflow.spark_backend.scalar",
         "udflow.spark_backend.python_calls", "udflow.spark_backend.lower", "udflow.engine", "udflow.rules")

UNPICKLE = """
import pickle, sys
run = pickle.loads(sys.stdin.buffer.read())
import pyarrow as pa
print(run(pa.array([1, None])).to_pylist())
print(" ".join(sorted(m for m in sys.modules if m.startswith("udflow"))))
"""


def _in_a_fresh_interpreter(function) -> tuple[str, set]:
    done = subprocess.run([sys.executable, "-c", UNPICKLE], input=cloudpickle.dumps(function),
                          capture_output=True, timeout=120, check=True)
    result, modules = done.stdout.decode().strip().split("\n")
    return result, set(modules.split())


def _heavy(modules: set) -> set:
    return {m for m in modules if m.startswith(HEAVY)}


def test_a_python_maps_scalar_udf_imports_no_lowering_on_the_worker():
    udf = Udf("Map(tagged)", "here", lambda r: {**r, "x": r["a"] is None}, "map")
    result, modules = _in_a_fresh_interpreter(map_on_arrays(udf, ["a"], ["x"], [pa.bool_()]))
    assert result == "[{'__udflow_emitted': True, 'x': False}, {'__udflow_emitted': True, 'x': True}]"
    assert "udflow.spark_backend.arrow_calls" in modules and not _heavy(modules)


def test_a_python_filters_scalar_udf_imports_no_lowering_on_the_worker():
    udf = Udf("Filter(known)", "here", lambda r: r["a"] is not None, "filter")
    result, modules = _in_a_fresh_interpreter(predicate_on_arrays(udf, ["a"]))
    assert result == "[True, False]" and not _heavy(modules)


def test_a_python_terms_column_imports_no_lowering_on_the_worker():
    run = over_arrays(of_record(Field("a"), ["a"], of_type("a", "int")), pa.int64())
    result, modules = _in_a_fresh_interpreter(run)
    assert result == ("[{'ok': True, 'value': 1, 'error': None}, {'ok': True, 'value': None, 'error': None}]")
    assert "udflow.term_code" in modules and not _heavy(modules)
