"""Bitwise operators, and bools as numbers, run natively with Python's semantics (issue 29, item 3).

Whole user functions, run by the reference interpreter and natively on Spark, over
hand-picked edges: 0, -1, 2**62, 2**63 - 1, -2**63, shift counts 0, 63, 64, 70 and -1,
True/False and None. Values and their types agree; where Python raises, the native plan
raises the same error in the same words; where Python's int leaves 64 bits (`1 << 70`),
the native plan raises as every int operation does (docs/native.md), as the Python path
on Spark does too (a long column cannot hold the value).
"""

from __future__ import annotations

import itertools
import math
from decimal import Decimal

import pytest

import udflow as uf
from udflow.bits import Bits
from udflow.errors import UdfRuntimeError
from udflow.expr import Field, Lit
from udflow.plan import Source
from udflow.spark_backend.lower import Lowering
from udflow.spark_backend.native import NativeLowering, NotNative
from tests.frames import jvm_frame

pytestmark = pytest.mark.spark

SCHEMA = "id long, a long, n long, b boolean, c boolean, f double, d decimal(10,2)"
EDGES = [0, -1, 1, 5, -5, 2**62, 2**63 - 1, -(2**63)]
COUNTS = [0, 1, 3, 62, 63, 64, 70]
FLOATS = [0.5, -2.0, math.nan, 0.0]
HALF = 2**62  # a constant the analysis folds in (a `**` in the function has no native form)
ROWS = [(k, a, n, k % 2 == 0, k % 3 == 0, FLOATS[k % 4], Decimal(k) / 4)
        for k, (a, n) in enumerate(itertools.product(EDGES, COUNTS))]


def masks(r):
    return {**r, "and": r["a"] & r["n"], "or": r["a"] | 255, "xor": r["a"] ^ -1, "inv": ~r["a"],
            "shr": r["a"] >> r["n"], "shr_neg": -r["n"] >> 1, "both": r["b"] & r["c"], "either": r["b"] | r["c"],
            "one": r["b"] ^ r["c"], "mixed": r["b"] & r["a"], "inv_bool": ~r["b"],
            "bool_shl": r["b"] << r["n"] if r["n"] < 63 else 0, "count_bool": r["n"] >> r["c"]}


def small(r):
    return -8 < r["a"] < 8 and r["n"] < 60 or r["a"] == 0


def shifted_left(r):
    return {**r, "shl": r["a"] << r["n"], "sign": r["a"] << 63 if r["a"] == 0 or r["a"] == -1 else None}


def bools_as_numbers(r):
    return {**r, "sum": r["b"] + r["c"], "mul": 1.5 * r["b"], "div": r["b"] / True, "fdiv": r["c"] // True,
            "mod": r["n"] % True, "eq1": r["b"] == 1, "eq0": r["c"] == 0.0, "lt": r["b"] < 2, "ord": r["b"] > r["c"],
            "chain": r["a"] > 0 == False, "truth": (r["a"] > 0) == True, "neg": -r["b"],
            "scaled": r["a"] * r["b"] if -HALF < r["a"] < HALF else 0, "dec": r["d"] + r["b"],
            "nan": r["f"] < r["b"], "nan_eq": r["f"] == r["c"]}


def odd(r):
    return r["a"] & 1 == 1  # r["a"] & (1 == 1): an int and a bool


def bit_three(r):
    return r["a"] >> 3 & 1


def counted(rows):
    rows = list(rows)
    yield {"b": rows[0]["b"], "n": sum(r["c"] for r in rows), "plus": sum(r["c"] + 1 for r in rows),
           "bits": max(r["a"] & 7 for r in rows)}


def _records(rows: list) -> list:
    return sorted(tuple(sorted((k, type(v).__name__, repr(v)) for k, v in r.items())) for r in rows)


def _native(spark, flow) -> None:
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    labels = {n.label for n in flow.root.walk() if not isinstance(n, Source)}
    assert labels <= lowering.native_labels, (labels - lowering.native_labels, lowering.python_reasons)


@pytest.fixture(scope="module")
def table(spark):
    return uf.source("t", dataframe=jvm_frame(spark, ROWS, SCHEMA))


@pytest.mark.parametrize("build", [
    lambda t: t.map(masks),
    lambda t: t.filter(small).map(shifted_left),
    lambda t: t.map(bools_as_numbers),
    lambda t: t.filter(odd),
    lambda t: t.filter(bit_three),
    lambda t: t.reduce(["b"], counted),
], ids=["masks", "shifted_left", "bools_as_numbers", "odd", "bit_three", "counted"])
def test_native_values_and_types_are_pythons(spark, table, build):
    flow = build(table)
    _native(spark, flow)
    expected = flow.collect(engine="reference")
    assert expected
    assert _records(flow.collect(spark=spark)) == _records(expected)


# -- errors: one record each, where Python raises ------------------------------------------------


