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
import datetime
import math
from typing import Callable

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from udflow.expr import MATH_FUNCTIONS, evaluate
from udflow.spark_backend.arrow_values import holds_exactly
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import case, ident

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
SPARK_TYPES = {"str": StringType(), "int": LongType(), "float": DoubleType(), "bool": BooleanType(),
               "date": DateType(), "datetime": TimestampNTZType()}
ARROW_TYPES = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
               "date": pa.date32(), "datetime": pa.timestamp("us")}
# a helper's result, by its exact Python type: the family whose column holds it unchanged (a
# naive datetime as TIMESTAMP_NTZ, which no time zone shifts)
HELPER_FAMILIES = {str: "str", int: "int", float: "float", bool: "bool", datetime.date: "date",
                   datetime.datetime: "datetime"}
RESULT_FIELDS = ("ok", "value", "error")


class PythonCalls:
    """The Python calls of one native lowering, each an Arrow UDF registered with `session`
    under a name that says what it runs (the same call on the same types: the same UDF)."""

    def __init__(self, session: SparkSession):
        self.session = session
        self.registered: set[str] = set()
        self.columns: dict[str, str] = {}  # a call's SQL -> the column that computes it, once
        self.pending: list[tuple[str, str]] = []  # (column, call) not yet added to a frame

    def with_calls(self, df: DataFrame) -> DataFrame:
        """`df` with the calls lowered since the last time as columns (`__udflow_py<n>`), a
        call over another's result after it: Spark runs each distinct call once per row, in
        one Python pass per layer, however many terms use it. The caller selects its own
        columns above, which drops these."""
        while self.pending:
            waiting = {ident(name) for name, _ in self.pending}
            ready = [(n, c) for n, c in self.pending if not any(w in c for w in waiting - {ident(n)})]
            df = df.selectExpr("*", *[f"{c} AS {ident(n)}" for n, c in ready])
            self.pending = [p for p in self.pending if p not in ready]
        return df

    def _result(self, low, function: str, args: list[Typed], result: str, nullable: bool) -> Typed:
        """The term reading the call's column: the arguments' own errors first (the call is
        made on every row with those errors as None: `defused`), then the call's."""
        called = f"{function}({', '.join(defused(a.sql) for a in args)})"
        column = self.columns.get(called)
        if column is None:
            column = self.columns[called] = f"__udflow_py{len(self.columns)}"
            self.pending.append((column, called))
        c = ident(column)
        first = [(f"((hash({a.sql}) & 0) = 1)", "NULL") for a in args if "raise_error(" in a.sql]  # never true
        value = case(first + [(f"(NOT {c}.ok)", low.raised(f"{c}.error"))], f"{c}.value")
        return Typed(value, result, nullable)

    def lower(self, low, name: str, args: list[Typed]) -> Typed:
        """The call as a term of `low` (a `NativeLowering`): its value, or Python's error."""
        families = tuple(a.family for a in args)
        result = RESULTS.get(name, {}).get(families)
        if result is None:
            raise NotNative(f"{name} on {', '.join(families)} has no native form")
        if name == "round" and len(args) == 2 and args[1].nullable:
            raise NotNative("round(x, n) with n maybe None (round(x, None) is an int)")
        return self._result(low, self._function(name, families, result), args, result, False)

    def lower_helper(self, low, call, args: list[Typed]) -> Typed:
        """A call of the user's helper (`udflow.helper_calls.HelperCall`) as Python in the plan;
        its result's type is the one it has on the input records sampled on the driver."""
        result = helper_family(call, low.sample)
        families = tuple(a.family for a in args)
        sql_name = f"__udflow_helper_{call.name}_{call.fn_id}_{'_'.join(families)}"
        self._register(sql_name, over_arrays(of_type(call, result), ARROW_TYPES[result]), result)
        return self._result(low, sql_name, args, result, True)

    def _function(self, name: str, families: tuple, result: str) -> str:
        sql_name = f"__udflow_py_{name.replace('.', '_')}_{'_'.join(families)}"
        self._register(sql_name, over_arrays(python_form(name), ARROW_TYPES[result]), result)
        return sql_name

    def _register(self, sql_name: str, udf: Callable, result: str) -> None:
        if sql_name not in self.registered:
            returned = StructType([StructField("ok", BooleanType(), False), StructField("value", SPARK_TYPES[result]),
                                   StructField("error", StringType())])
            # nondeterministic, so that Catalyst keeps each call in its own column, computed once per
            # row (a deterministic one it copies into every expression that reads the column)
            self.session.udf.register(sql_name, F.arrow_udf(udf, returned).asNondeterministic())
            self.registered.add(sql_name)


