"""Partial lowering: the calls of a model with no exact native form, as Python inside the native plan.

    r["status"].strip().lower() == "completed"
      ->  CASE WHEN NOT c.ok THEN raise_error(<the user's function, line, Python's error>)
               ELSE c.value END = 'completed'
          where c = __udflow_py_str_lower(regexp_replace(status, <Python's whitespace>, ''))

A model whose terms all have native forms but for a few calls (`str.lower`, whose
Unicode case tables differ between Python and the JVM; `round`, which Spark rounds on
the decimal text of a double, Python on its exact binary value) no longer sends the
whole operator to Python: everything else runs as Spark expressions, and each such call
is an Arrow scalar UDF over its arguments' values, which the native form has already
computed exactly as Python would. The UDF runs Python's own operation (`getattr(x,
"lower")()`, `round(x, n)`), so its value and its error are Python's, None included
(`None.lower()` raises AttributeError).

Spark evaluates a Python UDF of an expression on every row that reaches the
operator, also where the row takes another branch of a CASE (Catalyst extracts the
call into an `ArrowEvalPython` node below the expression). So the UDF never raises:
it gives struct<ok, value, error> (the error as Python words it, base64), and the term
raises that error, marked as every error of the user's function (`NativeLowering.error`),
only where the model evaluates the call. A value a column cannot hold (an int past 64
bits) is an error too, as everywhere in the native forms.

Where: a Map's or a filter's cases (`native_ops.run`), and the terms over a Reduce's
aggregates (`native_groups.run_reduce`). Not inside an aggregate's argument or an
explosion, where the call would sit inside Spark's own higher-order functions.
"""

from __future__ import annotations

import base64
import math
from typing import Callable

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType, StructField, StructType

from udflow.expr import MATH_FUNCTIONS
from udflow.spark_backend.arrow_values import holds_exactly
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import case

# call -> (argument families -> result family): the forms whose result has one type
RESULTS = {
    "str": {("float",): "str", ("date",): "str"},  # repr of a float; isoformat of a date
    "str.lower": {("str",): "str"},
    "str.upper": {("str",): "str"},
    "round": {("float",): "int", ("int",): "int", ("float", "int"): "float", ("int", "int"): "int"},
    # math: Java's and C's libraries may differ in the last bit, so Python computes them all
    **{f"math.{name}": {("float",): "float", ("int",): "float"} for name in MATH_FUNCTIONS
       if name not in ("floor", "ceil")},
    "math.floor": {("float",): "int", ("int",): "int"},
    "math.ceil": {("float",): "int", ("int",): "int"},
}
RESULTS["math.log"] = {**RESULTS["math.log"], **{(a, b): "float" for a in ("float", "int") for b in ("float", "int")}}
SPARK_TYPES = {"str": StringType(), "int": LongType(), "float": DoubleType()}
ARROW_TYPES = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
RESULT_FIELDS = ("ok", "value", "error")


class PythonCalls:
    """The Python calls of one native lowering, each an Arrow UDF registered with `session`
    under a name that says what it runs (the same call on the same types: the same UDF)."""

    def __init__(self, session: SparkSession):
        self.session = session
        self.registered: set[str] = set()

    def lower(self, low, name: str, args: list[Typed]) -> Typed:
        """The call as a term of `low` (a `NativeLowering`): its value, or Python's error."""
        families = tuple(a.family for a in args)
        result = RESULTS.get(name, {}).get(families)
        if result is None:
            raise NotNative(f"{name} on {', '.join(families)} has no native form")
        if name == "round" and len(args) == 2 and args[1].nullable:
            raise NotNative("round(x, n) with n maybe None (round(x, None) is an int)")
        function = self._function(name, families, result)
        called = f"{function}({', '.join(a.sql for a in args)})"
        value = case([(f"(NOT {called}.ok)", low.raised(f"{called}.error"))], f"{called}.value")
        return Typed(value, result, False)

    def _function(self, name: str, families: tuple, result: str) -> str:
        sql_name = f"__udflow_py_{name.replace('.', '_')}_{'_'.join(families)}"
        if sql_name not in self.registered:
            returned = StructType([StructField("ok", BooleanType(), False), StructField("value", SPARK_TYPES[result]),
                                   StructField("error", StringType())])
            self.session.udf.register(sql_name, F.arrow_udf(over_arrays(python_form(name), ARROW_TYPES[result]),
                                                             returned))
            self.registered.add(sql_name)
        return sql_name


def python_form(name: str) -> Callable:
    """The operation as Python runs it on the values: a method looked up on its receiver (so
    None raises AttributeError, as `x.lower()` does), a builtin called."""
    if name.startswith("str."):
        method = name.split(".", 1)[1]
        return lambda receiver, *rest: getattr(receiver, method)(*rest)
    if name.startswith("math."):
        return getattr(math, name.split(".", 1)[1])
    return {"round": round, "str": str}[name]


def over_arrays(run: Callable, arrow_type) -> Callable:
    """`run` over Arrow columns, row by row: struct<ok, value, error> (see the module docstring)."""

    def udf(*arrays: pa.Array) -> pa.Array:
        ok, values, errors = [], [], []
        for args in zip(*(a.to_pylist() for a in arrays)):
            try:
                value = run(*args)
                if not holds_exactly(value, arrow_type):
                    raise OverflowError("int overflow past 64 bits")
            except Exception as exc:  # noqa: BLE001 - Python's error, raised where the model evaluates it
                ok.append(False)
                values.append(None)
                errors.append(base64.b64encode(f"{type(exc).__name__}: {exc}".encode()).decode("ascii"))
                continue
            ok.append(True)
            values.append(value)
            errors.append(None)
        parts = [pa.array(ok, pa.bool_()), pa.array(values, arrow_type), pa.array(errors, pa.string())]
        return pa.StructArray.from_arrays(parts, names=list(RESULT_FIELDS))

    return udf