def and_(r):
    return {**r, "x": r["a"] & r["n"]}


def inverted(r):
    return {**r, "x": ~r["a"]}


def left(r):
    return {**r, "x": r["a"] << r["n"]}


def right(r):
    return {**r, "x": r["a"] >> r["n"]}


def both(r):
    return {**r, "x": r["b"] & r["c"]}


def shift_is_none(r):
    return {**r, "x": (r["a"] >> r["n"]) is None}  # the shift raises before `is` is asked


def plus_one(r):
    return {**r, "x": r["b"] + 1}


def below_two(r):
    return r["b"] < 2


def over(r):
    return {**r, "x": r["a"] / r["c"]}


def floor_over(r):
    return {**r, "x": r["b"] // r["c"]}


def float_over(r):
    return {**r, "x": r["f"] / r["c"]}


def or_raising_right(r):
    return {**r, "x": (r["a"] >= False) | (1 > r["c"])}  # Python computes both sides of |


def and_raising_right(r):
    return {**r, "x": (r["a"] < 0) & (1 > r["c"])}


ERRORS = [  # (function, a, n, b, c, f): Python's error, natively in the same words
    (or_raising_right, 7, 1, True, None, 0.5),  # the left side decides OR, not Python's |
    (and_raising_right, 7, 1, True, None, 0.5),  # ... nor AND, for &
    (and_, None, 3, True, True, 0.5),
    (inverted, None, 3, True, True, 0.5),
    (left, 1, -1, True, True, 0.5),
    (right, -5, -1, True, True, 0.5),
    (left, None, -1, True, True, 0.5),  # TypeError before ValueError, as Python checks types first
    (shift_is_none, 7, -1, True, True, 0.5),  # `is None` of a term that raises: not folded to False
    (both, 1, 1, True, None, 0.5),
    (plus_one, 1, 1, None, True, 0.5),
    (below_two, 1, 1, None, True, 0.5),
    (over, 7, 1, True, False, 0.5),
    (floor_over, 7, 1, True, False, 0.5),
    (float_over, 7, 1, True, False, 0.5),
]


def _error(flow, **kw) -> str:
    with pytest.raises(UdfRuntimeError) as caught:
        flow.collect(**kw)
    return str(caught.value).split(" raised ", 1)[1].split(" (line ")[0]


@pytest.mark.parametrize("fn,a,n,b,c,f", ERRORS, ids=[f"{e[0].__name__}-{i}" for i, e in enumerate(ERRORS)])
def test_native_errors_are_pythons(spark, fn, a, n, b, c, f):
    frame = jvm_frame(spark, [(0, a, n, b, c, f, Decimal(1))], SCHEMA)
    flow = uf.source("t", dataframe=frame)
    flow = flow.filter(fn) if fn is below_two else flow.map(fn)
    _native(spark, flow)
    assert _error(flow, spark=spark) == _error(flow, engine="reference")


@pytest.mark.parametrize("a,n", [(1, 64), (1, 70), (3, 62), (2**62, 1), (-(2**63), 1), (2**63 - 1, 1), (-1, 64)])
def test_a_left_shift_past_64_bits_is_refused_by_name_on_both_spark_paths(spark, a, n):
    """Python's int holds 2**70; a long column cannot. The native form sends the row, where
    `a << n` leaves 64 bits, to the function in Python (`general_case`), whose value no
    column holds: both Spark paths refuse it, naming the field."""
    frame = jvm_frame(spark, [(0, a, n, True, True, 0.5, Decimal(1))], SCHEMA)
    flow = uf.source("t", dataframe=frame).map(left)
    assert not -(2**63) <= flow.collect(engine="reference")[0]["x"] < 2**63
    for native in (True, False):
        with pytest.raises(UdfRuntimeError, match="'x'.*does not fit|x=.*does not fit"):
            flow.collect(spark=spark, native=native)


def test_a_float_operand_stays_python_and_raises_pythons_type_error(spark):
    frame = jvm_frame(spark, [(0, 1, 1, True, True, 0.5, Decimal(1))], SCHEMA)
    flow = uf.source("t", dataframe=frame).map(lambda r: {**r, "x": r["f"] & 1})
    with pytest.raises(NotNative, match="& on float and int"):  # its lowering; Python runs the Map
        NativeLowering(frame.schema, "f").lower(Bits("&", Field("f"), Lit(1)))
    words = "TypeError: unsupported operand type(s) for &: 'float' and 'int'"
    assert _error(flow, spark=spark) == _error(flow, engine="reference") == words


def test_a_merge_of_two_records_is_still_a_dict_merge():
    """`r | {...}` is a new dict, not a bitwise or: no term for it (the analysis's dict model)."""
    props = uf.analyze(lambda r: r | {"x": 1}, ["a"])
    assert props.model is None or "|" not in str(props.model)
    assert "x" in props.writes