def defused(text: str) -> str:
    """SQL `text` with each `raise_error(...)` NULL: an argument the call receives on every row,
    also where the term that uses it is not evaluated (its errors are raised at that term)."""
    out, i = [], 0
    while (start := text.find("raise_error(", i)) >= 0:
        out.append(text[i:start] + "NULL")
        i = _closing(text, start + len("raise_error(")) + 1
    return "".join(out) + text[i:]


def _closing(text: str, i: int) -> int:
    """The index of the parenthesis closing the one before `i`, skipping quoted text."""
    depth, quote = 1, None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError(f"unbalanced SQL: {text[:80]}")


def helper_family(call, sample: tuple) -> str:
    """The one family of the helper's results on the sampled input records (None aside), or
    NotNative where they have none or several, or one no column holds unchanged."""
    seen = set()
    for record in sample:
        try:
            value = evaluate(call, record)
        except Exception:  # noqa: BLE001 - an error is not a type: the plan raises it where Python does
            continue
        if value is not None:
            seen.add(type(value) if not isinstance(value, datetime.datetime) or value.tzinfo is None else "aware")
    families = {HELPER_FAMILIES.get(t) for t in seen}
    if not seen:
        raise NotNative(f"a call of your helper {call.name}: no sampled record gives it a value of a type")
    if len(families) != 1 or None in families:
        kinds = ", ".join(sorted(t if isinstance(t, str) else t.__name__ for t in seen))
        raise NotNative(f"a call of your helper {call.name} returns {kinds} on the sampled records")
    return families.pop()


def of_type(call, family: str) -> Callable:
    """The helper, checked to return None or the sampled family's own type on every record: a
    value of another type raises (udflow types the column by the sample) instead of being
    converted."""
    expected = next(t for t, f in HELPER_FAMILIES.items() if f == family)
    fn, name = call.fn, call.name

    def run(*args):
        value = fn(*args)
        if value is not None and (type(value) is not expected or family == "datetime" and value.tzinfo is not None):
            raise TypeError(f"{name} returned {value!r} here, where it returned a {expected.__name__} on "
                            f"the records udflow sampled to type it (run the flow with native=False)")
        return value

    return run


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
    """`run` over Arrow columns, row by row: struct<ok, value, error> (see the module docstring).
    The values go into their column in one conversion; where one does not fit it (an int
    past 64 bits, a lone surrogate), each is checked, and those are errors."""

    def udf(*arrays: pa.Array) -> pa.Array:
        ok, values, errors = [], [], []
        for args in zip(*(a.to_pylist() for a in arrays)):
            try:
                values.append(run(*args))
                ok.append(True)
                errors.append(None)
            except Exception as exc:  # noqa: BLE001 - Python's error, raised where the model evaluates it
                ok.append(False)
                values.append(None)
                errors.append(_encoded(exc))
        try:
            column = pa.array(values, arrow_type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            for i, value in enumerate(values):
                if ok[i] and not holds_exactly(value, arrow_type):
                    ok[i], values[i] = False, None
                    errors[i] = _encoded(OverflowError("int overflow past 64 bits") if isinstance(value, int)
                                         else ValueError(f"{value!r} has no exact Spark value"))
            column = pa.array(values, arrow_type)
        return pa.StructArray.from_arrays([pa.array(ok, pa.bool_()), column, pa.array(errors, pa.string())],
                                          names=list(RESULT_FIELDS))

    return udf


def _encoded(exc: Exception) -> str:
    return base64.b64encode(f"{type(exc).__name__}: {exc}".encode()).decode("ascii")
