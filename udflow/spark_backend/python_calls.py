"""Partial lowering: the calls of a model with no exact native form, as Python inside the native plan.

    r["status"].strip().lower() == "completed"
      ->  .selectExpr("*", "__udflow_term_<id>(status) AS __udflow_py0")
          CASE WHEN NOT __udflow_py0.ok THEN raise_error(<the user's function, line, Python's error>)
               ELSE __udflow_py0.value END = 'completed'

A model whose terms all have native forms but for a few calls (`str.lower`, whose
Unicode case tables differ between Python and the JVM; `round`, which Spark rounds on
the decimal text of a double, Python on its exact binary value; the user's own helpers,
`udflow.helper_calls`) no longer sends the whole operator to Python: everything else
runs as Spark expressions, and each such call, its arguments included, is an Arrow
scalar UDF over the columns it reads that computes the term as `expr.evaluate` does, by
Python's own operations. Its value and its errors are Python's, None included
(`None.lower()` raises AttributeError), and the data crosses to Python once, as it would
for the call alone (`s.strip()` in Python costs less than the JVM's regular expression
for Python's whitespace).

Spark evaluates a Python UDF on every row that reaches the operator, also where the
row takes another branch of a CASE. So the UDF never raises: it gives struct<ok, value,
error> (the error as Python words it, base64), and the term raises that error, marked as
every error of the user's function (`NativeLowering.raised`), only where the model
evaluates the call. A value a column cannot hold (an int past 64 bits) is an error too,
as everywhere in the native forms.

Each distinct term is one column, added below the projection that reads it
(`with_calls`) and computed once per row, however many guards and fields read it; its
UDF is nondeterministic, or Catalyst would copy it into every expression that reads the
column and run it once for each. A helper's result is typed by the values it returns on
the driver's sample of the operator's input (`helper_family`).

Where: a Map's or a filter's cases (`native_ops.run`), an explosion's source (run
before the split, once per record; or the list whose items it explodes, `lower_items`),
and the terms over a Reduce's aggregates
(`native_groups.run_reduce`). Not inside an aggregate's argument, where the call would
sit inside Spark's own aggregate functions, nor over an explosion's pieces, where each
piece would cross to Python once per call: measured slower than the whole function in
Python (`engine.steps.python_only_calls`).
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from typing import Callable, Optional

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from udflow.expr import Field, Lit, evaluate
from udflow.expr_functions import (
    FUNCTIONS,
    MATH_BINARY,
    MATH_FUNCTIONS,
    MATH_INTEGRAL,
    MATH_TESTS,
    NUMPY_FUNCTIONS,
)
from udflow.caught import Caught
from udflow.helper_calls import HelperCall
from udflow.pieces import Pieces
from udflow.spark_backend.arrow_calls import (HELPER_FAMILIES, items_of, naive, of_record, of_type, on_flagged_rows,
                                             over_arrays, raising_lines)
from udflow.spark_backend.memo import remembered, select_expr
from udflow.spark_backend import native_spans
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import case, ident

# numpy's functions of more values whose value is an np.float64 (a float): a float among the
# arguments (np.maximum of two ints is numpy's int64, which stays Python)
NUMPY_FLOATS = {
    "maximum": [("float", "float"), ("float", "int"), ("int", "float")],
    "minimum": [("float", "float"), ("float", "int"), ("int", "float")],
    "clip": [("float", a, b) for a in ("float", "int") for b in ("float", "int")],
    "round": [("float",), ("float", "int")],
    "float64": [("float",), ("int",)],
}
FORMATTED = ("int", "float", "str", "bool", "decimal", "date", "datetime")  # what format() and repr() take
NULLABLE = ("re.group",)  # the calls whose value may be None (the others' never is)
# call -> (argument families -> result family): the forms whose result has one type
RESULTS = {
    "str": {("float",): "str", ("date",): "str"},  # repr of a float; isoformat of a date
    "date.isoformat": {("date",): "str", ("datetime",): "str"},
    "str.lower": {("str",): "str"},
    "str.upper": {("str",): "str"},
    # strip(chars): the native forms strip whitespace only
    **{f"str.{name}": {("str", "str"): "str"} for name in ("strip", "lstrip", "rstrip")},
    "round": {("float",): "int", ("int",): "int", ("float", "int"): "float", ("int", "int"): "int"},
    # math: Java's and C's libraries may differ in the last bit, so Python computes these
    # (sqrt, fabs, floor and ceil are exact in both: native, `native_math`; their rows here
    # are for argument types the native forms do not take)
    **{f"math.{name}": {("float",): "float", ("int",): "float"} for name in MATH_FUNCTIONS
       if name not in MATH_INTEGRAL + MATH_TESTS},
    **{f"math.{name}": {("float",): "int", ("int",): "int"} for name in MATH_INTEGRAL},
    **{f"math.{name}": {("float",): "bool", ("int",): "bool"} for name in MATH_TESTS},
    **{f"math.{name}": {(a, b): "float" for a in ("float", "int") for b in ("float", "int")}
       for name in MATH_BINARY if name != "gcd"},
    "math.gcd": {("int", "int"): "int"},
    # the str methods' forms `native_strings` does not take (a computed argument, a count)
    "str.replace": {("str", "str", "str"): "str", ("str", "str", "str", "int"): "str"},
    "str.zfill": {("str", "int"): "str"},
    "str.find": {("str", "str"): "int", ("str", "str", "int"): "int", ("str", "str", "int", "int"): "int"},
    "str.title": {("str",): "str"},  # Python's Unicode title case, not Spark's initcap
    # Unicode's tables: Python's on the rows beyond ASCII (`native_case`)
    **{f"str.{name}": {("str",): "str"} for name in ("casefold", "swapcase")},
    **{f"str.{name}": {("str",): "bool"} for name in ("isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum",
                                                     "isspace", "isupper", "islower")},
    "str.capitalize": {("str",): "str"},
    "chars.keep": {("str",): "str"},
    # a group of a match: its text, or None where the group took no part (`NULLABLE`)
    "re.group": {("str", "str", "str", "int"): "str", ("str", "str", "str", "str"): "str"},  # its receiver's family: its tests are constants (`native_case`)
    "date.strftime": {("date", "str"): "str", ("datetime", "str"): "str"},  # C's strftime, not Java's
    "datetime.strptime": {("str", "str"): "datetime"},  # naive only (`CHECKS`)
    "datetime.date.fromisoformat": {("str",): "date"},
    # an f-string's replacement fields with a spec or a conversion (`analysis.format_terms`)
    "format": {(family, "str"): "str" for family in FORMATTED},
    "repr": {(family,): "str" for family in FORMATTED},
    "ascii": {(family,): "str" for family in FORMATTED},
    # Python's `re` (Java's regular expressions read a pattern otherwise: `\d` is 0-9 there)
    "re.sub": {("str", "str", "str"): "str"},
    "unicodedata.normalize": {("str", "str"): "str"},  # Python's Unicode database, not the JVM's
    "re.matched": {("str", "str", "str"): "bool"},
    # a text's rows without a strict spelling (`native_parse`): Python's parse, or its ValueError
    "float": {("str",): "float"},
    "int": {("str",): "int", ("str", "int"): "int"},  # on the rows whose text is short (`BOUNDED`)
    # numpy's own value (np.float64: a float) of an int or a float; abs and sign of an int give
    # numpy's int64, not an int, and stay Python
    **{f"numpy.{name}": {("float",): "float", ("int",): "float"} for name in NUMPY_FUNCTIONS
       if name not in ("abs", "sign")},
    **{f"numpy.{name}": {families: "float" for families in NUMPY_FLOATS[name]} for name in NUMPY_FLOATS},
    "numpy.abs": {("float",): "float"},
    "numpy.sign": {("float",): "float"},
}



# calls whose Python value fits their column only on the rows the caller bounds (`only_where`):
# int() of a text of any length may pass 64 bits (`native_parse`)
BOUNDED = {"int": "int() of a text, whose value may pass 64 bits, on rows no bound keeps short"}
CHECKS = {"datetime.strptime": naive}  # a call's value made its column's, or an error
RESULTS["math.log"] = {**RESULTS["math.log"], **{(a, b): "float" for a in ("float", "int") for b in ("float", "int")}}
# what Spark makes of a from_spark UDF's value: the declared type's family, whatever went in
RESULTS.update({name: {(family,): {"double": "float", "bigint": "int", "int": "int", "string": "str",
                                   "boolean": "bool"}[name.split(".")[2]]
                       for family in ("int", "float", "str", "bool", "decimal", "date", "datetime")}
                for name in FUNCTIONS if name.startswith("spark.")})
SPARK_TYPES = {"str": StringType(), "int": LongType(), "float": DoubleType(), "bool": BooleanType(),
               "date": DateType(), "datetime": TimestampNTZType()}
ARROW_TYPES = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
               "date": pa.date32(), "datetime": pa.timestamp("us")}
LIST = "list:"  # a Python term's result of a list of one family, "list:str" (an explosion's pieces)
COLUMN = "__udflow_py"  # the prefix of a Python term's column: __udflow_py0, __udflow_py1, ...


class PythonCalls:
    """The Python calls of one native lowering, each an Arrow UDF registered with `session`
    under a name that says what it runs (the same call on the same types: the same UDF)."""

    def __init__(self, session: SparkSession):
        self.session = session
        self.columns: dict = {}  # a term -> the column that computes it, once
        self.pending: list[tuple[str, str]] = []  # (column, call) not yet added to a frame

    def with_calls(self, df: DataFrame) -> DataFrame:
        """`df` with the calls lowered since the last time as columns (`__udflow_py<n>`): Spark
        runs each distinct call once per row, in one Python pass, however many terms use it.
        Each reads only the input's columns (a call's arguments are part of its term). The
        caller selects its own columns above, which drops these."""
        if self.pending:
            df = select_expr(df, ["*"] + [f"{call} AS {ident(column)}" for column, call in self.pending])
            self.pending = []
        return df

    def mark(self) -> int:
        """Where the calls lowered from now on start (`rewind`)."""
        return len(self.pending)

    def rewind(self, mark: int) -> None:
        """Forget the calls lowered since `mark`, not yet added to a frame: a call's arguments
        lowered only for their types (the call computes them itself) add no column."""
        dropped = {column for column, _ in self.pending[mark:]}
        self.columns = {term: column for term, column in self.columns.items() if column not in dropped}
        self.pending = self.pending[:mark]

    def lower(self, low, call, args: list[Typed], only_where: Optional[str] = None) -> Typed:
        """The call (`expr.Call`), its arguments included, as a term of `low` (a
        `NativeLowering`): its value, or Python's error. `args`: the arguments lowered, for
        their types. `only_where`: SQL over the term's columns true on the rows that read it
        (elsewhere Python skips the row and its value is None: the caller reads it there only)."""
        families = tuple(a.family for a in args)
        result = RESULTS.get(call.name, {}).get(families)
        if result is None:
            raise NotNative(f"{call.name} on {', '.join(families)} has no native form")
        if call.name in BOUNDED and only_where is None:
            raise NotNative(BOUNDED[call.name])
        if call.name == "round" and len(args) == 2 and args[1].nullable:
            raise NotNative("round(x, n) with n maybe None (round(x, None) is an int)")
        typed = self._term(low, call, result, CHECKS.get(call.name), nullable=call.name in NULLABLE,
                           only_where=only_where)
        if call.name == "round" and len(args) == 1 and args[0].family in ("int", "float"):
            # round(x) of a float past 2**63: Python's int, which its column cannot hold (the UDF
            # raises OverflowError there): a limit of the native form, held where x is bounded
            span = args[0].span if args[0].family == "int" else native_spans.to_int(args[0].span)
            limit = native_spans.fits_long(span)
            if args[0].family == "float" and not limit.never:
                low.limits.append(limit)
            typed = dataclasses.replace(typed, span=span)
        return typed

    def lower_helper(self, low, call) -> Typed:
        """A call of the user's helper (`udflow.helper_calls.HelperCall`) as Python in the plan,
        typed by the sample (`lower_sampled`)."""
        return self.lower_sampled(low, call, f"a call of your helper {call.name}", call.name)

    def native_below(self, term, text: str) -> str:
        """A native term's SQL `text` (over input columns, raising nothing) as a column added
        with the calls (`with_calls`), computed once per row: for a term one expression reads
        many times (a strict parse's text, `native_caught`), where Spark shares no part of
        an expression that holds a raising branch."""
        key = ("native", term)
        column = self.columns.get(key)
        if column is None:
            column = self.columns[key] = f"{COLUMN}{len(self.columns)}"
            self.pending.append((column, text))
        return ident(column)

    def lower_sampled(self, low, term, what: str, name: Optional[str] = None) -> Typed:
        """A term Python computes whole in the plan (a helper's call, a `try` statement), its
        result's type the one it has on the input records sampled on the driver; `what` names
        it in the reasons, `name` (default `what`) in the error of a value of another type.
        The session remembers the type per term and sample: the model may read the term in
        several places, each collect lowers it again, and typing runs it on every record of
        the sample."""
        sample = low.sample  # kept alive by the entry, so no other sample takes its id
        _, result = remembered(self.session, "helper_families", (term, id(sample)),
                               lambda: (sample, _family_or_reason(term, sample, what)))
        if isinstance(result, NotNative):
            raise result
        return self._term(low, term, result, of_type(name or what, result), nullable=True)

    def lower_term(self, low, term, result: str, only_where: Optional[str] = None) -> Typed:
        """`term` as Python in the plan, its value checked to be None or of the family `result`."""
        return self._term(low, term, result, of_type(str(term), result), nullable=True, only_where=only_where)

    def lower_items(self, low, term) -> Typed:
        """The items of `term`'s value as Python's `for` takes them (an explosion's source), as
        an array column computed by Python (`items_of`): never None, since iterating None
        raises. Its items' type is the one they have on the sampled input records."""
        sample = low.sample
        _, family = remembered(self.session, "helper_families", (("items", term), id(sample)),
                               lambda: (sample, _items_or_reason(term, sample)))
        if isinstance(family, NotNative):
            raise family
        return self._term(low, term, LIST + family, items_of(family), nullable=False)

    def _term(self, low, term, result: str, check, nullable: bool, only_where: Optional[str] = None) -> Typed:
        """The term computed by Python from the columns it reads (one column per distinct term,
        `with_calls`), and read where the model evaluates it: a column whose reading raises
        (an aggregate's own errors, `NativeLowering.checked`) raises first. With `only_where`,
        the UDF is handed the term's columns on those rows only (nulls elsewhere, which cross
        to Python at almost no cost) and a flag that says which rows to run."""
        names = sorted(term.fields())
        missing = [n for n in names if n not in low.fields]
        if missing:
            raise NotNative(f"{term} reads {', '.join(missing)}, not a column here")
        if only_where is not None and not names:
            raise NotNative(f"{term} reads no column to compute on some rows only")
        key = term if only_where is None else (term, only_where)
        column = self.columns.get(key)
        if column is None:
            column = self.columns[key] = f"{COLUMN}{len(self.columns)}"
            function = self._function(low, term, names, check, result, only_where is not None)
            # a term of no field still needs a column to run once per row: a constant one
            inputs = [ident(n) for n in names] or ["TRUE"]
            if only_where is not None:
                flag = f"coalesce({only_where}, FALSE)"
                inputs = [flag] + [f"CASE WHEN {flag} THEN {n} END" for n in inputs]
            self.pending.append((column, f"{function}({', '.join(inputs)})"))
        c = ident(column)
        if term in low.computed:  # every row here computed it without raising: its value is all
            return Typed(f"{c}.value", result, nullable)
        first = [(f"((hash({low.lower(Field(n)).sql}) & 0) = 1)", "NULL") for n in names if low.checked.get(n)]
        raised = low.raised(f"{c}.error", with_line=not isinstance(term, Pieces))  # a list's error names its line
        value = case(first + [(f"(NOT {c}.ok)", raised)], f"{c}.value")
        return Typed(value, result, nullable)

    def _function(self, low, term, names: list, check, result: str, flagged: bool = False) -> str:
        """The name of the Arrow UDF computing `term` (on the rows its first argument flags,
        where `flagged`), registered once per session: creating one pickles it and makes a
        dozen round trips to the JVM. Not a term that calls a helper: pickling reads the
        helper's globals as they are now, so each lowering registers it afresh."""
        def register() -> str:
            sql_name = f"__udflow_term_{uuid.uuid4().hex[:16]}"
            lines = raising_lines(term, names) if isinstance(term, Pieces) else None
            run = of_record(term, names, check)
            if flagged:
                run = on_flagged_rows(run)
            self._register(sql_name, over_arrays(run, arrow_type(result), lines), result)
            return sql_name

        if any(isinstance(t, HelperCall) for t in term.walk()):
            return register()
        # a list's lines are not part of its equality, but are of its function's errors
        lines = (term.line, term.lines) if isinstance(term, Pieces) else None
        return remembered(self.session, "term_functions", (term, result, lines, flagged), register)

    def _register(self, sql_name: str, udf: Callable, result: str) -> None:
        returned = StructType([StructField("ok", BooleanType(), False), StructField("value", spark_type(result)),
                               StructField("error", StringType())])
        # nondeterministic, so that Catalyst keeps each call in its own column, computed once per
        # row (a deterministic one it copies into every expression that reads the column)
        self.session.udf.register(sql_name, F.arrow_udf(udf, returned).asNondeterministic())


def spark_type(result: str):
    """The Spark type of a Python term's value: a family's, or an array of one (`LIST`)."""
    if result.startswith(LIST):
        return ArrayType(SPARK_TYPES[result[len(LIST):]])
    return SPARK_TYPES[result]


def arrow_type(result: str) -> pa.DataType:
    if result.startswith(LIST):
        return pa.list_(ARROW_TYPES[result[len(LIST):]])
    return ARROW_TYPES[result]


def _items_or_reason(term, sample: tuple):
    """The one family of the items of `term`'s values on the sampled records (None aside), or
    the NotNative saying why there is none."""
    seen = set()
    for record in sample:
        try:
            items = list(evaluate(term, record))
        except Exception:  # noqa: BLE001 - an error (None is not iterable) is not a type: raised where Python does
            continue
        seen |= {_kind(x) for x in items if x is not None}
    try:
        return _one_family(seen, f"no sampled record gives {term} an item of a type", f"the items of {term} are")
    except NotNative as reason:
        return reason


def _kind(value):
    """A value's exact type; "aware" for a datetime with a zone (no column holds it unchanged)."""
    return type(value) if not isinstance(value, datetime.datetime) or value.tzinfo is None else "aware"


def _one_family(seen: set, nothing: str, several: str) -> str:
    """The one family of the exact types `seen` (`_kind`); NotNative saying `nothing` where
    none was seen, and `several` with the types where they are several or one no column
    holds unchanged."""
    families = {HELPER_FAMILIES.get(t) for t in seen}
    if not seen:
        raise NotNative(nothing)
    if len(families) != 1 or None in families:
        kinds = ", ".join(sorted(t if isinstance(t, str) else t.__name__ for t in seen))
        raise NotNative(f"{several} {kinds} on the sampled records")
    return families.pop()


def _family_or_reason(call, sample: tuple, what: str):
    """`helper_family`, or the NotNative it raises."""
    try:
        return helper_family(call, sample, what)
    except NotNative as reason:
        return reason


def helper_family(call, sample: tuple, what: str) -> str:
    """The one family of the helper's results on the sampled input records (None aside), or
    NotNative where they have none or several, or one no column holds unchanged. A `try`
    statement's constant fallback counts as a result (it is one wherever the body raises)."""
    seen = set()
    if isinstance(call, Caught) and isinstance(call.fallback, Lit) and call.fallback.value is not None:
        seen.add(_kind(call.fallback.value))
    for record in sample:
        try:
            value = evaluate(call, record)
        except Exception:  # noqa: BLE001 - an error is not a type: the plan raises it where Python does
            continue
        if value is not None:
            seen.add(_kind(value))
    return _one_family(seen, f"{what}: no sampled record gives it a value of a type", f"{what} returns")


